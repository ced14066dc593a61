// linux.mountLabel's host side: the SELinux probe against fake host trees (selinuxfs
// mounted and answering, or not), the label check that keeps a label from ending its
// context= option early, and the fscreate write through procfs only.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "linux/selinux.h"
#include "support/fakes/recording_sys.h"

namespace berth::linux {
namespace {

namespace fs = std::filesystem;

// A fake host root: proc/self/mounts with `mounts`, and sys/fs/selinux/enforce holding
// `enforce` unless it is null.
class FakeHost {
 public:
  FakeHost(const std::string& mounts, const char* enforce) {
    char tmpl[] = "/tmp/berth-selinux-XXXXXX";
    root_ = ::mkdtemp(tmpl);
    fs::create_directories(root_ + "/proc/self");
    fs::create_directories(root_ + "/sys/fs/selinux");
    std::ofstream(root_ + "/proc/self/mounts") << mounts;
    if (enforce) std::ofstream(root_ + "/sys/fs/selinux/enforce") << enforce;
  }
  ~FakeHost() { fs::remove_all(root_); }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

constexpr char kPlainMounts[] =
    "/dev/vda / ext4 rw,relatime 0 0\n"
    "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n";
constexpr char kSelinuxMounts[] =
    "/dev/vda / ext4 rw,relatime 0 0\n"
    "selinuxfs /sys/fs/selinux selinuxfs rw,nosuid,noexec,relatime 0 0\n";

TEST(Selinux, EnforcingAndPermissiveHostsHaveIt) {
  EXPECT_TRUE(selinux_enabled(FakeHost(kSelinuxMounts, "1\n").root()));
  EXPECT_TRUE(selinux_enabled(FakeHost(kSelinuxMounts, "0").root()));
}

TEST(Selinux, ADirectoryWithoutSelinuxfsIsNotSelinux) {
  // Debian's selinux packages leave /sys/fs/selinux; a plain file there proves nothing.
  EXPECT_FALSE(selinux_enabled(FakeHost(kPlainMounts, "1\n").root()));
}

TEST(Selinux, SelinuxfsWithoutAnAnsweringEnforceIsNotSelinux) {
  EXPECT_FALSE(selinux_enabled(FakeHost(kSelinuxMounts, nullptr).root()));
  EXPECT_FALSE(selinux_enabled(FakeHost(kSelinuxMounts, "").root()));
  EXPECT_FALSE(selinux_enabled(FakeHost(kSelinuxMounts, "yes").root()));
}

TEST(Selinux, AnotherFilesystemAtTheMountPointIsNotSelinux) {
  EXPECT_FALSE(selinux_enabled(FakeHost("tmpfs /sys/fs/selinux tmpfs rw 0 0\n", "1").root()));
}

TEST(Selinux, AMissingRootIsNotSelinux) { EXPECT_FALSE(selinux_enabled("/nonexistent/berth-root")); }

TEST(Selinux, ContextOptionQuotesTheLabel) {
  EXPECT_EQ(context_option("system_u:object_r:container_file_t:s0:c1,c2"),
            "context=\"system_u:object_r:container_file_t:s0:c1,c2\"");
}

TEST(Selinux, LabelsThatCouldEndTheOptionAreRefused) {
  EXPECT_TRUE(check_label("system_u:object_r:container_file_t:s0:c1,c2", "linux.mountLabel"));
  auto quote = check_label("x\",nosuid,context=\"y", "linux.mountLabel");
  ASSERT_FALSE(quote);
  EXPECT_EQ(quote.error().message(), "config.json: linux.mountLabel: a label may not hold quotes or control characters");
  EXPECT_FALSE(check_label(std::string("a\nb"), "linux.mountLabel"));
  EXPECT_FALSE(check_label(std::string("a\0b", 3), "linux.mountLabel"));
  EXPECT_FALSE(check_label("", "linux.mountLabel"));
}

TEST(Selinux, FscreateIsWrittenThroughProcfs) {
  test::RecordingSys sys;
  sys.add_dir("/proc");
  sys.add_mount("/proc", "proc");
  sys.add_dir("/proc/thread-self");
  sys.add_dir("/proc/thread-self/attr");
  sys.add_file("/proc/thread-self/attr/fscreate", "", 0666);
  ASSERT_TRUE(set_fscreate_label(sys, "system_u:object_r:container_file_t:s0"));
  std::string log = sys.log_text();
  EXPECT_NE(log.find("openat(AT_FDCWD, \"/proc/thread-self/attr/fscreate\", O_WRONLY|O_NOFOLLOW)"), std::string::npos) << log;
  EXPECT_NE(log.find("system_u:object_r:container_file_t:s0"), std::string::npos) << log;
}

TEST(Selinux, FscreateOnAnythingButProcfsIsNotWritten) {
  test::RecordingSys sys;
  sys.add_dir("/proc");
  sys.add_dir("/proc/thread-self");
  sys.add_dir("/proc/thread-self/attr");
  sys.add_file("/proc/thread-self/attr/fscreate", "", 0666);
  auto st = set_fscreate_label(sys, "system_u:object_r:container_file_t:s0");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "linux.mountLabel: /proc/thread-self/attr/fscreate is not on procfs");
  EXPECT_EQ(sys.log_text().find("write_fd("), std::string::npos) << sys.log_text();
}

}  // namespace
}  // namespace berth::linux
