// merge_edits and merge_spec_edits: device-module Edits folded into the spec, the process
// and the rootfs plan.
#include "container/extend.h"

#include <gtest/gtest.h>
#include <sys/mount.h>

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

TEST(MergeEdits, AModulesTmpfsComesBeforeItsBindsAndIsReadOnlyAtTheEnd) {
  Merged m;
  m.plan.mounts.push_back({});  // a spec mount: stays first
  m.plan.mounts[0].destination = "/proc";
  devices::Edits e;
  e.tmpfs = {"/usr/lib64/"};
  e.mounts = {{"/host/libcuda.so.1", "/usr/lib64/libcuda.so.1", {"ro", "nosuid", "nodev"}}};
  merge_edits(e, m.plan, m.process, m.rules, false);
  ASSERT_EQ(m.plan.mounts.size(), 3u);
  EXPECT_EQ(m.plan.mounts[0].destination, "/proc");
  const auto& t = m.plan.mounts[1];
  EXPECT_EQ(t.destination, "/usr/lib64");
  EXPECT_EQ(t.type, "tmpfs");
  EXPECT_EQ(t.kind, linux::rootfs::MountKind::kFilesystem);
  EXPECT_TRUE(t.defer_ro) << "read-only once the links are made";
  EXPECT_EQ(t.opts.flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC), static_cast<unsigned long>(MS_NOSUID | MS_NODEV | MS_NOEXEC));
  EXPECT_EQ(m.plan.mounts[2].destination, "/usr/lib64/libcuda.so.1");
  EXPECT_EQ(m.plan.mounts[2].kind, linux::rootfs::MountKind::kBind);
}

TEST(MergeEdits, AModulesTmpfsCarriesTheMountLabel) {
  Merged m;
  m.plan.mount_label = "system_u:object_r:container_file_t:s0:c1,c2";
  devices::Edits e;
  e.tmpfs = {"/usr/lib64"};
  merge_edits(e, m.plan, m.process, m.rules, false);
  ASSERT_EQ(m.plan.mounts.size(), 1u);
  EXPECT_EQ(m.plan.mounts[0].opts.data_string(), "mode=0755,context=\"system_u:object_r:container_file_t:s0:c1,c2\"");
}

spec::Spec with_netns() {
  spec::Spec s;
  s.linux.emplace();
  s.linux->namespaces = {{"mount", ""}, {"network", ""}};
  return s;
}

devices::StagedHook hook(const std::string& stage, const std::string& path) { return {stage, {path, {}, {}, {}}}; }

TEST(MergeSpecEdits, HooksJoinTheirStageAfterTheSpecsOwn) {
  spec::Spec s = with_netns();
  s.hooks.emplace();
  s.hooks->poststart = {{"/spec/poststart", {}, {}, {}}};
  devices::Edits e;
  for (const char* stage : {"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"})
    e.hooks.push_back(hook(stage, std::string("/cdi/") + stage));
  auto changed = merge_spec_edits(e, s);
  ASSERT_TRUE(changed) << changed.error().message();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(e.hooks.empty()) << "consumed";
  EXPECT_EQ(s.hooks->prestart.at(0).path, "/cdi/prestart");
  EXPECT_EQ(s.hooks->create_runtime.at(0).path, "/cdi/createRuntime");
  EXPECT_EQ(s.hooks->create_container.at(0).path, "/cdi/createContainer");
  EXPECT_EQ(s.hooks->start_container.at(0).path, "/cdi/startContainer");
  ASSERT_EQ(s.hooks->poststart.size(), 2u);
  EXPECT_EQ(s.hooks->poststart[0].path, "/spec/poststart");
  EXPECT_EQ(s.hooks->poststart[1].path, "/cdi/poststart");
  EXPECT_EQ(s.hooks->poststop.at(0).path, "/cdi/poststop");
}

TEST(MergeSpecEdits, NothingToMergeLeavesTheSpecAlone) {
  spec::Spec s = with_netns();
  devices::Edits e;
  e.env = {"A=1"};
  auto changed = merge_spec_edits(e, s);
  ASSERT_TRUE(changed);
  EXPECT_FALSE(*changed);
  EXPECT_FALSE(s.hooks);
  EXPECT_EQ(e.env.size(), 1u) << "the rest is for merge_edits";
}

TEST(MergeSpecEdits, NetDevicesJoinLinuxNetDevices) {
  spec::Spec s = with_netns();
  s.linux->net_devices["eth1"] = {"net1"};
  devices::Edits e;
  e.net_devices["eth1"] = {"net1"};  // the same move twice is no conflict
  e.net_devices["eth2"] = {""};
  s.linux->net_devices["eth3"] = {"net%d"};
  e.net_devices["eth4"] = {"net%d"};  // numbered by the kernel: no clash
  auto changed = merge_spec_edits(e, s);
  ASSERT_TRUE(changed) << changed.error().message();
  EXPECT_EQ(s.linux->net_devices.size(), 4u);
  EXPECT_EQ(s.linux->net_devices.at("eth2").name, "");
  EXPECT_EQ(s.linux->net_devices.at("eth4").name, "net%d");
}

TEST(MergeSpecEdits, NetDeviceConflictsAreErrors) {
  spec::Spec s = with_netns();
  s.linux->net_devices["eth1"] = {"net1"};
  devices::Edits renamed;
  renamed.net_devices["eth1"] = {"gpu0"};
  auto r = merge_spec_edits(renamed, s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "CDI netDevices: eth1 is moved as net1 by linux.netDevices and as gpu0 by a CDI device");
  devices::Edits same_name;
  same_name.net_devices["eth7"] = {"net1"};
  r = merge_spec_edits(same_name, s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "CDI netDevices: eth7 and eth1 would both be net1 in the container");
  devices::Edits keeps_name;  // an empty name keeps the host's, and net1 is taken inside
  keeps_name.net_devices["net1"] = {""};
  EXPECT_FALSE(merge_spec_edits(keeps_name, s));
}

TEST(MergeSpecEdits, NetDevicesNeedANetworkNamespace) {
  spec::Spec s = with_netns();
  s.linux->namespaces = {{"mount", ""}};
  devices::Edits e;
  e.net_devices["eth1"] = {"net1"};
  auto r = merge_spec_edits(e, s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(),
            "CDI netDevices (eth1): unable to move network devices without a private NET namespace (linux.namespaces)");
}

}  // namespace
}  // namespace berth::container
