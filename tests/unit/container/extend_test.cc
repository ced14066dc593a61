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

TEST(MergeEdits, NodesInABoundDevAreOnlyCheckedAndLinksThereLeftToTheSource) {
  Merged m;
  m.plan.setup_dev = false;  // a bind mount at /dev
  devices::Edits e;
  e.nodes = {{"/dev/nvidia0", "/dev/nvidia0", 'c', 195, 0, 0666, 0, 0, "rwm"},
             {"/opt/dev/x", "/dev/x", 'c', 10, 1, 0666, 0, 0, "rw"}};
  e.symlinks = {{"../card1", "/dev/dri/by-path/pci-0000:06:00.0-card"}, {"libcuda.so.1", "/usr/lib/libcuda.so"}};
  merge_edits(e, m.plan, m.process, m.rules, false);
  ASSERT_EQ(m.plan.devices.size(), 2u);
  EXPECT_TRUE(m.plan.devices[0].existing) << "never made in the bind's source";
  EXPECT_FALSE(m.plan.devices[1].existing) << "outside /dev, made as usual";
  ASSERT_EQ(m.rules.size(), 2u) << "the cgroup still allows them";
  ASSERT_EQ(m.plan.links.size(), 1u);
  EXPECT_EQ(m.plan.links[0].path, "/usr/lib/libcuda.so");
}

}  // namespace
}  // namespace berth::container
