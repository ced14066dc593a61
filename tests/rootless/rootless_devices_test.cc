// The NVIDIA and RDMA device modules run by an unprivileged caller (`berth` as the test
// user, rootless auto and true) on the fake host trees of tests/fixtures/gpu (made as root
// with real character nodes, so the user can bind them but not make them): every node is
// the host's, bound, with its major:minor; the driver's files are mounted; a missing host
// node is named; the host tree is unchanged afterwards and the census finds nothing left.
// runc has no native GPU or RDMA module (NVIDIA's toolkit hooks or CDI do it for runc), so
// only berth is run and asserted here.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "fixtures/gpu/integration_fixture.h"
#include "rootless/rootless_support.h"

namespace berth::test::rootless {
namespace {

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// Every file of the fake host with its type, device numbers, mode, owner, mtime and ctime:
// a node made, removed, chmod'ed or chowned, or a file written, changes a line.
std::string host_tree(const std::string& root) {
  return run_cmd({"sh", "-c", "cd \"$0\" && find . -exec stat -c '%n %F %t:%T %a %u:%g %Y %Z' {} + | sort", root}).out;
}

class RootlessDevices : public Rootless {
 protected:
  void SetUp() override {
    Rootless::SetUp();
    if (IsSkipped()) return;
    ASSERT_FALSE(gpu::fixture().empty()) << "the fake GPU host could not be built";
    before_ = host_tree(gpu::fixture());
  }
  void TearDown() override {
    if (!IsSkipped()) {
      EXPECT_EQ(host_tree(gpu::fixture()), before_) << "the fake host tree changed";
    }
    Rootless::TearDown();
  }

  // `berth [global] run` as the test user with the fixture's config (or `config`).
  CmdResult run_devices(Bundle& b, const std::string& id, const std::vector<std::string>& global = {},
                        const std::string& config = "") {
    ids_.push_back(id);
    gpu::stand_in_proc_driver(b);
    // The user's own image, as rootless podman's storage gives it: the NVIDIA module makes
    // the driver's mount points (/usr/lib64/...) in it as the container's root.
    run_cmd({"chown", "-R", std::to_string(user().uid) + ":" + std::to_string(user().gid), b.rootfs()});
    b.write();
    std::vector<std::string> argv = {berth_binary()};
    argv.insert(argv.end(), global.begin(), global.end());
    argv.insert(argv.end(), {"run", "-b", b.path(), id});
    return as_user(argv, 60, {"BERTH_CONFIG=" + (config.empty() ? gpu::fixture() + "/config.json" : config)});
  }

  std::string before_;
};

// Prints each NVIDIA node with its type and numbers, whether it is a mount point (bound),
// the driver's libraries and their mounts, a driver binary's output.
constexpr const char* kGpuProbe =
    "for n in /dev/nvidiactl /dev/nvidia0 /dev/nvidia1 /dev/nvidia-uvm /dev/nvidia-uvm-tools; do "
    "  [ -e $n ] && echo \"node $n $(stat -c '%F %t:%T' $n) mounts $(grep -c \" $n \" /proc/self/mountinfo)\"; done; "
    "ls /usr/lib64 | grep -E '^lib(cuda|nvidia-ml)' | sed 's/^/lib /'; "
    "grep ' /usr/lib64/libcuda.so.550.54.15 ' /proc/self/mountinfo | awk '{print \"mnt\", $6}'; "
    "echo \"smi $(nvidia-smi)\"; id -u";

TEST_F(RootlessDevices, NvidiaGpusAreTheHostsNodesBound) {
  struct Case {
    std::string visible, rootless;
    std::vector<std::string> nodes, absent;
  };
  // GPU minors are rotated against PCI order in the fixture: GPU 1 is /dev/nvidia0.
  for (const Case& c : {Case{"all", "auto", {"nvidia0 character special file c3:0", "nvidia1 character special file c3:1"}, {}},
                        Case{"1", "true", {"nvidia0 character special file c3:0"}, {"/dev/nvidia1"}}}) {
    Bundle b;
    rootless_spec(b, kGpuProbe).process->env.push_back("NVIDIA_VISIBLE_DEVICES=" + c.visible);
    auto r = run_devices(b, "rl-gpu-" + c.rootless, {"--rootless", c.rootless});
    ASSERT_EQ(r.code, 0) << c.visible << ": " << r.err;
    for (const auto& n : c.nodes) EXPECT_TRUE(contains(r.out, "node /dev/" + n + " mounts 1\n")) << n << "\n" << r.out;
    for (const char* n : {"nvidiactl character special file c3:ff", "nvidia-uvm character special file 1fe:0",
                          "nvidia-uvm-tools character special file 1fe:1"})
      EXPECT_TRUE(contains(r.out, "node /dev/" + std::string(n) + " mounts 1\n")) << n << "\n" << r.out;
    for (const auto& n : c.absent) EXPECT_FALSE(contains(r.out, n)) << r.out;
    EXPECT_TRUE(contains(r.out, "lib libcuda.so.1\nlib libcuda.so.550.54.15\nlib libnvidia-ml.so.1\n"
                                "lib libnvidia-ml.so.550.54.15\n"))
        << "the driver's libraries with their SONAME links\n" << r.out;
    EXPECT_TRUE(contains(r.out, "mnt ro,nosuid,nodev")) << "the host's libcuda, bound read-only\n" << r.out;
    EXPECT_TRUE(contains(r.out, "smi nvidia-smi (fake) driver 550.54.15\n0\n")) << r.out;
    EXPECT_FALSE(contains(r.out, "535")) << "the stale install never reaches the container\n" << r.out;
  }
}

// A glibc image with a CUDA compat library: ldconfig runs inside as the container's root
// (the user) and a CUDA program loads the compat libcuda beside the host's bound driver.
TEST_F(RootlessDevices, NvidiaLdconfigRunsAndACudaProgramLoads) {
  Bundle b;
  rootless_spec(b, "/cudaver").process->env.push_back("NVIDIA_VISIBLE_DEVICES=all");
  gpu::add_glibc(b.rootfs());
  gpu::add_image(b.rootfs(), "compat-note");
  auto r = run_devices(b, "rl-gpu-glibc");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "libcuda /usr/local/cuda/compat/libcuda.so.1 cuda 12080\n");
  EXPECT_EQ(gpu::read_file(b.rootfs() + "/etc/ld.so.conf.d/00-compat-berth.conf"), "/usr/local/cuda/compat\n");
  // The ldconfig cache (docs/gpu.md) is the user's, in its state root.
  struct stat st;
  ASSERT_EQ(::stat((user().xdg + "/berth/.ldconfig-cache").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user().uid);
  EXPECT_FALSE(std::filesystem::is_empty(user().xdg + "/berth/.ldconfig-cache")) << "an entry was stored";
}

// RDMA (org.berth.rdma.devices, the config's rdma.sysRoot/devRoot): the adapter's uverbs,
// umad and issm nodes and rdma_cm are the host's, bound, in the host's network namespace
// (a rootless spec has no network namespace of its own).
TEST_F(RootlessDevices, RdmaNodesAreTheHostsNodesBound) {
  Bundle b;
  rootless_spec(b, "for n in /dev/infiniband/*; do echo \"$n $(stat -c '%F %t:%T %a' $n) "
                   "$(grep -c \" $n \" /proc/self/mountinfo)\"; done");
  b.spec().annotations["org.berth.rdma.devices"] = "mlx5_0";
  auto r = run_devices(b, "rl-rdma");
  ASSERT_EQ(r.code, 0) << r.err;
  // mlx5_0 is uverbs1 (231:193), umad0 (231:0), issm0 (231:64); rdma_cm is 10:58. Modes are
  // the host nodes' (the fixture's umad and issm are 0660): a bind changes nothing.
  EXPECT_EQ(r.out,
            "/dev/infiniband/issm0 character special file e7:40 660 1\n"
            "/dev/infiniband/rdma_cm character special file a:3a 666 1\n"
            "/dev/infiniband/umad0 character special file e7:0 660 1\n"
            "/dev/infiniband/uverbs1 character special file e7:c1 666 1\n");
}

// A host whose driver or udev made some nodes but not all: the request that needs the
// missing one fails naming the host path, and nothing is made there (an unprivileged
// caller could not mknod anyway; berth does not try, and says so).
TEST_F(RootlessDevices, MissingHostNodeIsNamedAndNothingIsMade) {
  TempDir alt("berth-rl-dev");
  std::string dev = alt.path() + "/dev";
  ASSERT_EQ(run_cmd({"cp", "-a", gpu::fixture() + "/dev", dev}).code, 0);
  std::filesystem::remove(dev + "/nvidia1");
  std::filesystem::remove(dev + "/infiniband/uverbs1");
  std::string config = gpu::read_file(gpu::fixture() + "/config.json");
  for (size_t at; (at = config.find("\"" + gpu::fixture() + "/dev\"")) != std::string::npos;)
    config.replace(at, gpu::fixture().size() + 6, "\"" + dev + "\"");
  std::ofstream(alt.path() + "/config.json") << config;
  std::string listing = host_tree(dev);
  struct Case {
    std::string key, value, node;
  };
  for (const Case& c : {Case{"NVIDIA_VISIBLE_DEVICES", "0", "/dev/nvidia1"},  // GPU 0 is minor 1
                        Case{"org.berth.rdma.devices", "mlx5_0", "/dev/infiniband/uverbs1"}}) {
    Bundle b;
    rootless_spec(b, "true");
    if (c.key == "NVIDIA_VISIBLE_DEVICES") b.spec().process->env.push_back(c.key + "=" + c.value);
    else b.spec().annotations[c.key] = c.value;
    auto r = run_devices(b, "rl-nodev-" + c.value, {}, alt.path() + "/config.json");
    EXPECT_EQ(r.code, 1) << c.key;
    std::string host = dev + c.node.substr(4);
    EXPECT_TRUE(contains(r.err, "device " + c.node + ": host node " + host +
                                    " (bound in a user namespace; berth creates no device nodes on the host): "
                                    "no such file or directory"))
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line\n" << r.err;
  }
  EXPECT_EQ(host_tree(dev), listing) << "nothing was made on the host";
}

}  // namespace
}  // namespace berth::test::rootless
