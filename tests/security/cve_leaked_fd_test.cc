// CVE-2024-21626: process.cwd set to /proc/self/fd/N, where N is a runtime fd leaked into
// the container and pointing at a host directory, put the container's cwd on the host. The
// tests attempt it for every small N; berth refuses such a cwd (no magic link is followed
// inside the rootfs) and the payload sees only its stdio, in run and in create+start.
#include <unistd.h>

#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using CVE_2024_21626 = RootfsTest;

TEST_F(CVE_2024_21626, CwdThroughARuntimeFdIsRefused) {
  TempDir marker_dir("berth-rt-21626");
  for (int fd = 3; fd <= 9; ++fd) {
    Runtime rt;
    Bundle b;
    b.spec().process->cwd = "/proc/self/fd/" + std::to_string(fd);
    // Were the cwd on the host, this would climb to the host's root and write there.
    b.script("touch ../../../../../../../../.." + marker_dir.path() + "/escaped-" + std::to_string(fd));
    auto r = run_container(rt, b, "cve-21626-cwd-" + std::to_string(fd));
    EXPECT_NE(r.code, 0) << "cwd /proc/self/fd/" << fd << " was accepted";
    EXPECT_NE(r.err.find("create cwd /proc/self/fd/" + std::to_string(fd)), std::string::npos) << r.err;
    EXPECT_FALSE(host_exists(marker_dir.path() + "/escaped-" + std::to_string(fd)));
  }
}

// ls lists its own fds: stdio and the directory it is reading (3), nothing of the runtime.
void expect_only_stdio(const std::string& listing) { EXPECT_EQ(listing, "0\n1\n2\n3\n"); }

TEST_F(CVE_2024_21626, RunPayloadSeesOnlyStdio) {
  Runtime rt;
  Bundle b;
  b.spec().process->args = {"ls", "-1", "/proc/self/fd"};
  auto r = run_container(rt, b, "cve-21626-run");
  ASSERT_EQ(r.code, 0) << r.err;
  expect_only_stdio(r.out);
}

TEST_F(CVE_2024_21626, CreateStartPayloadSeesOnlyStdio) {
  Runtime rt;
  Bundle b;
  b.script("ls -1 /proc/self/fd > /tmp/fds");
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/cve-21626-start";
  b.write();
  ASSERT_EQ(rt({"create", "--bundle", b.path(), "cve-21626-start"}).code, 0);
  auto started = rt({"start", "cve-21626-start"});
  ASSERT_EQ(started.code, 0) << started.err;
  for (int i = 0; i < 100 && rt({"state", "cve-21626-start"}).out.find("stopped") == std::string::npos; ++i) ::usleep(20000);
  EXPECT_EQ(rt({"delete", "--force", "cve-21626-start"}).code, 0);
  expect_only_stdio(slurp(b.rootfs() + "/tmp/fds"));
}

}  // namespace
}  // namespace berth::test
