// The procfs CVE classes, each attempted against berth:
// CVE-2019-16884 / CVE-2023-27561: a fake /proc (a symlink in the image, a bind of
// something else, a mount inside /proc) makes the runtime's later /proc writes land in an
// attacker's file. CVE-2025-52881: procfs writes redirected (sysctl through a /proc/sys the
// container controls). berth mounts procfs only on an ordinary directory, lets nothing but
// procfs cover /proc, checks the type after mounting, and writes sysctl through a private
// procfs instance.
#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using CVE_2019_16884 = RootfsTest;
using CVE_2023_27561 = RootfsTest;
using CVE_2025_52881 = RootfsTest;

TEST_F(CVE_2019_16884, ProcIsASymlinkInTheImage) {
  TempDir bait("berth-rt-16884");
  Runtime rt;
  Bundle b;
  // The image's /proc leads to a directory of the host (absolute) — or, confined to the
  // rootfs, anywhere else: a mount there would not be procfs at /proc.
  run_cmd({"sh", "-c", "rmdir " + b.rootfs() + "/proc && ln -s " + bait.path() + " " + b.rootfs() + "/proc"});
  auto r = run_container(rt, b, "cve-16884-link");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("mount /proc: filesystem \\\"proc\\\" must be mounted on ordinary directory"), std::string::npos)
      << r.err;
  EXPECT_EQ(run_cmd({"ls", "-A", bait.path()}).out, "") << "something reached the host directory";
}

TEST_F(CVE_2019_16884, ProcIsARelativeSymlinkInsideTheImage) {
  Runtime rt;
  Bundle b;
  run_cmd({"sh", "-c", "rmdir " + b.rootfs() + "/proc && mkdir " + b.rootfs() + "/fakeproc && ln -s fakeproc " + b.rootfs() + "/proc"});
  auto r = run_container(rt, b, "cve-16884-rel");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("must be mounted on ordinary directory"), std::string::npos) << r.err;
}

TEST_F(CVE_2023_27561, BindOfSomethingElseOverProc) {
  TempDir fake("berth-rt-27561");
  run_cmd({"sh", "-c", "mkdir -p " + fake.path() + "/self/attr && echo unconfined > " + fake.path() + "/self/attr/exec"});
  Runtime rt;
  Bundle b;
  b.spec().mounts.push_back({"/proc", "bind", fake.path(), {"rbind"}, {}, {}});
  auto r = run_container(rt, b, "cve-27561-bind");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("\\\"/proc\\\" cannot be mounted because it is not of type proc"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(fake.path() + "/self/attr/exec"), "unconfined\n");
}

TEST_F(CVE_2023_27561, MountInsideProc) {
  TempDir fake("berth-rt-27561b");
  Runtime rt;
  Bundle b;
  b.spec().mounts.push_back({"/proc/self/attr", "bind", fake.path(), {"rbind"}, {}, {}});
  auto r = run_container(rt, b, "cve-27561-inside");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("\\\"/proc/self/attr\\\" cannot be mounted because it is inside /proc"), std::string::npos) << r.err;
}

TEST_F(CVE_2023_27561, VolumeReachesProcThroughAnImageSymlink) {
  // The path as written is not in /proc; the image's link takes it there. Refused where
  // it lands, after the symlink was followed inside the rootfs.
  TempDir fake("berth-rt-27561c");
  Runtime rt;
  Bundle b;
  run_cmd({"ln", "-s", "/proc/self", b.rootfs() + "/vol"});
  b.spec().mounts.push_back({"/vol", "bind", fake.path(), {"rbind"}, {}, {}});
  auto r = run_container(rt, b, "cve-27561-link");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("mount /vol: \\\"/vol\\\" cannot be mounted because it is inside /proc"), std::string::npos) << r.err;
}

TEST_F(CVE_2025_52881, SysctlIgnoresWhatCoversTheContainersProcSys) {
  // The container's /proc/sys/net/ipv4/conf is masked (an empty read-only tmpfs) and all of
  // /proc/sys read-only: a runtime writing through the container's /proc would fail or
  // write into the tmpfs. berth's private procfs instance reaches the real file.
  Runtime rt;
  Bundle b;
  b.spec().linux->masked_paths.push_back("/proc/sys/net/ipv4/conf");
  b.spec().linux->sysctl = {{"net.ipv4.conf.all.forwarding", "1"}};
  b.script("cat /proc/sys/net/ipv4/ip_forward; ls -A /proc/sys/net/ipv4/conf | wc -l");
  auto r = run_container(rt, b, "cve-52881-sysctl");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n0\n") << "conf/all/forwarding also sets ip_forward; conf is masked";
}

TEST_F(CVE_2025_52881, ProcSysFileReplacedByABindIsRefused) {
  TempDir host("berth-rt-52881");
  run_cmd({"sh", "-c", "echo 0 > " + host.path() + "/ip_forward"});
  Runtime rt;
  Bundle b;
  b.spec().mounts.push_back({"/proc/sys/net/ipv4/ip_forward", "bind", host.path() + "/ip_forward", {"bind"}, {}, {}});
  b.spec().linux->sysctl = {{"net.ipv4.ip_forward", "1"}};
  auto r = run_container(rt, b, "cve-52881-bind");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot be mounted because it is inside /proc"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(host.path() + "/ip_forward"), "0\n") << "the sysctl value went into the host file";
}

}  // namespace
}  // namespace berth::test
