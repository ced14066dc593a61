// libFuzzer target: linux.sysctl keys (CVE-2022-0811 class). The first byte picks which
// namespaces the container has (ipc, uts, net); the rest is the key. Whatever
// validate_sysctls accepts must resolve, under /proc/sys, to a path whose every component
// is a plain name (no empty, "." or ".."), that lies under the subtree its namespace owns
// (net/ with a network namespace, fs/mqueue/ or an ipc kernel key with an ipc namespace,
// kernel/domainname with a uts namespace), and that write_sysctls would open as is.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "linux/sysctl.h"
#include "util/strings.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

bool ipc_key(const std::string& path) {
  for (const char* k : {"kernel/msgmax", "kernel/msgmnb", "kernel/msgmni", "kernel/sem", "kernel/shmall",
                        "kernel/shmmax", "kernel/shmmni", "kernel/shm_rmid_forced"})
    if (path == k) return true;
  return berth::str::starts_with(path, "fs/mqueue/");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace berth;
  if (size < 1) return 0;
  bool ipc = data[0] & 1, uts = data[0] & 2, net = data[0] & 4;
  std::string key(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto path = linux::sysctl_checked_path(key);
  if (!linux::validate_sysctls({{key, "1"}}, ipc, uts, net)) return 0;
  check(path.ok());
  check(*path == linux::sysctl_path(key));
  for (const auto& comp : str::split(*path, '/')) check(!comp.empty() && comp != "." && comp != "..");
  for (const auto& comp : str::split(linux::sysctl_dotted(key), '.')) check(!comp.empty());
  bool allowed = (net && str::starts_with(*path, "net/")) || (ipc && ipc_key(*path)) ||
                 (uts && *path == "kernel/domainname");
  check(allowed);
  return 0;
}
