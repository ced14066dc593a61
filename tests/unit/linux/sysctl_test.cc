// linux.sysctl: runc's validation and key forms, and the writes through a private procfs
// instance (never the container's /proc) checked call by call with the recording fake.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>

#include "linux/sysctl.h"
#include "support/fakes/recording_sys.h"
#include "util/strings.h"

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

TEST(Sysctl, RealKeyFormsAreAccepted) {
  for (const char* k : {"net.ipv4.ip_forward", "net.ipv4.conf.eth0/100.forwarding", "net/ipv4/conf/eth0.100/forwarding",
                        "net.ipv4.conf.br-1.forwarding", "net.ipv6.conf.veth_a@if2.disable_ipv6",
                        "net.ipv4.ping_group_range", "net.core.somaxconn", "fs.mqueue.msg_max",
                        "fs/mqueue/queues_max", "kernel.shm_rmid_forced", "kernel.sem", "kernel.msgmnb"}) {
    EXPECT_EQ(why({{k, "1"}}, true, true, true), "<ok>") << k;
    ASSERT_TRUE(sysctl_checked_path(k)) << k;
  }
  EXPECT_EQ(*sysctl_checked_path("net.ipv4.conf.eth0/100.forwarding"), "net/ipv4/conf/eth0.100/forwarding");
  EXPECT_EQ(why({{"kernel.domainname", "x"}}, false, true, false), "<ok>");
}

// Keys that would climb out of net/ or fs/mqueue/ (the CVE-2022-0811 class), in both forms,
// and keys with characters no sysctl has.
TEST(Sysctl, TraversingOrOddKeysAreRefusedByName) {
  const char* kTraversal = "has an empty, \".\" or \"..\" component in its path /proc/sys/";
  struct Case {
    const char* key;
    std::string why;
  } cases[] = {
      {"net/../kernel/core_pattern", std::string(kTraversal) + "net/../kernel/core_pattern"},
      {"net.//.kernel.core_pattern", std::string(kTraversal) + "net/../kernel/core_pattern"},
      {"net.ipv4.x/../../kernel/printk_ratelimit_burst",
       std::string(kTraversal) + "net/ipv4/x.//.//.kernel.printk_ratelimit_burst"},
      {"fs.mqueue.//.//.kernel.core_pattern", std::string(kTraversal) + "fs/mqueue/../../kernel/core_pattern"},
      {"fs/mqueue/../../kernel/core_pattern", std::string(kTraversal) + "fs/mqueue/../../kernel/core_pattern"},
      {"net./.ipv4.ip_forward", std::string(kTraversal) + "net/./ipv4/ip_forward"},
      {"net..ipv4", std::string(kTraversal) + "net//ipv4"},
      {"net.ipv4.", std::string(kTraversal) + "net/ipv4/"},
      {".net.ipv4", std::string(kTraversal) + "/net/ipv4"},
      {"net/ipv4/", std::string(kTraversal) + "net/ipv4/"},
      {"/net/ipv4", std::string(kTraversal) + "/net/ipv4"},
      {"net", ""},  // well formed, refused by the namespace rules below
      {"", "is empty"},
      {"net.ipv4.ip forward", "has a character that is not allowed in a sysctl key"},
      {"net.ipv4.ip_forward\n", "has a character that is not allowed in a sysctl key"},
      {"net.ipv4.conf.eth0:1.forwarding", "has a character that is not allowed in a sysctl key"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.key);
    if (c.why.empty()) {
      EXPECT_EQ(why({{c.key, "1"}}, true, true, true), "linux.sysctl: sysctl \"net\" is not in a separate kernel namespace");
      continue;
    }
    EXPECT_EQ(why({{c.key, "1"}}, true, true, true), "linux.sysctl: sysctl " + str::go_quote(c.key) + " " + c.why);
  }
  EXPECT_EQ(why({{std::string("net.ipv4.ip_forward\0x", 21), "1"}}, true, true, true),
            "linux.sysctl: sysctl \"net.ipv4.ip_forward\\x00x\" has a character that is not allowed in a sysctl key");
  EXPECT_NE(why({{"net." + std::string(600, 'a'), "1"}}, true, true, true).find("is longer than 512 characters"),
            std::string::npos);
}

TEST(Sysctl, OnlyTheJoinedNetworkNamespaceOfAnotherIsPrivate) {
  NamespacePlan created;
  created.new_flags = CLONE_NEWNET;
  EXPECT_TRUE(*private_network(created));
  EXPECT_FALSE(*private_network(NamespacePlan{}));
  NamespacePlan own;  // joining the runtime's own namespace by path is the host's
  own.joins.push_back({"network", CLONE_NEWNET, UniqueFd(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC))});
  ASSERT_GE(own.joins[0].fd.get(), 0);
  EXPECT_FALSE(*private_network(own));
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
  // procfs files are the kernel's: the model knows them only where a test adds them.
  sys.add_file("/[fs:proc]/mnt/sys/kernel/shmmax");
  sys.add_file("/[fs:proc]/mnt/sys/net/ipv4/ip_forward");
  ASSERT_TRUE(write_sysctls(sys, {{"net.ipv4.ip_forward", "1"}, {"kernel.shmmax", "4096"}}));
  EXPECT_EQ(sys.log_text(),
            "fsopen(\"proc\", 0) = 3\n"
            "fsconfig(3, FSCONFIG_CMD_CREATE, \"\", \"\")\n"
            "fsmount(3, 0, nosuid|nodev|noexec) = 4\n"
            "openat2(4, \"sys\", O_PATH|O_DIRECTORY, "
            "RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV) = 5\n"
            "openat2(5, \"kernel/shmmax\", O_WRONLY|O_NOFOLLOW, "
            "RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV) = 6\n"
            "fstatfs(6) = proc\n"
            "fstat(6) = f 0644\n"
            "write_fd(6, \"4096\")\n"
            "openat2(5, \"net/ipv4/ip_forward\", O_WRONLY|O_NOFOLLOW, "
            "RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV) = 7\n"
            "fstatfs(7) = proc\n"
            "fstat(7) = f 0644\n"
            "write_fd(7, \"1\")\n");
}

TEST(Sysctl, AFileThatIsNotRegularIsNotWritten) {
  test::RecordingSys sys;  // sys/net/ipv4/ip_forward unknown to the model: fstat says a directory
  auto st = write_sysctls(sys, {{"net.ipv4.ip_forward", "1"}});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "write sysctl key net.ipv4.ip_forward: not a regular file");
  for (const auto& line : sys.log()) EXPECT_EQ(line.find("write_fd"), std::string::npos) << line;
}

TEST(Sysctl, TheWriteChecksTheKeyFormAgain) {
  test::RecordingSys sys;
  auto st = write_sysctls(sys, {{"net/../kernel/core_pattern", "|/x"}});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "linux.sysctl: sysctl \"net/../kernel/core_pattern\" has an empty, \".\" or \"..\" "
                                  "component in its path /proc/sys/net/../kernel/core_pattern");
  for (const auto& line : sys.log()) EXPECT_EQ(line.find("core_pattern"), std::string::npos) << line;
}

TEST(Sysctl, NothingToWriteMountsNothing) {
  test::RecordingSys sys;
  ASSERT_TRUE(write_sysctls(sys, {}));
  EXPECT_TRUE(sys.log().empty());
}

TEST(Sysctl, AFailedWriteNamesTheKey) {
  test::RecordingSys sys;
  sys.add_file("/[fs:proc]/mnt/sys/kernel/sem");
  sys.fail("write_fd", 1, EINVAL);
  auto st = write_sysctls(sys, {{"kernel.sem", "bad"}});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "write sysctl key kernel.sem: write_fd: invalid argument");
}

}  // namespace
}  // namespace berth::linux
