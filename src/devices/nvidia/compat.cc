// The CUDA forward-compatibility rule (see compat.h).
#include "devices/nvidia/compat.h"

#include <yajl/yajl_tree.h>

#include "devices/nvidia/require.h"
#include "util/json.h"
#include "util/strings.h"

namespace berth::devices::nvidia {
namespace {

unsigned major_of(const std::string& version) {
  return static_cast<unsigned>(str::parse_u64(version.substr(0, version.find('.'))).value_or(0));
}

}  // namespace

Result<CompatNote> parse_compat_note(const std::string& json) {
  BERTH_ASSIGN(json::Document doc, json::Document::parse(json, ".note.cuda.fwd_compatibility"));
  yajl_val root = doc.root();
  if (!YAJL_IS_OBJECT(root)) return Error::generic(".note.cuda.fwd_compatibility: not a JSON object");
  CompatNote n;
  const char* cuda_path[] = {"CUDA version", nullptr};
  const char* driver_path[] = {"driver", nullptr};
  yajl_val cuda = yajl_tree_get(root, cuda_path, yajl_t_string);
  yajl_val drivers = yajl_tree_get(root, driver_path, yajl_t_array);
  if (!cuda || !drivers) return Error::generic(".note.cuda.fwd_compatibility: no \"CUDA version\" or \"driver\"");
  n.cuda_version = YAJL_GET_STRING(cuda);
  for (size_t i = 0; i < drivers->u.array.len; ++i) {
    yajl_val d = drivers->u.array.values[i];
    if (YAJL_IS_INTEGER(d) && YAJL_GET_INTEGER(d) > 0) n.driver_branches.push_back(static_cast<unsigned>(YAJL_GET_INTEGER(d)));
    else if (YAJL_IS_STRING(d)) n.driver_branches.push_back(major_of(YAJL_GET_STRING(d)));
  }
  return n;
}

CompatDecision decide_compat(const std::string& host_driver, const std::string& host_cuda,
                             const std::string& compat_version, const std::optional<std::string>& note_json) {
  unsigned host_major = major_of(host_driver), compat_major = major_of(compat_version);
  if (!note_json) {
    if (compat_major > host_major)
      return {true, "compat libcuda " + compat_version + " is newer than the host driver " + host_driver + " (no note)"};
    return {false, "compat libcuda " + compat_version + " is not newer than the host driver " + host_driver + " (no note)"};
  }
  auto note = parse_compat_note(*note_json);
  if (!note) return {false, note.error().message()};
  bool listed = false;
  for (unsigned b : note->driver_branches) listed = listed || b == host_major;
  if (!listed) return {false, "compat libcuda " + compat_version + " does not support the host driver branch " + std::to_string(host_major)};
  if (!host_cuda.empty() && compare_versions(note->cuda_version, host_cuda) <= 0)
    return {false, "compat CUDA " + note->cuda_version + " is not newer than the host's CUDA " + host_cuda};
  return {true, "compat CUDA " + note->cuda_version + " supports the host driver branch " + std::to_string(host_major)};
}

}  // namespace berth::devices::nvidia
