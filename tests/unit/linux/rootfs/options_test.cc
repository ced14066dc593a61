// mounts[].options: every word sorted into flags to set or clear, propagation, recursive
// attributes, extensions and filesystem data; the exported list for `features`.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <algorithm>

#include "linux/rootfs/options.h"

namespace berth::linux::rootfs {
namespace {

TEST(MountOptions, FlagsAndClears) {
  auto o = parse_mount_options({"ro", "nosuid", "nodev", "noexec", "rw", "suid"});
  EXPECT_EQ(o.flags, static_cast<unsigned long>(MS_NODEV | MS_NOEXEC));
  EXPECT_EQ(o.clear, static_cast<unsigned long>(MS_RDONLY | MS_NOSUID));
}

TEST(MountOptions, LastWins) {
  EXPECT_TRUE(parse_mount_options({"rw", "ro"}).flags & MS_RDONLY);
  EXPECT_FALSE(parse_mount_options({"ro", "rw"}).flags & MS_RDONLY);
}

TEST(MountOptions, PropagationInOrder) {
  auto o = parse_mount_options({"rbind", "rslave", "shared"});
  EXPECT_EQ(o.flags, static_cast<unsigned long>(MS_BIND | MS_REC));
  EXPECT_EQ(o.propagation, (std::vector<unsigned long>{MS_SLAVE | MS_REC, MS_SHARED}));
}

TEST(MountOptions, RecursiveAttributes) {
  auto o = parse_mount_options({"rro", "rnosuid", "rnodev", "rnoexec", "rnodiratime", "rnosymfollow"});
  ASSERT_TRUE(o.has_recursive);
  EXPECT_EQ(o.recursive.attr_set, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |
                                      MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_NOSYMFOLLOW);
  EXPECT_EQ(o.recursive.attr_clr, 0u);
  auto c = parse_mount_options({"rro", "rrw"});
  EXPECT_EQ(c.recursive.attr_set, 0u);
  EXPECT_EQ(c.recursive.attr_clr, MOUNT_ATTR_RDONLY);
}

TEST(MountOptions, AtimeFamilyIsOneField) {
  auto o = parse_mount_options({"rnoatime", "rstrictatime"});
  EXPECT_EQ(o.recursive.attr_set, MOUNT_ATTR_STRICTATIME);
  EXPECT_EQ(o.recursive.attr_clr, MOUNT_ATTR__ATIME);
  auto r = parse_mount_options({"rnoatime", "ratime"});
  EXPECT_EQ(r.recursive.attr_set, 0u) << "back to relatime";
}

TEST(MountOptions, ExtensionsAndData) {
  auto o = parse_mount_options({"tmpcopyup", "ridmap", "mode=755", "size=1m", ""});
  EXPECT_TRUE(o.tmpcopyup);
  EXPECT_TRUE(o.idmap);
  EXPECT_TRUE(o.idmap_recursive);
  EXPECT_EQ(o.data_string(), "mode=755,size=1m");
  auto i = parse_mount_options({"idmap"});
  EXPECT_TRUE(i.idmap);
  EXPECT_FALSE(i.idmap_recursive);
}

TEST(MountOptions, KnownOptionsCoverEveryTable) {
  auto known = known_mount_options();
  for (const char* name : {"ro", "rbind", "rprivate", "rro", "rnoatime", "tmpcopyup", "idmap", "ridmap", "nosymfollow",
                           "lazytime", "strictatime", "runbindable"})
    EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << name;
  for (const auto& k : known) {
    auto o = parse_mount_options({k});
    EXPECT_TRUE(o.data.empty()) << k << " is known but parsed as filesystem data";
  }
}

}  // namespace
}  // namespace berth::linux::rootfs
