// Leaked fds through --preserve-fds and LISTEN_FDS (the CVE-2024-21626 family): a caller
// with only stdio open asks for fds 3..6. Those were berth's own (the state root, the
// container's locked directory, cgroup directories), handed over with close-on-exec
// cleared: `/proc/self/fd/3/../..` was the host's root. run, create and exec must refuse,
// naming the fd, before any container exists; a caller that really passes fds still gets
// exactly those. Each berth is spawned here with a known set of open fds (and a deadline:
// `create --preserve-fds` used to hang start and delete on the inherited lock).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "integration/rootfs_test_support.h"
#include "security/security_support.h"

namespace berth::test {
namespace {

using PreservedFds = RootfsTest;

struct Spawn {
  std::vector<int> pass;  // dup'd to 3, 4, ... in berth
  int listen = 0;         // LISTEN_FDS, with LISTEN_PID = berth's own pid
  int timeout_s = 30;
};

void child_exec(const Runtime& rt, const std::vector<std::string>& args, const Spawn& s, int out, int err) {
  int null = ::open("/dev/null", O_RDONLY);
  ::dup2(null, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  // Out of the way first (a passed fd may sit at 3..), then into place; nothing else stays.
  for (size_t i = 0; i < s.pass.size(); ++i) ::dup2(s.pass[i], 100 + static_cast<int>(i));
  for (size_t i = 0; i < s.pass.size(); ++i) ::dup2(100 + static_cast<int>(i), 3 + static_cast<int>(i));
  ::syscall(SYS_close_range, 3 + s.pass.size(), ~0U, 0);
  if (s.listen > 0) {
    // As systemd does: the pid of the process that will exec berth, known before the exec.
    ::setenv("LISTEN_FDS", std::to_string(s.listen).c_str(), 1);
    ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
  }
  std::vector<std::string> argv = {rt.binary(), "--root", rt.root()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c;
  for (auto& a : argv) c.push_back(a.data());
  c.push_back(nullptr);
  ::execv(c[0], c.data());
  ::_exit(127);
}

// berth with exactly stdio and s.pass open; killed (code -1) past the deadline. Done when
// berth exits, not at EOF: a created init holds the pipes until it runs.
CmdResult berth_with_fds(const Runtime& rt, const std::vector<std::string>& args, const Spawn& s = {}) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC | O_NONBLOCK) < 0 || ::pipe2(err, O_CLOEXEC | O_NONBLOCK) < 0) return {};
  pid_t pid = ::fork();
  if (pid == 0) child_exec(rt, args, s, out[1], err[1]);
  ::close(out[1]);
  ::close(err[1]);
  CmdResult r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(s.timeout_s);
  int status = 0;
  bool exited = false, killed = false;
  while (!exited) {
    pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    ::poll(p, 2, 50);
    exited = ::waitpid(pid, &status, WNOHANG) == pid;
    char buf[4096];
    for (int i = 0; i < 2; ++i)
      for (ssize_t n; (n = ::read(p[i].fd, buf, sizeof buf)) > 0;) (i ? r.err : r.out).append(buf, static_cast<size_t>(n));
    if (!exited && std::chrono::steady_clock::now() > deadline) {
      killed = ::kill(pid, SIGKILL) == 0;
      exited = ::waitpid(pid, &status, 0) == pid;
    }
  }
  ::close(out[0]);
  ::close(err[0]);
  r.code = killed ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// What the payload would show were it given a runtime fd: where fds 3..6 lead, and the
// host's root listed through the first.
const char* kProbe = "for n in 3 4 5 6; do readlink /proc/self/fd/$n; done; ls /proc/self/fd/3/../.. 2>&1; echo ran";

void write_bundle(Bundle& b, const std::string& id) {
  b.script(kProbe);
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/" + id;
  b.write();
}

void expect_refused(const CmdResult& r, const std::string& message, const Runtime& rt, const std::string& id) {
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out, "") << "the payload ran and saw: " << r.out;
  EXPECT_NE(rt({"state", id}, "", 10).code, 0) << "a refused create left its container";
  EXPECT_EQ(run_cmd({"ls", "-A", rt.root()}).out, "") << "something was left under the state root";
}

TEST_F(PreservedFds, RunRefusesFdsTheCallerDidNotPass) {
  Runtime rt;
  Bundle b;
  write_bundle(b, "pfd-run");
  auto r = berth_with_fds(rt, {"run", "--preserve-fds", "4", "--bundle", b.path(), "pfd-run"});
  expect_refused(r, "--preserve-fds 4: fd 3 was not passed by the caller", rt, "pfd-run");
}

TEST_F(PreservedFds, RunRefusesTheFirstFdMissingBeyondThoseReallyPassed) {
  TempDir dir("berth-rt-pfd");
  write_text(dir.path() + "/three", "three\n");
  int three = ::open((dir.path() + "/three").c_str(), O_RDONLY | O_CLOEXEC);
  Runtime rt;
  Bundle b;
  write_bundle(b, "pfd-run-gap");
  Spawn s;
  s.pass = {three};
  auto r = berth_with_fds(rt, {"run", "--preserve-fds", "4", "--bundle", b.path(), "pfd-run-gap"}, s);
  ::close(three);
  expect_refused(r, "--preserve-fds 4: fd 4 was not passed by the caller", rt, "pfd-run-gap");
}

TEST_F(PreservedFds, CreateRefusesFdsTheCallerDidNotPass) {
  Runtime rt;
  Bundle b;
  write_bundle(b, "pfd-create");
  auto r = berth_with_fds(rt, {"create", "--preserve-fds", "4", "--bundle", b.path(), "pfd-create"});
  expect_refused(r, "--preserve-fds 4: fd 3 was not passed by the caller", rt, "pfd-create");
}

TEST_F(PreservedFds, ListenFdsNotPassedAreRefused) {
  for (const char* cmd : {"run", "create"}) {
    Runtime rt;
    Bundle b;
    std::string id = std::string("pfd-listen-") + cmd;
    write_bundle(b, id);
    Spawn s;
    s.listen = 4;
    auto r = berth_with_fds(rt, {cmd, "--bundle", b.path(), id}, s);
    expect_refused(r, "LISTEN_FDS=4: fd 3 was not passed by the caller", rt, id);
  }
}

TEST_F(PreservedFds, ExecRefusesFdsTheCallerDidNotPass) {
  Runtime rt;
  Container c(rt, "pfd-exec");
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  auto r = berth_with_fds(rt, {"exec", "--preserve-fds", "4", "pfd-exec", "sh", "-c", kProbe});
  EXPECT_EQ(r.code, 255) << r.err;  // exec's failures exit 255, as runc's
  EXPECT_NE(r.err.find("--preserve-fds 4: fd 3 was not passed by the caller"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "the process ran and saw: " << r.out;
}

// The legitimate case: what the caller passed, and only that, reaches the payload, through
// run, create + start (whose delete must not hang on a lock the init kept) and exec.
TEST_F(PreservedFds, FdsReallyPassedReachThePayload) {
  TempDir dir("berth-rt-pfd");
  write_text(dir.path() + "/three", "three\n");
  write_text(dir.path() + "/four", "four\n");
  // Fresh open files each time: a payload's read moves the shared offset.
  auto with_passed = [&](const Runtime& rt, const std::vector<std::string>& args) {
    Spawn s;
    s.pass = {::open((dir.path() + "/three").c_str(), O_RDONLY | O_CLOEXEC),
              ::open((dir.path() + "/four").c_str(), O_RDONLY | O_CLOEXEC)};
    auto r = berth_with_fds(rt, args, s);
    for (int fd : s.pass) ::close(fd);
    return r;
  };
  const std::string show = "{ cat <&3; cat <&4; readlink /proc/self/fd/5 || echo no-fd-5; } 2>/dev/null";
  Runtime rt;
  Bundle b;
  b.script(show);
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/pfd-ok";
  b.write();
  auto r = with_passed(rt, {"run", "--preserve-fds", "2", "--bundle", b.path(), "pfd-ok"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "three\nfour\nno-fd-5\n");

  auto created = with_passed(rt, {"create", "--preserve-fds", "2", "--bundle", b.path(), "pfd-ok2"});
  ASSERT_EQ(created.code, 0) << created.err;
  EXPECT_EQ(rt({"start", "pfd-ok2"}, "", 10).code, 0);
  EXPECT_EQ(rt({"delete", "--force", "pfd-ok2"}, "", 10).code, 0) << "delete waited on the init";

  Container c(rt, "pfd-exec-ok");
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  auto e = with_passed(rt, {"exec", "--preserve-fds", "2", "pfd-exec-ok", "sh", "-c", show});
  EXPECT_EQ(e.code, 0) << e.err;
  EXPECT_EQ(e.out, "three\nfour\nno-fd-5\n");
}

}  // namespace
}  // namespace berth::test
