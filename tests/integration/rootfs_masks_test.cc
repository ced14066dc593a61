// linux.maskedPaths, linux.readonlyPaths and linux.sysctl in real containers: masked files
// read empty (the host's null device over them), masked directories are empty and
// read-only, read-only paths refuse writes, sysctl values are in place — written through
// a private procfs, so even a read-only /proc/sys takes them.
#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using RootfsMasks = RootfsTest;

TEST_F(RootfsMasks, DefaultMasksHideProcAndSysEntries) {
  Runtime rt;
  Bundle b;
  b.script("stat -c '%n %F %t:%T' /proc/keys /proc/timer_list; wc -c < /proc/keys; ls -A /proc/acpi | wc -l; "
           "ls -A /sys/firmware | wc -l; touch /proc/acpi/x 2>&1; true");
  auto r = run_container(rt, b, "k-default");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "/proc/keys character special file 1:3\n"
            "/proc/timer_list character special file 1:3\n"
            "0\n0\n0\n"
            "touch: /proc/acpi/x: Read-only file system\n");
}

TEST_F(RootfsMasks, ImagePathsMaskedFileAndDirectory) {
  Runtime rt;
  Bundle b;
  run_cmd({"sh", "-c", "echo secret > " + b.rootfs() + "/etc/secret && mkdir -p " + b.rootfs() + "/home/private && echo s > " +
                           b.rootfs() + "/home/private/key"});
  b.spec().linux->masked_paths = {"/etc/secret", "/home/private", "/does/not/exist"};
  b.script("cat /etc/secret; echo \"[$(ls -A /home/private)]\"; echo x > /etc/secret && echo wrote-to-null");
  auto r = run_container(rt, b, "k-image");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "[]\nwrote-to-null\n");
  EXPECT_EQ(slurp(b.rootfs() + "/etc/secret"), "secret\n") << "the write went to the null device";
}

TEST_F(RootfsMasks, ReadonlyPathsRefuseWrites) {
  Runtime rt;
  Bundle b;
  b.spec().linux->readonly_paths.push_back("/etc");
  b.script("{ echo 1 > /proc/sys/kernel/ns_last_pid; } 2>&1; touch /etc/x 2>&1; "
           "grep -c ' /proc/sys ro,' /proc/self/mountinfo; true");
  auto r = run_container(rt, b, "k-readonly");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "sh: can't create /proc/sys/kernel/ns_last_pid: Read-only file system\n"
            "touch: /etc/x: Read-only file system\n"
            "1\n");
  EXPECT_FALSE(host_exists(b.rootfs() + "/etc/x"));
}

TEST_F(RootfsMasks, SysctlValuesThroughAPrivateProcfs) {
  Runtime rt;
  Bundle b;
  b.spec().linux->sysctl = {{"net.ipv4.ip_forward", "1"}, {"kernel.shmmax", "4096"}, {"kernel.domainname", "berth.test"},
                            {"net/ipv4/conf/lo/forwarding", "1"}};
  b.script("cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shmmax /proc/sys/kernel/domainname "
           "/proc/sys/net/ipv4/conf/lo/forwarding; grep -c ' /proc/sys ro,' /proc/self/mountinfo");
  auto r = run_container(rt, b, "k-sysctl");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n4096\nberth.test\n1\n1\n") << "written although /proc/sys is read-only inside";
  EXPECT_NE(slurp("/proc/sys/kernel/shmmax"), "4096\n") << "the host's value changed";
}

TEST_F(RootfsMasks, SysctlInAUserNamespace) {
  Runtime rt;
  Bundle b;
  b.spec().linux->namespaces.push_back({"user", ""});
  b.spec().linux->uid_mappings = {{0, 100000, 65536}};
  b.spec().linux->gid_mappings = {{0, 100000, 65536}};
  run_cmd({"chown", "-R", "100000:100000", b.rootfs()});
  b.spec().linux->sysctl = {{"net.ipv4.ip_forward", "1"}, {"kernel.shmmax", "8192"}};
  b.script("cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shmmax");
  auto r = run_container(rt, b, "k-sysctl-userns");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n8192\n");
}

TEST_F(RootfsMasks, SysctlOutsideTheContainersNamespacesIsRefused) {
  Runtime rt;
  Bundle b;
  b.spec().linux->sysctl = {{"vm.swappiness", "1"}};
  auto r = run_container(rt, b, "k-refused");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("sysctl \\\"vm.swappiness\\\" is not in a separate kernel namespace"), std::string::npos) << r.err;
  Bundle h;
  h.spec().linux->sysctl = {{"kernel.hostname", "x"}};
  r = run_container(rt, h, "k-hostname");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("conflicts with the OCI \\\"hostname\\\" field"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace berth::test
