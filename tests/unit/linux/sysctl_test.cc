// linux.sysctl: runc's validation and key forms, and the writes through a private procfs
// instance (never the container's /proc) checked call by call with the recording fake.
#include <gtest/gtest.h>

#include "linux/sysctl.h"
#include "support/fakes/recording_sys.h"

namespace berth::linux {
namespace {

std::string why(const std::map<std::string, std::string>& m, bool ipc, bool uts, bool net) {
  auto st = validate_sysctls(m, ipc, uts, net);
  return st ? "<ok>" : st.error().message();
}

TEST(Sysctl, IpcKeysNeedAnIpcNamespace) {
  EXPECT_EQ(why({{"kernel.shmmax", "1"}}, true, false, false), "<ok>");
  EXPECT_EQ(why({{"fs.mqueue.msg_max", "1"}}, true, false, false), "<ok>");
  EXPECT_EQ(why({{"kernel.msgmax", "1"}}, false, true, true),
            "linux.sysctl: sysctl \"kernel.msgmax\" is not allowed in the hosts ipc namespace");
}

TEST(Sysctl, NetKeysNeedANetworkNamespace) {
  EXPECT_EQ(why({{"net.ipv4.ip_forward", "1"}}, false, false, true), "<ok>");
  EXPECT_EQ(why({{"net.ipv4.ip_forward", "1"}}, true, true, false),
            "linux.sysctl: sysctl \"net.ipv4.ip_forward\" not allowed in host network namespace");
}

TEST(Sysctl, UtsKeys) {
  EXPECT_EQ(why({{"kernel.domainname", "x"}}, false, true, false), "<ok>");
  EXPECT_EQ(why({{"kernel.hostname", "x"}}, false, true, false),
            "linux.sysctl: sysctl \"kernel.hostname\" is not allowed as it conflicts with the OCI \"hostname\" field");
  EXPECT_EQ(why({{"kernel.domainname", "x"}}, true, false, true),
            "linux.sysctl: sysctl \"kernel.domainname\" is not in a separate kernel namespace");
}

TEST(Sysctl, OtherKeysAreRefused) {
  EXPECT_EQ(why({{"vm.swappiness", "1"}}, true, true, true),
            "linux.sysctl: sysctl \"vm.swappiness\" is not in a separate kernel namespace");
}

TEST(Sysctl, SlashFormIsConverted) {
  EXPECT_EQ(sysctl_dotted("net/ipv4/conf/eth0.100/forwarding"), "net.ipv4.conf.eth0/100.forwarding");
  EXPECT_EQ(sysctl_dotted("net.ipv4.ip_forward"), "net.ipv4.ip_forward");
  EXPECT_EQ(sysctl_path("net.ipv4.conf.eth0/100.forwarding"), "net/ipv4/conf/eth0.100/forwarding");
  EXPECT_EQ(sysctl_path("net/ipv4/conf/eth0.100/forwarding"), "net/ipv4/conf/eth0.100/forwarding");
  EXPECT_EQ(why({{"net/ipv4/ip_forward", "1"}}, false, false, false),
            "linux.sysctl: sysctl \"net.ipv4.ip_forward\" not allowed in host network namespace");
}

TEST(Sysctl, WritesGoThroughAPrivateProcfs) {
  test::RecordingSys sys;
  ASSERT_TRUE(write_sysctls(sys, {{"net.ipv4.ip_forward", "1"}, {"kernel.shmmax", "4096"}}));
  EXPECT_EQ(sys.log_text(),
            "fsopen(\"proc\", 0) = 3\n"
            "fsconfig(3, FSCONFIG_CMD_CREATE, \"\", \"\")\n"
            "fsmount(3, 0, nosuid|nodev|noexec) = 4\n"
            "openat2(4, \"sys/kernel/shmmax\", O_WRONLY, "
            "RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV) = 5\n"
            "write_fd(5, \"4096\")\n"
            "openat2(4, \"sys/net/ipv4/ip_forward\", O_WRONLY, "
            "RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV) = 6\n"
            "write_fd(6, \"1\")\n");
}

TEST(Sysctl, NothingToWriteMountsNothing) {
  test::RecordingSys sys;
  ASSERT_TRUE(write_sysctls(sys, {}));
  EXPECT_TRUE(sys.log().empty());
}

TEST(Sysctl, AFailedWriteNamesTheKey) {
  test::RecordingSys sys;
  sys.fail("write_fd", 1, EINVAL);
  auto st = write_sysctls(sys, {{"kernel.sem", "bad"}});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "write sysctl key kernel.sem: write_fd: invalid argument");
}

}  // namespace
}  // namespace berth::linux
