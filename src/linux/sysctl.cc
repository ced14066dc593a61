// linux.sysctl (see sysctl.h): runc's validation (ipc keys need an ipc namespace, net keys a
// network namespace, kernel.domainname a uts namespace; kernel.hostname is the "hostname"
// field's), then one write per key through a private procfs instance.
#include "linux/sysctl.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>

#include "util/strings.h"

namespace berth::linux {
namespace {

bool ipc_sysctl(const std::string& k) {
  static const char* kIpc[] = {"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
                               "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced"};
  for (const char* n : kIpc)
    if (k == n) return true;
  return str::starts_with(k, "fs.mqueue.");
}

std::string swap_separators(std::string s) {
  for (auto& c : s) c = c == '.' ? '/' : c == '/' ? '.' : c;
  return s;
}

}  // namespace

std::string sysctl_dotted(const std::string& key) {
  size_t first = key.find_first_of("./");
  return first != std::string::npos && key[first] == '/' ? swap_separators(key) : key;
}

std::string sysctl_path(const std::string& key) { return swap_separators(sysctl_dotted(key)); }

Status validate_sysctls(const std::map<std::string, std::string>& sysctl, bool new_ipc, bool new_uts, bool new_net) {
  for (const auto& [key, _] : sysctl) {
    std::string k = sysctl_dotted(key);
    auto refuse = [&](const std::string& why) {
      return Error::invalid_spec("linux.sysctl: sysctl " + str::go_quote(k) + " " + why);
    };
    if (ipc_sysctl(k)) {
      if (!new_ipc) return refuse("is not allowed in the hosts ipc namespace");
      continue;
    }
    if (str::starts_with(k, "net.")) {
      if (!new_net) return refuse("not allowed in host network namespace");
      continue;
    }
    if (new_uts && k == "kernel.domainname") continue;
    if (new_uts && k == "kernel.hostname") return refuse("is not allowed as it conflicts with the OCI \"hostname\" field");
    return refuse("is not in a separate kernel namespace");
  }
  return ok();
}

Status write_sysctls(Sys& sys, const std::map<std::string, std::string>& sysctl) {
  if (sysctl.empty()) return ok();
  BERTH_ASSIGN(UniqueFd fs, sys.fsopen("proc", 0));
  BERTH_TRY(sys.fsconfig(fs.get(), FSCONFIG_CMD_CREATE, "", ""));
  BERTH_ASSIGN(UniqueFd mnt, sys.fsmount(fs.get(), 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
  constexpr uint64_t kStrict = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH;
  for (const auto& [key, value] : sysctl) {
    std::string what = "write sysctl key " + sysctl_dotted(key);
    BERTH_ASSIGN(UniqueFd f, sys.openat2(mnt.get(), "sys/" + sysctl_path(key), O_WRONLY, 0, kStrict).context(what));
    BERTH_TRY(sys.write_fd(f.get(), value).context(what));
  }
  return ok();
}

Status write_sysctls(const std::map<std::string, std::string>& sysctl) { return write_sysctls(real_sys(), sysctl); }

}  // namespace berth::linux
