// linux.sysctl (see sysctl.h): the key's form (no traversal out of its namespaced subtree:
// CVE-2022-0811 class), runc's validation (ipc keys need an ipc namespace, net keys a
// network namespace that is not the runtime's, kernel.domainname a uts namespace;
// kernel.hostname is the "hostname" field's), then one write per key beneath the
// sys/ directory of a private procfs instance.
#include "linux/sysctl.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "util/strings.h"

namespace berth::linux {
namespace {

constexpr uint64_t kStrict = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH;

// The longest key accepted: real ones are under 100 characters (an interface name is at
// most 15); the cap only keeps hostile input out of error texts and the kernel.
constexpr size_t kMaxKey = 512;

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

// Characters real keys need: names, digits, '_' and '-' (kernel.shm_rmid_forced,
// net.ipv4.conf.br-1.forwarding), both separators, and what interface names commonly carry
// ('@' and '+' too; '.' inside a name is '/' in the dotted form: eth0/100). Everything else,
// control characters, spaces and NUL included, is refused.
bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == '/' || c == '@' || c == '+';
}

// Why the key's form is refused, "" when it is well formed. The path under /proc/sys is
// what the kernel resolves: each of its components must be a plain name, so the file
// reached lies under the first components, whatever the prefix checks below concluded.
std::string form_problem(const std::string& key) {
  if (key.empty()) return "is empty";
  if (key.size() > kMaxKey) return "is longer than " + std::to_string(kMaxKey) + " characters";
  for (char c : key)
    if (!key_char(c)) return "has a character that is not allowed in a sysctl key";
  for (const auto& comp : str::split(sysctl_path(key), '/'))
    if (comp.empty() || comp == "." || comp == "..")
      return "has an empty, \".\" or \"..\" component in its path /proc/sys/" + sysctl_path(key);
  return "";
}

}  // namespace

std::string sysctl_dotted(const std::string& key) {
  size_t first = key.find_first_of("./");
  return first != std::string::npos && key[first] == '/' ? swap_separators(key) : key;
}

std::string sysctl_path(const std::string& key) { return swap_separators(sysctl_dotted(key)); }

Result<std::string> sysctl_checked_path(const std::string& key) {
  std::string problem = form_problem(key);
  if (!problem.empty()) return Error::invalid_spec("linux.sysctl: sysctl " + str::go_quote(key) + " " + problem);
  return sysctl_path(key);
}

Status validate_sysctls(const std::map<std::string, std::string>& sysctl, bool new_ipc, bool new_uts, bool new_net) {
  for (const auto& [key, _] : sysctl) {
    BERTH_TRY(sysctl_checked_path(key));
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

Result<bool> private_network(const NamespacePlan& ns) {
  if (ns.creates(CLONE_NEWNET)) return true;
  for (const auto& j : ns.joins) {
    if (j.flag != CLONE_NEWNET) continue;
    // runc's isHostNetNS: "host" is the runtime's own network namespace, whatever the path.
    struct stat joined {}, own {};
    if (::fstat(j.fd.get(), &joined) < 0) return Error::sys(errno, "invalid netns path: fstat");
    if (::stat("/proc/self/ns/net", &own) < 0) return Error::sys(errno, "invalid netns path: stat /proc/self/ns/net");
    return joined.st_dev != own.st_dev || joined.st_ino != own.st_ino;
  }
  return false;
}

Status write_sysctls(Sys& sys, const std::map<std::string, std::string>& sysctl) {
  if (sysctl.empty()) return ok();
  // A private instance, never the container's /proc, which it could have covered or
  // redirected (CVE-2025-52881); every key resolves beneath its sys/ directory.
  BERTH_ASSIGN(UniqueFd fs, sys.fsopen("proc", 0));
  BERTH_TRY(sys.fsconfig(fs.get(), FSCONFIG_CMD_CREATE, "", ""));
  BERTH_ASSIGN(UniqueFd mnt, sys.fsmount(fs.get(), 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
  BERTH_ASSIGN(UniqueFd dir, sys.openat2(mnt.get(), "sys", O_PATH | O_DIRECTORY, 0, kStrict).context("open /proc/sys"));
  for (const auto& [key, value] : sysctl) {
    std::string what = "write sysctl key " + sysctl_dotted(key);  // runc's wording
    // Checked again here: the init writes what it was given, whoever validated it.
    BERTH_ASSIGN(std::string path, sysctl_checked_path(key));
    BERTH_ASSIGN(UniqueFd f, sys.openat2(dir.get(), path, O_WRONLY | O_NOFOLLOW, 0, kStrict).context(what));
    BERTH_ASSIGN(struct statfs sfs, sys.fstatfs(f.get()).context(what));
    if (sfs.f_type != PROC_SUPER_MAGIC) return Error::generic(what + ": not a procfs file");
    BERTH_ASSIGN(struct stat st, sys.fstat(f.get()).context(what));
    if (!S_ISREG(st.st_mode)) return Error::generic(what + ": not a regular file");
    BERTH_TRY(sys.write_fd(f.get(), value).context(what));
  }
  return ok();
}

Status write_sysctls(const std::map<std::string, std::string>& sysctl) { return write_sysctls(real_sys(), sysctl); }

}  // namespace berth::linux
