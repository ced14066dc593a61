// The list of device modules consulted by create (see device_modules.h). Modules are added
// here as they land.
#include "container/device_modules.h"

namespace berth::container {

Result<devices::Edits> collect_device_edits(const spec::Spec&, bool) { return devices::Edits{}; }

}  // namespace berth::container
