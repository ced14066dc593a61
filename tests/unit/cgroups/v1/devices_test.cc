// v1 devices and freezer controllers on a fake tree.
#include <gtest/gtest.h>

#include "unit/cgroups/fixture.h"

namespace berth::cgroups::testing {
namespace {

DeviceRule rule(const char* line, bool allow) { return parse_rule(line, allow).value(); }

TEST(CgroupsV1Devices, DenyAllThenTheAllowList) {
  CgroupFixture f(Layout::kV1);
  std::vector<DeviceRule> rules = {rule("a", false), rule("c 1:3 rwm", true), rule("c 136:* rwm", true)};
  auto m = f.create(spec::Resources{}, rules);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("devices", "devices.deny"), "a");
  // One write per rule through one open file: the fake shows them back to back.
  EXPECT_EQ(f.file("devices", "devices.allow"), "c 1:3 rwmc 136:* rwm");
}

TEST(CgroupsV1Devices, UpdateWritesOnlyTheDifference) {
  CgroupFixture f(Layout::kV1);
  auto m = f.create(spec::Resources{}, {rule("a", false), rule("c 1:3 rwm", true), rule("c 1:5 rwm", true)});
  ASSERT_TRUE(m) << failure(m);
  f.set_file("devices", "devices.allow", "");
  f.set_file("devices", "devices.deny", "");
  f.set_file("devices", "devices.list", "c 1:3 rwm\nc 1:5 rwm\n");  // what the kernel would show
  std::vector<DeviceRule> next = {rule("a", false), rule("c 1:3 rwm", true), rule("c 195:* rw", true)};
  ASSERT_TRUE(m->update(spec::Resources{}, &next));
  EXPECT_EQ(f.file("devices", "devices.deny"), "c 1:5 rwm");
  EXPECT_EQ(f.file("devices", "devices.allow"), "c 195:* rw");
  // An update without devices leaves them alone.
  f.set_file("devices", "devices.deny", "");
  ASSERT_TRUE(m->update(spec::Resources{}));
  EXPECT_EQ(f.file("devices", "devices.deny"), "");
}

TEST(CgroupsV1Devices, EmptyListLeavesTheControllerAlone) {
  CgroupFixture f(Layout::kV1);
  auto m = f.create(spec::Resources{});
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("devices", "devices.deny"), "");
  EXPECT_EQ(f.file("devices", "devices.allow"), "");
}

TEST(CgroupsV1Freezer, FreezeThaw) {
  CgroupFixture f(Layout::kV1);
  auto m = f.create(spec::Resources{});
  ASSERT_TRUE(m) << failure(m);
  EXPECT_FALSE(m->frozen().value());
  ASSERT_TRUE(m->freeze());
  EXPECT_EQ(f.file("freezer", "freezer.state"), "FROZEN");
  EXPECT_TRUE(m->frozen().value());
  ASSERT_TRUE(m->thaw());
  EXPECT_EQ(f.file("freezer", "freezer.state"), "THAWED");
  EXPECT_FALSE(m->frozen().value());
}

}  // namespace
}  // namespace berth::cgroups::testing
