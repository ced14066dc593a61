// DeviceState: the v1 devices semantics, and the v1 write sequences derived from it.
#include "cgroups/common/device_state.h"

#include <gtest/gtest.h>

namespace berth::cgroups {
namespace {

DeviceRule rule(const char* line, bool allow) { return parse_rule(line, allow).value(); }

std::vector<DeviceRule> docker_like() {
  std::vector<DeviceRule> r = {rule("a", false)};
  for (const auto& d : default_allowed_devices()) r.push_back(d);
  return r;
}

TEST(CgroupsDeviceState, DenyAllThenAllowList) {
  auto s = DeviceState::from_rules(docker_like());
  EXPECT_FALSE(s.default_allow());
  EXPECT_EQ(s.exceptions().size(), default_allowed_devices().size());
  EXPECT_TRUE(s.allows('c', 1, 3, kRead | kWrite));    // /dev/null
  EXPECT_TRUE(s.allows('c', 136, 7, kRead));           // a pty
  EXPECT_TRUE(s.allows('b', 8, 0, kMknod));            // mknod of any block device
  EXPECT_FALSE(s.allows('b', 8, 0, kRead));            // but not reading it
  EXPECT_FALSE(s.allows('c', 1, 1, kRead));            // /dev/mem
  EXPECT_TRUE(s.allows('c', 1, 3, kAllAccess));
}

TEST(CgroupsDeviceState, AllowAllThenDeny) {
  auto s = DeviceState::from_rules({rule("a", true), rule("c 1:3 w", false)});
  EXPECT_TRUE(s.default_allow());
  EXPECT_TRUE(s.allows('c', 1, 3, kRead));
  EXPECT_FALSE(s.allows('c', 1, 3, kRead | kWrite));  // shares the denied bit
  EXPECT_TRUE(s.allows('b', 1, 3, kWrite));
}

TEST(CgroupsDeviceState, SamePolarityNarrowsExactMatchOnly) {
  auto s = DeviceState::from_rules({rule("a", false), rule("c 1:3 rwm", true), rule("c 1:3 w", false),
                                    rule("c *:* m", false)});
  ASSERT_EQ(s.exceptions().size(), 1u);
  EXPECT_EQ(to_string(s.exceptions()[0]), "c 1:3 rm");  // "c *:* m" does not touch 1:3
  s.apply(rule("c 1:3 rm", false));
  EXPECT_TRUE(s.exceptions().empty());
}

TEST(CgroupsDeviceState, OppositePolarityMerges) {
  auto s = DeviceState::from_rules({rule("a", false), rule("c 1:3 r", true), rule("c 1:3 w", true)});
  ASSERT_EQ(s.exceptions().size(), 1u);
  EXPECT_EQ(to_string(s.exceptions()[0]), "c 1:3 rw");
}

TEST(CgroupsDeviceState, LaterAllResets) {
  auto s = DeviceState::from_rules({rule("a", false), rule("c 1:3 rwm", true), rule("a", true)});
  EXPECT_TRUE(s.default_allow());
  EXPECT_TRUE(s.exceptions().empty());
}

TEST(CgroupsDeviceState, FromList) {
  auto s = DeviceState::from_list("c 1:3 rwm\nc 136:* rwm\n");
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->default_allow());
  EXPECT_TRUE(s->exact());
  EXPECT_EQ(s->exceptions().size(), 2u);
  auto all = DeviceState::from_list("a *:* rwm\n");
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->default_allow());
  EXPECT_FALSE(all->exact());
  EXPECT_TRUE(DeviceState::from_list("")->exceptions().empty());
}

TEST(CgroupsDeviceState, TransitionFromUnknownResets) {
  auto from = DeviceState::from_list("a *:* rwm").value();
  auto to = DeviceState::from_rules({rule("a", false), rule("c 1:3 rwm", true)});
  std::vector<DeviceWrite> want = {{false, "a"}, {true, "c 1:3 rwm"}};
  EXPECT_EQ(transition(from, to), want);
}

TEST(CgroupsDeviceState, TransitionBetweenAllowListsWritesTheDifference) {
  auto from = DeviceState::from_list("c 1:3 rwm\nc 1:5 rwm\nc 10:200 rw\n").value();
  auto to = DeviceState::from_rules({rule("a", false), rule("c 1:3 rwm", true),
                                     rule("c 10:200 rwm", true), rule("c 195:* rw", true)});
  // Narrow first (1:5 goes), then widen: /dev/null is never touched.
  std::vector<DeviceWrite> want = {{false, "c 1:5 rwm"}, {true, "c 10:200 m"}, {true, "c 195:* rw"}};
  EXPECT_EQ(transition(from, to), want);
  EXPECT_TRUE(transition(to, to).empty());
}

}  // namespace
}  // namespace berth::cgroups
