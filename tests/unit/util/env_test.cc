// env::merge: one entry per name, at its first position, with its last value.
#include <gtest/gtest.h>

#include "util/env.h"

namespace berth::env {
namespace {

TEST(Env, MergeKeepsTheFirstPositionAndTheLastValue) {
  EXPECT_EQ(merge({"PATH=/bin", "A=1", "B=2", "A=3", "C=", "A=4"}),
            (std::vector<std::string>{"PATH=/bin", "A=4", "B=2", "C="}));
  EXPECT_EQ(merge({"AB=1", "A=2"}), (std::vector<std::string>{"AB=1", "A=2"}));  // names, not prefixes
  EXPECT_EQ(merge({"X", "Y=1", "X=1", "X"}), (std::vector<std::string>{"X", "Y=1"}));  // no '=': the name alone
  EXPECT_EQ(merge({}), std::vector<std::string>{});
}

}  // namespace
}  // namespace berth::env
