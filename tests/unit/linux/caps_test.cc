// process.capabilities as create and exec resolve them: unknown names are dropped (runc's
// leniency, which engines rely on), known ones map to their bits in every set.
#include <gtest/gtest.h>
#include <linux/capability.h>

#include "linux/caps.h"

namespace berth::linux {
namespace {

TEST(LinuxCaps, UnknownNamesAreDroppedNotRefused) {
  spec::Capabilities c;
  c.bounding = {"CAP_KILL", "CAP_NOPE", "CAP_TEST", "cap_chown"};
  c.effective = {"CAP_KILL", "CAP_NOPE"};
  auto sets = caps_from_spec(c, "process.capabilities");
  ASSERT_TRUE(sets.ok()) << sets.error().message();
  EXPECT_EQ(sets->bounding, uint64_t{1} << CAP_KILL) << "names are case-sensitive, as runc's";
  EXPECT_EQ(sets->effective, uint64_t{1} << CAP_KILL);
  EXPECT_EQ(sets->permitted, 0u);
}

TEST(LinuxCaps, ResolveListsEachIgnoredName) {
  spec::Capabilities c;
  c.bounding = {"CAP_NET_ADMIN", "CAP_FUTURE"};
  c.ambient = {"CAP_FUTURE"};
  std::vector<std::string> ignored;
  CapSets s = resolve_caps(c, &ignored);
  EXPECT_EQ(s.bounding, uint64_t{1} << CAP_NET_ADMIN);
  EXPECT_EQ(s.ambient, 0u);
  EXPECT_EQ(ignored, (std::vector<std::string>{"CAP_FUTURE", "CAP_FUTURE"}));
}

}  // namespace
}  // namespace berth::linux
