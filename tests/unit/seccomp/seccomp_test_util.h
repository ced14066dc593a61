// Helpers for the seccomp tests: profile builders, a forked child that sets no_new_privs
// (so no test needs root) and reports through its exit status, and a debug-log capture.
#pragma once

#include <ftw.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "berth/spec.h"
#include "spec/schema.h"
#include "util/file.h"
#include "util/log.h"

namespace berth::seccomp::testing {

// Exit codes a child uses for its own failures (test values stay below 200).
inline constexpr int kChildSetupFailed = 201;
inline constexpr int kChildLoadFailed = 202;

inline spec::Seccomp fixture(const std::string& name) {
  auto text = file::read(std::string(BERTH_SOURCE_DIR) + "/tests/fixtures/seccomp/" + name);
  if (!text) {
    ADD_FAILURE() << text.error().message();
    return {};
  }
  auto p = json::parse_as<spec::Seccomp>(*text, name);
  if (!p) ADD_FAILURE() << p.error().message();
  return p ? *p : spec::Seccomp{};
}

inline spec::Syscall rule(std::vector<std::string> names, std::string action,
                          std::optional<uint32_t> errno_ret = std::nullopt, std::vector<spec::SeccompArg> args = {}) {
  spec::Syscall s;
  s.names = std::move(names);
  s.action = std::move(action);
  s.errno_ret = errno_ret;
  s.args = std::move(args);
  return s;
}

// Under a deny-by-default filter, what the child itself needs: exiting, and what the
// sanitizer runtimes of ASan/UBSan builds call on their own (stack queries at _exit, the
// pipe-based memory probe of UBSan's vptr check, writing a report). The largest numbers
// here: pipe2 on x86_64 (293) and i386 (331), sigaltstack on x32 (525 | bit 30).
inline spec::Syscall child_runtime_rule() {
  return rule({"exit", "exit_group", "write", "mmap", "munmap", "sigaltstack", "gettid", "getpid", "pipe2", "readlink"},
              "SCMP_ACT_ALLOW");
}

inline spec::SeccompArg arg(uint32_t index, std::string op, uint64_t value, uint64_t value_two = 0) {
  spec::SeccompArg a;
  a.index = index;
  a.op = std::move(op);
  a.value = value;
  a.value_two = value_two;
  return a;
}

inline spec::Seccomp profile(std::string default_action, std::vector<spec::Syscall> rules,
                             std::optional<uint32_t> default_errno = std::nullopt) {
  spec::Seccomp p;
  p.default_action = std::move(default_action);
  p.default_errno_ret = default_errno;
  p.syscalls = std::move(rules);
  return p;
}

// Forks; the child drops core dumps (SIGSYS would dump), sets no_new_privs unless told
// not to, runs fn and exits with its result. Returns the raw wait status.
inline int run_child(const std::function<int()>& fn, bool no_new_privs = true) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);  // a wedged child must not hang the suite
    struct rlimit none {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) < 0) _exit(kChildSetupFailed);
    if (no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) _exit(kChildSetupFailed);
    _exit(fn());
  }
  int status = -1;
  if (pid > 0) waitpid(pid, &status, 0);
  return status;
}

inline std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// Routes berth's log (debug level) into a memfd for the lifetime of the object.
class LogCapture {
 public:
  LogCapture() : fd_(memfd_create("berth-test-log", MFD_CLOEXEC)) { log::configure(fd_, log::Format::kText, true); }
  ~LogCapture() {
    log::configure(-1, log::Format::kText, false);
    close(fd_);
  }
  std::string text() const {
    lseek(fd_, 0, SEEK_SET);
    auto t = file::read_fd(fd_);
    lseek(fd_, 0, SEEK_END);
    return t ? *t : std::string();
  }
  void clear() const {
    if (ftruncate(fd_, 0) == 0) lseek(fd_, 0, SEEK_SET);
  }

 private:
  int fd_;
};

// A fresh directory under TMPDIR, removed (with its files) at the end.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/berth-seccomp-XXXXXX";
    path_ = mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~TempDir() {
    if (path_.empty()) return;
    auto remove_one = [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); };
    nftw(path_.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace berth::seccomp::testing
