// merge_edits: device-module Edits folded into the process and the rootfs plan.
#include "container/extend.h"

#include <gtest/gtest.h>

namespace berth::container {
namespace {

struct Merged {
  linux::rootfs::RootfsPlan plan;
  spec::Process process;
  std::vector<spec::DeviceRule> rules;
};

TEST(MergeEdits, EnvReplacesTheSameNameInPlace) {
  Merged m;
  m.process.env = {"PATH=/bin", "NVIDIA_VISIBLE_DEVICES=all", "A=1", "NVIDIA_VISIBLE_DEVICES=dup", "AB=2"};
  devices::Edits e;
  e.env = {"NVIDIA_VISIBLE_DEVICES=void", "A=3", "NEW=x", "NEW=y"};
  merge_edits(e, m.plan, m.process, m.rules, false);
  // The image's value would win at getenv() if the edit were appended after it.
  EXPECT_EQ(m.process.env, (std::vector<std::string>{"PATH=/bin", "NVIDIA_VISIBLE_DEVICES=void", "A=3", "AB=2", "NEW=y"}));
}

TEST(MergeEdits, AdditionalGidsOnce) {
  Merged m;
  m.process.user.additional_gids = {44};
  devices::Edits e;
  e.additional_gids = {44, 45};
  merge_edits(e, m.plan, m.process, m.rules, false);
  EXPECT_EQ(m.process.user.additional_gids, (std::vector<uint32_t>{44, 45}));
}

}  // namespace
}  // namespace berth::container
