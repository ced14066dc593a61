// devices::rdma on the fake sysfs of tests/fixtures/rdma: exact device names, uverbs
// numbering independent of device numbering, netdevs and link layers, rdma_cm, and the
// request annotation (org.berth.rdma.devices) turned into nodes, rules and netns moves.
#include <gtest/gtest.h>

#include <algorithm>

#include "container/extend.h"
#include "devices/rdma/host.h"
#include "devices/rdma/request.h"

namespace berth::devices::rdma {
namespace {

HostView fixture() { return HostView{std::string(BERTH_SOURCE_DIR) + "/tests/fixtures/rdma/sys", "/hostdev"}; }

std::vector<std::string> names(const std::vector<CharNode>& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes) out.push_back(n.name + "=" + std::to_string(n.major) + ":" + std::to_string(n.minor));
  return out;
}

spec::Spec asking(const std::string& value) {
  spec::Spec s;
  s.annotations[kAnnotation] = value;
  return s;
}

std::vector<std::string> node_lines(const Edits& e) {
  std::vector<std::string> out;
  for (const auto& n : e.nodes)
    out.push_back(n.container_path + " " + std::string(1, n.type) + " " + std::to_string(n.major) + ":" +
                  std::to_string(n.minor) + " " + n.access + " from " + n.host_path);
  return out;
}

TEST(RdmaHost, ParseDev) {
  auto d = parse_dev("231:192\n");
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(d->first, 231u);
  EXPECT_EQ(d->second, 192u);
  EXPECT_FALSE(parse_dev("231"));
  EXPECT_FALSE(parse_dev("a:1"));
  EXPECT_FALSE(parse_dev("4096:1"));  // majors have 12 bits
  EXPECT_FALSE(parse_dev(""));
}

TEST(RdmaHost, DeviceNamesAreSorted) {
  auto n = device_names(fixture());
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_EQ(*n, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_10", "rxe0"}));
  HostView empty{"/nonexistent-sysfs", "/dev"};
  auto none = device_names(empty);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST(RdmaHost, ExactNameNotPrefix) {
  // mlx5_1 must not get mlx5_10's uverbs2/umad2/issm2/umad3/issm3.
  auto d = resolve(fixture(), "mlx5_1");
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(names(d->nodes), (std::vector<std::string>{"uverbs0=231:192", "issm1=231:65", "umad1=231:1"}));
  auto ten = resolve(fixture(), "mlx5_10");
  ASSERT_TRUE(ten) << ten.error().message();
  EXPECT_EQ(names(ten->nodes), (std::vector<std::string>{"uverbs2=231:194", "issm2=231:66", "issm3=231:67",
                                                         "umad2=231:2", "umad3=231:3"}));
}

TEST(RdmaHost, UverbsNumberingIsReadNotComputed) {
  // uverbs1 belongs to mlx5_0 (not uverbs0), and its number comes from its dev file.
  auto d = resolve(fixture(), "mlx5_0");
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(names(d->nodes), (std::vector<std::string>{"uverbs1=231:193", "issm0=231:64", "umad0=231:0"}));
}

TEST(RdmaHost, NetdevsAndLinkLayers) {
  auto roce = resolve(fixture(), "mlx5_0");
  ASSERT_TRUE(roce);
  EXPECT_EQ(roce->netdevs, (std::vector<std::string>{"enp59s0f0np0"}));
  EXPECT_EQ(roce->link_layers, (std::vector<std::string>{"Ethernet"}));
  auto ib = resolve(fixture(), "mlx5_1");
  ASSERT_TRUE(ib);
  EXPECT_EQ(ib->netdevs, (std::vector<std::string>{"ib0"}));  // IPoIB, from device/net
  EXPECT_EQ(ib->link_layers, (std::vector<std::string>{"InfiniBand"}));
  auto two = resolve(fixture(), "mlx5_10");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->netdevs, (std::vector<std::string>{"enp94s0f0", "enp94s0f1"}));
  EXPECT_EQ(two->link_layers, (std::vector<std::string>{"Ethernet", "Ethernet"}));
  auto rxe = resolve(fixture(), "rxe0");  // no device/ link: only GID 0 names veth0
  ASSERT_TRUE(rxe);
  EXPECT_EQ(rxe->netdevs, (std::vector<std::string>{"veth0"}));
  EXPECT_EQ(names(rxe->nodes), (std::vector<std::string>{"uverbs3=231:195"}));
}

TEST(RdmaHost, DeviceOfAnotherNamespaceKnownByItsNodes) {
  // Exclusive mode: mlx5_3 lives in a pod's namespace, so class/infiniband (tagged by
  // namespace) hides it from the runtime; its uverbs and umad nodes still name it.
  auto d = resolve(fixture(), "mlx5_3");
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(names(d->nodes), (std::vector<std::string>{"uverbs4=231:196", "umad4=231:4"}));
  EXPECT_TRUE(d->netdevs.empty());
  auto n = device_names(fixture());
  ASSERT_TRUE(n);
  EXPECT_EQ(std::count(n->begin(), n->end(), "mlx5_3"), 0) << "\"all\" means the runtime namespace's devices";
}

TEST(RdmaHost, UnknownDeviceIsEnodev) {
  auto d = resolve(fixture(), "mlx5_2");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().err(), ENODEV);
  EXPECT_NE(d.error().message().find("rdma device mlx5_2"), std::string::npos) << d.error().message();
}

TEST(RdmaHost, RdmaCmFromMisc) {
  auto cm = rdma_cm(fixture());
  ASSERT_TRUE(cm);
  ASSERT_TRUE(cm->has_value());
  EXPECT_EQ(**cm, (CharNode{"rdma_cm", 10, 58}));
  auto none = rdma_cm(HostView{"/nonexistent-sysfs", "/dev"});
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
}

TEST(RdmaRequest, ParseAnnotation) {
  auto none = parse_request(spec::Spec{});
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  auto empty = parse_request(asking(" , "));
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->has_value());
  auto two = parse_request(asking(" mlx5_1 ,mlx5_0,mlx5_1"));
  ASSERT_TRUE(two);
  ASSERT_TRUE(two->has_value());
  EXPECT_FALSE((*two)->all);
  EXPECT_EQ((*two)->names, (std::vector<std::string>{"mlx5_1", "mlx5_0"}));
  auto all = parse_request(asking("all"));
  ASSERT_TRUE(all && all->has_value());
  EXPECT_TRUE((*all)->all);
  auto bad = parse_request(asking("mlx5_0,../x"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind(), ErrorKind::kInvalidSpec);
  EXPECT_NE(bad.error().message().find("annotations[\"org.berth.rdma.devices\"]"), std::string::npos);
}

TEST(RdmaRequest, EditsForOneDevice) {
  auto e = edits(asking("mlx5_1"), fixture());
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(node_lines(*e), (std::vector<std::string>{
                                "/dev/infiniband/uverbs0 c 231:192 rw from /hostdev/infiniband/uverbs0",
                                "/dev/infiniband/issm1 c 231:65 rw from /hostdev/infiniband/issm1",
                                "/dev/infiniband/umad1 c 231:1 rw from /hostdev/infiniband/umad1",
                                "/dev/infiniband/rdma_cm c 10:58 rw from /hostdev/infiniband/rdma_cm",
                            }));
  EXPECT_TRUE(e->env.empty());
  EXPECT_TRUE(e->mounts.empty());
}

// Without host nodes to copy (this fake host's /hostdev does not exist): the kernel's
// defaults, never a blanket 0666 for the management nodes. The modes of real host nodes
// are copied (GpuRdma.GpusAndAnAdapterInOneContainer, with mknod'ed nodes).
TEST(RdmaRequest, ModesWithoutHostNodesAreTheKernelDefaults) {
  auto e = edits(asking("mlx5_1"), fixture());
  ASSERT_TRUE(e) << e.error().message();
  std::vector<std::string> modes;
  for (const auto& n : e->nodes)
    modes.push_back(n.container_path + " " + std::to_string(n.mode) + " " + std::to_string(n.uid) + ":" + std::to_string(n.gid));
  EXPECT_EQ(modes, (std::vector<std::string>{
                       "/dev/infiniband/uverbs0 " + std::to_string(0666) + " 0:0",
                       "/dev/infiniband/issm1 " + std::to_string(0600) + " 0:0",
                       "/dev/infiniband/umad1 " + std::to_string(0600) + " 0:0",
                       "/dev/infiniband/rdma_cm " + std::to_string(0666) + " 0:0",
                   }));
}

TEST(RdmaRequest, EditsForAll) {
  auto e = edits(asking("all"), fixture());
  ASSERT_TRUE(e) << e.error().message();
  ASSERT_EQ(e->nodes.size(), 3u + 3u + 5u + 1u + 1u);  // mlx5_0, mlx5_1, mlx5_10, rxe0, rdma_cm
  EXPECT_EQ(e->nodes.front().container_path, "/dev/infiniband/uverbs1");
  EXPECT_EQ(e->nodes.back().container_path, "/dev/infiniband/rdma_cm");
}

TEST(RdmaRequest, NothingRequestedNothingRead) {
  auto e = edits(spec::Spec{}, HostView{"/nonexistent-sysfs", "/dev"});
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->empty());
  auto m = netns_moves(spec::Spec{}, HostView{"/nonexistent-sysfs", "/dev"});
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->empty());
}

TEST(RdmaRequest, UnknownDeviceNamesTheHostsDevices) {
  auto e = edits(asking("mlx5_0,mlx5_7"), fixture());
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().err(), ENODEV);
  EXPECT_NE(e.error().message().find("rdma device mlx5_7 not found (this host has: mlx5_0, mlx5_1, mlx5_10, rxe0)"),
            std::string::npos)
      << e.error().message();
  auto all = edits(asking("all"), HostView{"/nonexistent-sysfs", "/dev"});
  ASSERT_FALSE(all);
  EXPECT_NE(all.error().message().find("no rdma device on this host"), std::string::npos);
}

TEST(RdmaRequest, NetnsMovesCarryInterfaces) {
  auto m = netns_moves(asking("mlx5_1,mlx5_0"), fixture());
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].device, "mlx5_1");
  EXPECT_EQ((*m)[0].netdevs, (std::vector<std::string>{"ib0"}));
  EXPECT_EQ((*m)[1].device, "mlx5_0");
  EXPECT_EQ((*m)[1].netdevs, (std::vector<std::string>{"enp59s0f0np0"}));
}

TEST(RdmaRequest, MergedIntoPlanWithDeviceRules) {
  auto e = edits(asking("rxe0"), fixture());
  ASSERT_TRUE(e) << e.error().message();
  linux::rootfs::RootfsPlan plan;
  spec::Process process;
  std::vector<spec::DeviceRule> rules;
  container::merge_edits(*e, plan, process, rules, false);
  ASSERT_EQ(plan.devices.size(), 2u);
  EXPECT_EQ(plan.devices[0].path, "/dev/infiniband/uverbs3");
  EXPECT_FALSE(plan.devices[0].bind);
  EXPECT_EQ(plan.devices[1].path, "/dev/infiniband/rdma_cm");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_TRUE(rules[0].allow);
  EXPECT_EQ(rules[0].type, "c");
  EXPECT_EQ(rules[0].major.value_or(-1), 231);
  EXPECT_EQ(rules[0].minor.value_or(-1), 195);
  EXPECT_EQ(rules[0].access, "rw");
  EXPECT_EQ(rules[1].major.value_or(-1), 10);
  EXPECT_EQ(rules[1].minor.value_or(-1), 58);
  // In a user namespace the nodes are bound from the host's /dev (mknod is refused there).
  linux::rootfs::RootfsPlan userns;
  rules.clear();
  container::merge_edits(*e, userns, process, rules, true);
  ASSERT_EQ(userns.devices.size(), 2u);
  EXPECT_TRUE(userns.devices[0].bind);
  EXPECT_EQ(userns.devices[0].host_path, "/hostdev/infiniband/uverbs3");
}

}  // namespace
}  // namespace berth::devices::rdma
