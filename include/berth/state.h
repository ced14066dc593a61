// What berth keeps about a container between calls (state.json in its directory under
// --root), and the OCI state derived from it (`berth state`, `list`, hooks' stdin).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace berth {

enum class ContainerStatus { kCreating, kCreated, kRunning, kPaused, kStopped };
const char* status_name(ContainerStatus s);

// Persisted by berth; written before the effect it describes so that `delete --force`
// can always finish what a killed berth started.
struct ContainerRecord {
  std::string oci_version;  // of the config
  std::string id;
  int pid = 0;                    // init, 0 while creating
  uint64_t pid_start_time = 0;    // /proc/<pid>/stat starttime: a reused pid is not ours
  std::string bundle;             // absolute
  std::string rootfs;             // absolute
  std::string created;            // RFC 3339 with nanoseconds
  std::string owner;              // user name of the creator ("" for root, as runc)
  std::map<std::string, std::string> annotations;
  // Where the container lives on the host, for exec/kill/pause/delete.
  std::map<std::string, std::string> cgroup_paths;  // controller ("" for v2) -> absolute dir
  bool cgroup_created = false;   // berth made the cgroup (so delete removes it)
  std::vector<std::string> new_namespaces;  // types berth created (exec joins these)
  bool systemd_cgroup = false;
  bool rootless = false;
  bool operator==(const ContainerRecord&) const = default;
};

// The runtime-spec state (what `berth state` prints).
struct OciState {
  std::string oci_version;
  std::string id;
  std::string status;
  int pid = 0;
  std::string bundle;
  std::string rootfs;
  std::string created;
  std::string owner;
  std::map<std::string, std::string> annotations;
};

}  // namespace berth
