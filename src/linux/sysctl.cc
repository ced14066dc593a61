// linux.sysctl (see sysctl.h).
#include "linux/sysctl.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/sys.h"
#include "util/file.h"
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

}  // namespace

Status validate_sysctls(const std::map<std::string, std::string>& sysctl, bool new_ipc, bool new_uts, bool new_net) {
  for (const auto& [key, _] : sysctl) {
    std::string k = key;
    for (auto& c : k)
      if (c == '/') c = '.';
    if (ipc_sysctl(k)) {
      if (!new_ipc) return Error::invalid_spec("linux.sysctl: sysctl \"" + key + "\" is not allowed in the hosts ipc namespace");
    } else if (str::starts_with(k, "net.")) {
      if (!new_net) return Error::invalid_spec("linux.sysctl: sysctl \"" + key + "\" not allowed in host network namespace");
    } else if (k == "kernel.hostname" || k == "kernel.domainname") {
      if (!new_uts) return Error::invalid_spec("linux.sysctl: sysctl \"" + key + "\" is not allowed as it conflicts with the OCI \"hostname\" field");
    } else {
      return Error::invalid_spec("linux.sysctl: sysctl \"" + key + "\" is not in a separate kernel namespace");
    }
  }
  return ok();
}

Status write_sysctls(const std::map<std::string, std::string>& sysctl) {
  Sys& sys = real_sys();
  BERTH_ASSIGN(UniqueFd fs, sys.fsopen("proc", 0));
  BERTH_TRY(sys.fsconfig(fs.get(), FSCONFIG_CMD_CREATE, "", ""));
  BERTH_ASSIGN(UniqueFd mnt, sys.fsmount(fs.get(), 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
  for (const auto& [key, value] : sysctl) {
    std::string rel = "sys/" + key;
    for (size_t i = 4; i < rel.size(); ++i)
      if (rel[i] == '.') rel[i] = '/';
    BERTH_ASSIGN(UniqueFd f, sys.openat2(mnt.get(), rel, O_WRONLY, 0,
                                         RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH)
                                 .context("linux.sysctl " + key));
    BERTH_TRY(sys.write_fd(f.get(), value).context("linux.sysctl " + key));
  }
  return ok();
}

}  // namespace berth::linux
