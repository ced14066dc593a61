// No runtime process is reachable from a container while it holds a host view (host root,
// cwd, mount namespace or a host file): a watcher with CAP_SYS_PTRACE inside the container
// (tests/support/visibility_watcher.cc) scans /proc for new pids while the test runs many
// `exec`s, or `create`s of a second container joining its pid namespace by path, and tries
// /proc/<pid>/{root,cwd,mountinfo,ns/mnt,fd} and PTRACE_SEIZE on each.
// BERTH_VISIBILITY_ITERATIONS sets the number of execs and creates (default 200 for CI;
// 1000 was used to validate the fix).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include <cstdlib>
#include <set>

#include "support/exec_helpers.h"
#include "util/unique_fd.h"

namespace berth::test {
namespace {

int iterations() {
  const char* v = std::getenv("BERTH_VISIBILITY_ITERATIONS");
  int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : 200;
}

std::string host_mntns() { return link_of("/proc/self/ns/mnt"); }

// The watcher is the container's process, bind-mounted from the build tree, with its
// output directory bound from the host. prefix: create mode (see the watcher).
void watcher_spec(spec::Spec& s, const std::string& out, const std::string& prefix = "") {
  s.process->args = {"/watcher", "/out", "berth", host_mntns()};
  if (!prefix.empty()) s.process->args.push_back(prefix);
  std::vector<std::string> caps = {"CAP_SYS_PTRACE", "CAP_KILL", "CAP_DAC_OVERRIDE"};
  s.process->capabilities = spec::Capabilities{caps, caps, {}, caps, {}};
  s.mounts.push_back({"/watcher", "bind", BERTH_VISIBILITY_WATCHER, {"bind", "ro"}, {}, {}});
  s.mounts.push_back({"/out", "bind", out, {"bind", "rw"}, {}, {}});
}

bool watcher_ready(const TempDir& out) {
  return eventually([&] { return ::access((out.path() + "/ready").c_str(), F_OK) == 0; });
}

// Stops the watcher and checks what it saw: runtime processes in their window (or the
// test proves nothing) and not one host view.
void expect_no_host_view(const TempDir& out, int n, const char* what) {
  write_text(out.path() + "/stop", "");
  ASSERT_TRUE(eventually([&] { return !read_text(out.path() + "/summary").empty(); }, 10000));
  std::string summary = read_text(out.path() + "/summary");
  std::string observations = read_text(out.path() + "/observations");
  std::set<std::string> pids;  // distinct processes seen with a host view
  for (size_t at = 0; (at = observations.find("pid ", at)) != std::string::npos; ++at)
    pids.insert(observations.substr(at, observations.find(':', at) - at));
  std::printf("%d %s; watcher: %s; processes with a host view: %zu\n", n, what,
              summary.substr(0, summary.size() - 1).c_str(), pids.size());
  // The watcher must have caught runtime processes in their window, or it proves nothing.
  EXPECT_EQ(summary.find("runtime=0 "), std::string::npos) << summary;
  EXPECT_NE(summary.find("observations=0\n"), std::string::npos) << summary << observations.substr(0, 2000);
}

TEST(CVE_Visibility, ExecProcessesNeverShowAHostView) {
  Runtime berth;
  TempDir out("berth-watch");
  Container c(berth, "vis-exec", [&](spec::Spec& s) { watcher_spec(s, out.path()); });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  ASSERT_TRUE(watcher_ready(out)) << "the watcher did not start";
  int n = iterations();
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    auto r = c.exec({}, {"true"});
    if (r.code != 0 && ++failed < 5) ADD_FAILURE() << "exec " << i << ": " << r.code << " " << r.err;
  }
  EXPECT_EQ(failed, 0);
  expect_no_host_view(out, n, "execs");
}

// A pod's containers share a pid namespace: each new one joins it by path. Its init must
// appear there only after the pivot. The second container uses the watcher's rootfs
// directory, so that its root is the watcher's root once it is set up.
// Linux 6.18's procfs "pidns" option, which lets the init be forked into the joined pid
// namespace last; without it the old window remains (docs/security.md).
bool procfs_takes_pidns() {
  UniqueFd fs(static_cast<int>(::syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC)));
  UniqueFd ns(::open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC));
  return fs && ns && ::syscall(SYS_fsconfig, fs.get(), FSCONFIG_SET_FD, "pidns", nullptr, ns.get()) == 0;
}

TEST(CVE_Visibility, InitJoiningAPidNamespaceNeverShowsAHostView) {
  if (!procfs_takes_pidns())
    GTEST_SKIP() << "procfs takes no \"pidns\" option before Linux 6.18: the init joins the pid namespace "
                    "before its rootfs is set up there (the window docs/security.md describes)";
  Runtime berth;
  TempDir out("berth-watch");
  Container c(berth, "vis-pod", [&](spec::Spec& s) { watcher_spec(s, out.path(), "/tmp/"); });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  ASSERT_TRUE(watcher_ready(out)) << "the watcher did not start";
  Bundle b;
  b.spec().root->path = c.bundle().rootfs();
  b.spec().linux->cgroups_path = "/berth-test/vis-pod-member";
  for (auto& ns : b.spec().linux->namespaces)
    if (ns.type == "pid") ns.path = "/proc/" + std::to_string(c.pid()) + "/ns/pid";
  b.write();
  int n = iterations();
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    auto r = berth({"create", "--bundle", b.path(), "vis-pod-member"});
    if (r.code != 0 && ++failed < 5) ADD_FAILURE() << "create " << i << ": " << r.code << " " << r.err;
    berth({"delete", "--force", "vis-pod-member"});
  }
  EXPECT_EQ(failed, 0);
  expect_no_host_view(out, n, "creates");
}

}  // namespace
}  // namespace berth::test
