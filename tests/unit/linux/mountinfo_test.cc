// linux/mountinfo: parsing (escapes, optional fields) and the mount holding a path.
#include <gtest/gtest.h>

#include "linux/mountinfo.h"

namespace berth::linux {
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

TEST(Mountinfo, MalformedLineIsAnError) {
  EXPECT_FALSE(parse_mountinfo("27 1 254:0 / /\n"));
}

}  // namespace
}  // namespace berth::linux
