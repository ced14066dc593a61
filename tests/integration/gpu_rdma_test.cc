// GPUs and RDMA adapters in real busybox containers against the fake host (BERTH_CONFIG):
// GPUDirect RDMA wants both in one container (the fixture's rdma.sysRoot is the mlx5 fake
// sysfs of tests/fixtures/rdma, its devRoot holds the matching nodes), DRI nodes with the
// host's mode and group, and host nodes in user namespaces (named when missing, never made).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "fixtures/gpu/integration_fixture.h"

namespace berth::test::gpu {
namespace {

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// The host's network namespace: RDMA devices move only into a namespace of the container's
// own (exclusive rdma netns mode), which this host, without RDMA, cannot show.
void host_network(Bundle& b) {
  auto& ns = b.spec().linux->namespaces;
  ns.erase(std::remove_if(ns.begin(), ns.end(), [](const spec::Namespace& n) { return n.type == "network"; }), ns.end());
}

TEST(GpuRdma, GpusAndAnAdapterInOneContainer) {
  ASSERT_FALSE(fixture().empty());
  Runtime rt;
  Bundle b;
  host_network(b);
  b.spec().process->env.push_back("NVIDIA_VISIBLE_DEVICES=0");
  b.spec().annotations["org.berth.rdma.devices"] = "mlx5_0";
  b.script("exec >/out 2>&1; for n in /dev/infiniband/* /dev/nvidia1 /dev/nvidiactl; do "
           "echo \"$n $(stat -c '%F %t:%T %a %u:%g' $n)\"; done; ls /usr/lib64 | grep -c libcuda.so.550");
  std::string cg = cgroup_for(b, "gpu-rdma");
  GpuRun r = create_start_wait(rt, b, "gpu-rdma", cg);
  ASSERT_EQ(r.create.code, 0) << r.create.err;
  ASSERT_TRUE(r.stopped) << "the container did not finish";
  std::string out = read_file(b.rootfs() + "/out");
  // mlx5_0 is uverbs1 (231:193), umad0 (231:0), issm0 (231:64); rdma_cm is 10:58 (hex below).
  // Modes and owners are the host nodes' (the fixture's umad and issm are 0660 root:44),
  // never a blanket 0666.
  EXPECT_EQ(out,
            "/dev/infiniband/issm0 character special file e7:40 660 0:44\n"
            "/dev/infiniband/rdma_cm character special file a:3a 666 0:0\n"
            "/dev/infiniband/umad0 character special file e7:0 660 0:44\n"
            "/dev/infiniband/uverbs1 character special file e7:c1 666 0:0\n"
            "/dev/nvidia1 character special file c3:1 666 0:0\n"
            "/dev/nvidiactl character special file c3:ff 666 0:0\n"
            "1\n");
  for (const char* rule : {"c 231:193 rw", "c 231:0 rw", "c 231:64 rw", "c 10:58 rw", "c 195:1 rw", "c 195:255 rw"})
    EXPECT_TRUE(contains(r.devices, rule)) << rule << " in\n" << r.devices;
  EXPECT_FALSE(contains(r.devices, "c 231:192 rw")) << "mlx5_1's uverbs0 is not asked for\n" << r.devices;
}

TEST(GpuRdma, EnvGpusStayBesideACdiAdapter) {
  ASSERT_FALSE(fixture().empty());
  std::string spec_path = fixture() + "/cdi/run/hca.json";
  std::ofstream(spec_path) << R"({"cdiVersion":"0.6.0","kind":"example.com/hca","devices":[{"name":"mlx5_1",
    "containerEdits":{"deviceNodes":[{"path":"/dev/infiniband/uverbs0","hostPath":")"
                           << fixture() << R"(/dev/infiniband/uverbs0"}]}}]})";
  Runtime rt;
  Bundle b;
  host_network(b);
  b.spec().process->env.push_back("NVIDIA_VISIBLE_DEVICES=all");
  b.spec().annotations["cdi.k8s.io/hca"] = "example.com/hca=mlx5_1";
  b.script("exec >/out 2>&1; ls /dev/infiniband /dev | grep -E '^(uverbs|nvidia[0-9])'");
  std::string cg = cgroup_for(b, "gpu-cdi-hca");
  GpuRun r = create_start_wait(rt, b, "gpu-cdi-hca", cg);
  std::filesystem::remove(spec_path);
  ASSERT_EQ(r.create.code, 0) << r.create.err;
  ASSERT_TRUE(r.stopped) << "the container did not finish";
  EXPECT_EQ(read_file(b.rootfs() + "/out"), "nvidia0\nnvidia1\nuverbs0\n")
      << "the image's GPUs are kept beside a CDI device of another kind";
}

TEST(GpuRdma, DriNodesKeepTheHostModeAndGroup) {
  ASSERT_FALSE(fixture().empty());
  Runtime rt;
  Bundle b;
  b.spec().process->env.push_back("NVIDIA_VISIBLE_DEVICES=0");
  b.spec().process->env.push_back("NVIDIA_DRIVER_CAPABILITIES=graphics");
  b.script("exec >/out 2>&1; stat -c '%n %a %u %g' /dev/dri/card1 /dev/dri/renderD129");
  std::string cg = cgroup_for(b, "gpu-dri");
  GpuRun r = create_start_wait(rt, b, "gpu-dri", cg);
  ASSERT_EQ(r.create.code, 0) << r.create.err;
  ASSERT_TRUE(r.stopped) << "the container did not finish";
  EXPECT_EQ(read_file(b.rootfs() + "/out"), "/dev/dri/card1 660 0 44\n/dev/dri/renderD129 660 0 44\n")
      << "as the fixture's host nodes (udev's 0660 root:video), not 0666";
}

TEST(GpuRdma, UserNamespaceMissingHostNodeIsNamedAndNothingIsMade) {
  ASSERT_FALSE(fixture().empty());
  TempDir empty("berth-gpu-nodev");
  ScopedConfig cfg("\"devRoot\": \"" + empty.path() + "\"");
  Runtime rt;
  Bundle b;
  auto& l = *b.spec().linux;
  l.namespaces.push_back({"user", ""});
  l.uid_mappings = {{0, 0, 65536}};
  l.gid_mappings = {{0, 0, 65536}};
  b.spec().process->env.push_back("NVIDIA_VISIBLE_DEVICES=0");
  stand_in_proc_driver(b);
  auto r = rt({"create", "--bundle", (b.write(), b.path()), "gpu-userns-nodev"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "device /dev/nvidiactl: host node " + empty.path() +
                                  "/nvidiactl (bound in a user namespace; berth creates no device nodes on the host): "
                                  "no such file or directory")) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(empty.path())) << "nothing was made on the host";
  EXPECT_FALSE(contains(rt({"list"}).out, "gpu-userns-nodev")) << "a failed create leaves nothing behind";
  // Without a user namespace the nodes are made in the container's own /dev: still nothing
  // on the host.
  Bundle plain;
  plain.spec().process->env.push_back("NVIDIA_VISIBLE_DEVICES=0");
  plain.script("exec >/out 2>&1; stat -c '%F' /dev/nvidia1");
  std::string cg = cgroup_for(plain, "gpu-nodev-plain");
  GpuRun ok = create_start_wait(rt, plain, "gpu-nodev-plain", cg);
  ASSERT_EQ(ok.create.code, 0) << ok.create.err;
  EXPECT_EQ(read_file(plain.rootfs() + "/out"), "character special file\n");
  EXPECT_TRUE(std::filesystem::is_empty(empty.path())) << "nothing was made on the host";
}

}  // namespace
}  // namespace berth::test::gpu
