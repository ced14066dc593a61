// Device rules: spec conversion, text form, runc's default list.
#include "cgroups/common/device_rule.h"

#include <gtest/gtest.h>

namespace berth::cgroups {
namespace {

TEST(CgroupsDeviceRule, TextRoundTrip) {
  for (const char* line : {"c 1:3 rwm", "b 8:* r", "c *:* m", "c 136:* rw"}) {
    auto r = parse_rule(line, true);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(to_string(*r), line);
  }
  auto all = parse_rule("a", false);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->type, 'a');
  EXPECT_EQ(all->access, kAllAccess);
  EXPECT_EQ(to_string(*all), "a *:* rwm");
}

TEST(CgroupsDeviceRule, ParseRejectsJunk) {
  EXPECT_FALSE(parse_rule("x 1:3 rwm", true));
  EXPECT_FALSE(parse_rule("c 1:3 xyz", true));
  EXPECT_FALSE(parse_rule("c 13 rwm", true));
  EXPECT_FALSE(parse_rule("c a:3 r", true));
  EXPECT_FALSE(parse_access(""));
}

TEST(CgroupsDeviceRule, FromSpec) {
  spec::DeviceRule in;
  in.allow = true;
  in.type = "c";
  in.major = 195;
  in.access = "rw";
  auto r = from_spec(in, "linux.resources.devices[0]");
  ASSERT_TRUE(r);
  EXPECT_EQ(to_string(*r), "c 195:* rw");
  EXPECT_TRUE(r->allow);

  spec::DeviceRule deny_all;  // Docker's first rule: {"allow": false, "access": "rwm"}
  deny_all.access = "rwm";
  auto d = from_spec(deny_all, "x");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->type, 'a');
  EXPECT_FALSE(d->allow);

  spec::DeviceRule no_access;
  no_access.type = "b";
  EXPECT_EQ(from_spec(no_access, "x")->access, kAllAccess);
}

// The access strings runc accepts: any order, repeats, other characters skipped.
TEST(CgroupsDeviceRule, AccessVariantsRuncAccepts) {
  EXPECT_EQ(*parse_access("rwm"), kAllAccess);
  EXPECT_EQ(*parse_access("mwr"), kAllAccess);
  EXPECT_EQ(*parse_access("rwmx"), kAllAccess);
  EXPECT_EQ(*parse_access("rw m"), kAllAccess);
  EXPECT_EQ(*parse_access("rrw"), kRead | kWrite);
  EXPECT_EQ(*parse_access("mm"), kMknod);
  EXPECT_FALSE(parse_access("x"));
  EXPECT_FALSE(parse_access("RWM"));
}

TEST(CgroupsDeviceRule, FromSpecNamesTheField) {
  std::vector<spec::DeviceRule> rules(2);
  rules[1].type = "u";
  auto r = from_spec(rules);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("linux.resources.devices[1].type"), std::string::npos);
  rules[1].type = "c";
  rules[1].access = "RWM";  // no r, w or m: runc's rule fails too
  r = from_spec(rules);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("linux.resources.devices[1].access"), std::string::npos);
}

TEST(CgroupsDeviceRule, DefaultAllowListIsRuncs) {
  std::vector<std::string> lines;
  for (const auto& r : default_allowed_devices()) {
    EXPECT_TRUE(r.allow);
    lines.push_back(to_string(r));
  }
  std::vector<std::string> want = {"c *:* m",    "b *:* m",   "c 1:3 rwm", "c 1:8 rwm",
                                   "c 1:7 rwm",  "c 5:0 rwm", "c 1:5 rwm", "c 1:9 rwm",
                                   "c 136:* rwm", "c 5:2 rwm", "c 10:200 rwm"};
  EXPECT_EQ(lines, want);
}

}  // namespace
}  // namespace berth::cgroups
