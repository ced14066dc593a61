// Compound system operations behind Sys (see sys_ops.h): copy_tree (tmpcopyup: directory
// content into a fresh tmpfs, symlinks never followed), make_userns (a user namespace with
// the given maps, for MOUNT_ATTR_IDMAP), run_program (fexecve in a hardened child: clean env, no
// init fds, no_new_privs, few capabilities).
#include "linux/sys_ops.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "util/file.h"

namespace berth::linux::ops {
namespace {

constexpr int kMaxDepth = 128;

Status copy_file_data(int from, int to, off_t size) {
  while (size > 0) {
    ssize_t n = ::sendfile(to, from, nullptr, static_cast<size_t>(size));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::sys(errno, "copy data");
    }
    if (n == 0) break;  // the file shrank meanwhile
    size -= n;
  }
  return ok();
}

Status copy_entry(int from_dir, int to_dir, const char* name, int depth);

Status copy_dir(int from, int to, int depth) {
  if (depth > kMaxDepth) return Error::sys(ELOOP, "copy: directory tree too deep");
  int dup = ::fcntl(from, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return Error::sys(errno, "dup");
  DIR* d = ::fdopendir(dup);
  if (!d) {
    ::close(dup);
    return Error::sys(errno, "opendir");
  }
  Status st = ok();
  while (struct dirent* e = ::readdir(d)) {
    std::string_view n(e->d_name);
    if (n == "." || n == "..") continue;
    st = copy_entry(from, to, e->d_name, depth);
    if (!st) break;
  }
  ::closedir(d);
  return st;
}

// Mode and owner of the copy: as the original (the copy is made by root in the container).
Status copy_attrs(int to_dir, const char* name, const struct stat& st) {
  if (::fchownat(to_dir, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    return Error::sys(errno, std::string("chown ") + name);
  if (!S_ISLNK(st.st_mode) && ::fchmodat(to_dir, name, st.st_mode & 07777, 0) < 0)
    return Error::sys(errno, std::string("chmod ") + name);
  return ok();
}

Status copy_entry(int from_dir, int to_dir, const char* name, int depth) {
  struct stat st;
  if (::fstatat(from_dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return Error::sys(errno, std::string("stat ") + name);
  if (S_ISDIR(st.st_mode)) {
    if (::mkdirat(to_dir, name, 0700) < 0) return Error::sys(errno, std::string("mkdir ") + name);
    UniqueFd src(::openat(from_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    UniqueFd dst(::openat(to_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!src || !dst) return Error::sys(errno, std::string("open ") + name);
    BERTH_TRY(copy_dir(src.get(), dst.get(), depth + 1).context(name));
  } else if (S_ISREG(st.st_mode)) {
    UniqueFd src(::openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!src) return Error::sys(errno, std::string("open ") + name);
    UniqueFd dst(::openat(to_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!dst) return Error::sys(errno, std::string("create ") + name);
    BERTH_TRY(copy_file_data(src.get(), dst.get(), st.st_size).context(name));
  } else if (S_ISLNK(st.st_mode)) {
    std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlinkat(from_dir, name, target.data(), target.size());
    if (n < 0) return Error::sys(errno, std::string("readlink ") + name);
    target.resize(static_cast<size_t>(n));
    if (::symlinkat(target.c_str(), to_dir, name) < 0) return Error::sys(errno, std::string("symlink ") + name);
  } else {
    // Device nodes, fifos, sockets: recreate the node itself.
    if (::mknodat(to_dir, name, st.st_mode & (S_IFMT | 0600), st.st_rdev) < 0)
      return Error::sys(errno, std::string("mknod ") + name);
  }
  return copy_attrs(to_dir, name, st);
}

}  // namespace

Status copy_tree(int from_dirfd, int to_dirfd) {
  UniqueFd from(::openat(from_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  UniqueFd to(::openat(to_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!from || !to) return Error::sys(errno, "open directories to copy");
  return copy_dir(from.get(), to.get(), 0).context("tmpcopyup");
}

Result<UniqueFd> make_userns(const std::string& uid_map, const std::string& gid_map) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) < 0) return Error::sys(errno, "pipe");
  UniqueFd rd(pipefd[0]), wr(pipefd[1]);
  struct clone_args args {};
  args.flags = CLONE_NEWUSER;
  args.exit_signal = SIGCHLD;
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0) return Error::sys(errno, "clone3 (user namespace for an idmapped mount)");
  if (pid == 0) {
    // The child only holds the namespace until the parent has its fd: it waits for EOF.
    wr.reset();
    char c;
    while (::read(rd.get(), &c, 1) < 0 && errno == EINTR) {
    }
    ::_exit(0);
  }
  rd.reset();
  std::string base = "/proc/" + std::to_string(pid) + "/";
  Result<UniqueFd> out = Error::generic("make user namespace");
  Status st = file::write_existing(AT_FDCWD, base + "uid_map", uid_map);
  if (st) st = file::write_existing(AT_FDCWD, base + "gid_map", gid_map);
  if (st) {
    int fd = ::open((base + "ns/user").c_str(), O_RDONLY | O_CLOEXEC);
    out = fd < 0 ? Result<UniqueFd>(Error::sys(errno, "open " + base + "ns/user")) : Result<UniqueFd>(UniqueFd(fd));
  } else {
    out = std::move(st).error().context("write idmap");
  }
  wr.reset();  // the child reads EOF and exits
  while (::waitpid(static_cast<pid_t>(pid), nullptr, 0) < 0 && errno == EINTR) {
  }
  return out;
}

namespace {

// What ldconfig needs to read the image's library directories and replace its
// /etc/ld.so.cache whoever owns them; nothing to mount, mknod, chown, trace or change ids.
constexpr uint64_t kProgramCaps =
    (uint64_t{1} << CAP_DAC_OVERRIDE) | (uint64_t{1} << CAP_DAC_READ_SEARCH) | (uint64_t{1} << CAP_FOWNER);

struct ChildFailure {
  const char* step;
  int err;
};

// In the forked child, before the host binary runs on files the image controls
// (CVE-2025-23266 class: a parsing bug, or an LD_PRELOAD, must not get the init's powers):
// no fd of the init but stdio (its sync socket, preserved fds), no privilege gain by exec,
// and a bounding set of kProgramCaps, which is all a root exec can then get.
ChildFailure harden_child() {
  if (::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) < 0) return {"close_range", errno};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return {"no_new_privs", errno};
  for (int c = 0; c < 64; ++c)  // EINVAL: a capability this kernel does not have
    if (!(kProgramCaps >> c & 1) && ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
      return {"drop bounding capabilities", errno};
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) return {"clear ambient capabilities", errno};
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &hdr, data) < 0) return {"capget", errno};
  // Only lowered: a capability the init lacks cannot be raised (capset would fail).
  uint32_t keep = data[0].permitted & static_cast<uint32_t>(kProgramCaps);
  data[0] = {keep, keep, 0};
  data[1] = {0, 0, 0};
  if (::syscall(SYS_capset, &hdr, data) < 0) return {"capset", errno};
  return {nullptr, 0};
}

[[noreturn]] void exec_child(int fd, char** argv, int report_fd) {
  ChildFailure f = harden_child();
  if (!f.step) {
    char* envp[] = {nullptr};  // nothing the image controls (LD_PRELOAD...) reaches a host binary
    ::syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
    f = {"execveat", errno};
  }
  (void)!::write(report_fd, &f.err, sizeof f.err);
  (void)!::write(report_fd, f.step, ::strlen(f.step));
  ::_exit(127);
}

}  // namespace

Status run_program(int fd, const std::vector<std::string>& argv) {
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::string name = argv.empty() ? std::string("program") : argv[0];
  int report[2];
  if (::pipe2(report, O_CLOEXEC) < 0) return Error::sys(errno, "pipe");
  UniqueFd rd(report[0]), wr(report[1]);
  pid_t pid = ::fork();
  if (pid < 0) return Error::sys(errno, "fork");
  if (pid == 0) exec_child(fd, cargv.data(), wr.get());
  wr.reset();
  auto report_text = file::read_fd(rd.get(), 256);  // EOF: the exec happened
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (report_text && report_text->size() > sizeof(int)) {
    int err;
    ::memcpy(&err, report_text->data(), sizeof err);
    return Error::sys(err, name + ": " + report_text->substr(sizeof err));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Error::generic(name + " failed (status " + std::to_string(status) + ")");
  return ok();
}

}  // namespace berth::linux::ops
