// util/mountinfo: parsing (escapes, optional fields) and the mount holding a path.
#include <gtest/gtest.h>

#include "util/mountinfo.h"

namespace berth {
namespace {

constexpr const char* kText =
    "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    "30 27 0:5 / /var/lib rw master:3 shared:4 - ext4 /dev/vdb rw,discard\n"
    "31 30 0:6 /sub /var/lib/with\\040space ro - tmpfs tmpfs ro\n";

TEST(Mountinfo, ParsesFieldsAndEscapes) {
  auto m = parse_mountinfo(kText);
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ((*m)[1].optional, "master:3 shared:4");
  EXPECT_TRUE((*m)[1].shared());
  EXPECT_EQ((*m)[2].mountpoint, "/var/lib/with space");
  EXPECT_EQ((*m)[2].root, "/sub");
  EXPECT_EQ((*m)[2].fstype, "tmpfs");
  EXPECT_EQ((*m)[1].super_options, "rw,discard");
}

TEST(Mountinfo, MountContaining) {
  auto m = parse_mountinfo(kText);
  ASSERT_TRUE(m);
  EXPECT_EQ(mount_containing(*m, "/var/lib/x")->mountpoint, "/var/lib");
  EXPECT_EQ(mount_containing(*m, "/var/library")->mountpoint, "/");
  EXPECT_EQ(mount_containing(*m, "/var/lib/with space/a")->mountpoint, "/var/lib/with space");
}

// Found by fuzz_mountinfo (tests/fuzz/corpus/mountinfo/regression-escape-*): this parser
// took "\\755" (above a byte) literally but cgroups' copy decoded it as 0xed, and it read
// "\\<tab>12" as an escape (strtoull skips whitespace). Both now share this function.
TEST(Mountinfo, OnlyThreeOctalDigitsOfAByteAreAnEscape) {
  EXPECT_EQ(unescape_mountinfo("/a\\040b\\011c\\012d\\134e"), "/a b\tc\nd\\e");
  EXPECT_EQ(unescape_mountinfo("\\377\\000"), std::string("\xff\0", 2));
  for (const char* kept : {"\\755", "\\400", "\\\t12", "\\ 12", "\\+12", "\\08x", "\\04", "\\", "a\\0"})
    EXPECT_EQ(unescape_mountinfo(kept), kept);
  auto m = parse_mountinfo("28 25 0:25 /x\\755 /sys/fs/cgroup/cpu\\\t12 rw master:12 - cgroup cgroup rw,cpu\n");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ((*m)[0].root, "/x\\755");
  EXPECT_EQ((*m)[0].mountpoint, "/sys/fs/cgroup/cpu\\\t12");
}

TEST(Mountinfo, MalformedLineIsAnError) {
  EXPECT_FALSE(parse_mountinfo("27 1 254:0 / /\n"));
}

}  // namespace
}  // namespace berth
