// `berth features`: prints the OCI features document.
#include "cli/commands.h"
#include "container/features.h"
#include "util/file.h"

namespace berth::cli {

Result<int> cmd_features(Context&) {
  BERTH_TRY(file::write_all(1, container::features_json()));
  return 0;
}

}  // namespace berth::cli
