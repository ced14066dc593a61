// The pre-execve window (issue 31 §6; docs/security.md, "The window before execve"): a
// container without a user namespace that holds CAP_SYS_PTRACE can PTRACE_SEIZE the
// process `exec` forks into its pid namespace (and an init forked into a shared pid
// namespace) until its execve; non-dumpable does not stop it, as its capability is the
// host user namespace's. A static watcher (tests/support/ptrace_window_watcher.cc) as the
// container's init stops every runtime process it catches and searches its environ and
// memory for a marker the test put in berth's own environment, and checks its fds, cwd and
// root. What the docs promise: none of the caller's environment, no host file, the
// container's root and cwd. BERTH_PTRACE_WINDOW_ITERATIONS sets the number of execs and
// creates (default 30).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include <cstdlib>
#include <random>

#include "support/exec_helpers.h"
#include "util/unique_fd.h"

namespace berth::test {
namespace {

int iterations() {
  const char* v = std::getenv("BERTH_PTRACE_WINDOW_ITERATIONS");
  int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : 30;
}

// A value found nowhere but in berth's environment.
std::string make_marker() {
  std::random_device rd;
  char buf[40];
  std::snprintf(buf, sizeof buf, "berth-secret-%08x%08x", rd(), rd());
  return buf;
}

// The marker goes to the watcher in a file: in its arguments it would be in the
// container's config, which berth reads and holds.
void watcher_spec(spec::Spec& s, const std::string& out, const std::string& marker, bool marker_only) {
  write_text(out + "/marker", marker);
  s.process->args = {"/watcher", "/out", "berth"};
  if (marker_only) s.process->args.push_back("marker-only");
  std::vector<std::string> caps = {"CAP_SYS_PTRACE", "CAP_KILL", "CAP_DAC_OVERRIDE"};
  s.process->capabilities = spec::Capabilities{caps, caps, {}, caps, {}};
  s.mounts.push_back({"/watcher", "bind", BERTH_PTRACE_WINDOW_WATCHER, {"bind", "ro"}, {}, {}});
  s.mounts.push_back({"/out", "bind", out, {"bind", "rw"}, {}, {}});
}

// berth with the marker in its environment, as an engine's credentials would be.
CmdResult with_marker(const Runtime& rt, const std::string& marker, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {rt.binary(), "--root", rt.root()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_cmd(argv, "", 30, {"BERTH_SECRET_MARKER=" + marker});
}

long count(const std::string& summary, const std::string& key) {
  size_t at = summary.find(key + "=");
  return at == std::string::npos ? -1 : std::atol(summary.c_str() + at + key.size() + 1);
}

// Stops the watcher and checks what it saw. Nothing caught proves nothing: then the test
// fails, saying so, rather than pass on an empty observation.
void expect_nothing_of_the_caller(const TempDir& out, int n, const char* what) {
  write_text(out.path() + "/stop", "");
  ASSERT_TRUE(eventually([&] { return !read_text(out.path() + "/summary").empty(); }, 10000));
  std::string summary = read_text(out.path() + "/summary");
  std::string observations = read_text(out.path() + "/observations");
  std::printf("%d %s; watcher: %s", n, what, summary.c_str());
  std::printf("stopped before execve (first five): \n%s", read_text(out.path() + "/caught").c_str());
  long caught = count(summary, "caught");
  if (caught == 0) std::printf("not caught in %d tries\n", n);
  EXPECT_GT(caught, 0) << "the watcher stopped no runtime process in its window: the test proves nothing\n" << summary;
  EXPECT_GT(count(summary, "environ_read"), 0) << summary;
  EXPECT_EQ(count(summary, "marker_in_environ"), 0) << observations.substr(0, 2000);
  EXPECT_EQ(count(summary, "marker_in_memory"), 0) << observations.substr(0, 2000);
  EXPECT_EQ(count(summary, "observations"), 0) << observations.substr(0, 2000);
}

TEST(PtraceWindow, ExecProcessHoldsNothingOfTheCaller) {
  Runtime berth;
  TempDir out("berth-ptrace");
  std::string marker = make_marker();
  Container c(berth, "ptrace-exec", [&](spec::Spec& s) { watcher_spec(s, out.path(), marker, false); });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  ASSERT_TRUE(eventually([&] { return ::access((out.path() + "/ready").c_str(), F_OK) == 0; }))
      << "the watcher did not start";
  int n = iterations();
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    auto r = with_marker(berth, marker, {"exec", c.id(), "true"});
    if (r.code != 0 && ++failed < 5) ADD_FAILURE() << "exec " << i << ": " << r.code << " " << r.err;
  }
  EXPECT_EQ(failed, 0);
  expect_nothing_of_the_caller(out, n, "execs");
}

bool procfs_takes_pidns() {
  UniqueFd fs(static_cast<int>(::syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC)));
  UniqueFd ns(::open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC));
  return fs && ns && ::syscall(SYS_fsconfig, fs.get(), FSCONFIG_SET_FD, "pidns", nullptr, ns.get()) == 0;
}

// A pod's second container joins the watcher's pid namespace; its init waits there for
// `start`, a copy of berth's memory, for as long as the engine likes.
TEST(PtraceWindow, InitInASharedPidNamespaceHoldsNothingOfTheCaller) {
  if (!procfs_takes_pidns())
    GTEST_SKIP() << "procfs takes no \"pidns\" option before Linux 6.18: the init is a second stage there, "
                    "scrubbed the same way, but this test is written for the init forked last";
  Runtime berth;
  TempDir out("berth-ptrace");
  std::string marker = make_marker();
  Container c(berth, "ptrace-pod", [&](spec::Spec& s) { watcher_spec(s, out.path(), marker, true); });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  ASSERT_TRUE(eventually([&] { return ::access((out.path() + "/ready").c_str(), F_OK) == 0; }))
      << "the watcher did not start";
  Bundle b;
  b.spec().root->path = c.bundle().rootfs();
  b.spec().linux->cgroups_path = "/berth-test/ptrace-pod-member";
  for (auto& ns : b.spec().linux->namespaces)
    if (ns.type == "pid") ns.path = "/proc/" + std::to_string(c.pid()) + "/ns/pid";
  b.write();
  int n = std::max(1, iterations() / 3);
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    auto r = with_marker(berth, marker, {"create", "--bundle", b.path(), "ptrace-pod-member"});
    if (r.code != 0 && ++failed < 5) ADD_FAILURE() << "create " << i << ": " << r.code << " " << r.err;
    // The init waits for `start`: give the watcher its time before it goes.
    ::usleep(200000);
    berth({"delete", "--force", "ptrace-pod-member"});
  }
  EXPECT_EQ(failed, 0);
  expect_nothing_of_the_caller(out, n, "creates");
}

}  // namespace
}  // namespace berth::test
