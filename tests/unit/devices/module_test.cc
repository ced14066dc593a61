// The NVIDIA module end to end on the fake host: golden Edits for typical requests, the
// driver-less host, unknown devices, requirements, MIG, IMEX, and the 8-GPU timing.
#include "devices/nvidia/module.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <cstdio>

#include <sys/stat.h>

#include "devices/nvidia/ldcache.h"
#include "devices/nvidia/request.h"
#include "unit/devices/gpu_fixture.h"
#include "util/log.h"

namespace berth::devices::nvidia {
namespace {

struct Case {
  spec::Spec spec;
  std::string fixture;
  std::string rootfs;
  std::string state;
  NvidiaConfig cfg;

  explicit Case(const std::string& variant = "2gpu-mig", bool debian = true, bool glibc = true, const std::string& image = "")
      : fixture(test::gpu_fixture(variant)) {
    spec.process.emplace();
    spec.mounts.push_back({"/proc", "proc", "proc", {}, {}, {}});
    rootfs = test::make_rootfs(fixture, debian, glibc, image);
    state = test::temp_dir("berth-state");
    cfg = test::fixture_config(fixture);
  }
  Case& env(const std::string& e) {
    spec.process->env.push_back(e);
    return *this;
  }
  Case& privileged() {
    spec.process->capabilities.emplace();
    spec.process->capabilities->bounding = {"CAP_SYS_ADMIN"};
    return *this;
  }
  Result<Edits> run() {
    BERTH_ASSIGN(Request r, parse_request(spec, {cfg.default_capabilities, true}));
    return nvidia_edits(spec, r, cfg, {rootfs, state, false});
  }
  std::string text() {
    auto e = run();
    EXPECT_TRUE(e) << e.error().message();
    if (!e) return "";
    std::string t = test::redact(to_text(*e), fixture);
    // DRI nodes carry the owner of the fixture's placeholders: root's in the goldens.
    if (::geteuid() != 0)
      t = test::redact(t, " uid=" + std::to_string(::geteuid()) + " gid=" + std::to_string(::getegid()) + " ", " uid=0 gid=0 ");
    std::string ld = choose_ldconfig(cfg);
    return ld.empty() ? t : test::redact(t, " " + ld + " ", " $LDCONFIG ");
  }
};

TEST(NvidiaModule, GoldenDefaultCapabilitiesOneGpu) {
  Case c;
  c.env("NVIDIA_VISIBLE_DEVICES=1");
  test::expect_golden(c.text(), "compute-gpu1.txt");
}

TEST(NvidiaModule, GoldenAllCapabilitiesAllGpusCompat) {
  Case c("2gpu-mig", true, true, "compat-note");
  c.env("NVIDIA_VISIBLE_DEVICES=all").env("NVIDIA_DRIVER_CAPABILITIES=all");
  test::expect_golden(c.text(), "all-caps-compat.txt");
}

TEST(NvidiaModule, GoldenMigDeviceAndConfig) {
  Case c;
  c.privileged().env("NVIDIA_VISIBLE_DEVICES=MIG-7c3e,1").env("NVIDIA_MIG_MONITOR_DEVICES=1").env("NVIDIA_IMEX_CHANNELS=1");
  test::expect_golden(c.text(), "mig-monitor-imex.txt");
  Case cfg;
  cfg.privileged().env("NVIDIA_VISIBLE_DEVICES=0").env("NVIDIA_MIG_CONFIG_DEVICES=0");
  test::expect_golden(cfg.text(), "mig-config.txt");
}

TEST(NvidiaModule, GoldenNoneOnMuslAndNoLibc) {
  Case musl("2gpu-mig", false, false);
  std::filesystem::create_directories(musl.rootfs + "/lib");
  std::ofstream(musl.rootfs + "/lib/ld-musl-x86_64.so.1") << "";
  musl.env("NVIDIA_VISIBLE_DEVICES=none");
  test::expect_golden(musl.text(), "none-musl.txt");
  Case bare("2gpu-mig", false, false);
  bare.spec.mounts.clear();
  bare.env("NVIDIA_VISIBLE_DEVICES=0").env("NVIDIA_DRIVER_CAPABILITIES=utility");
  test::expect_golden(bare.text(), "utility-nolibc-noproc.txt");
}

bool has_line(const std::string& text, const std::string& line) { return ("\n" + text).find("\n" + line + "\n") != std::string::npos; }

// The libraries and SONAME links go into a tmpfs of the module's own, not into the image:
// the image's lib dir itself where it is empty, berth-nvidia inside it where the image's
// loader is told (glibc with ldconfig, musl); per-file binds where it would not be.
TEST(NvidiaModule, LibrariesGoIntoATmpfsOfTheirOwn) {
  const std::string dir = "/usr/lib/x86_64-linux-gnu";
  Case empty;
  empty.env("NVIDIA_VISIBLE_DEVICES=0");
  std::string t = empty.text();
  EXPECT_TRUE(has_line(t, "tmpfs " + dir)) << t;
  EXPECT_TRUE(has_line(t, "link " + dir + "/libcuda.so.1 -> libcuda.so.550.54.15")) << t;

  Case full;  // glibc, a lib dir with the image's own files: hidden by nothing
  std::filesystem::create_directories(full.rootfs + dir);
  std::ofstream(full.rootfs + dir + "/libz.so.1") << "";
  full.env("NVIDIA_VISIBLE_DEVICES=0");
  t = full.text();
  const std::string own = dir + "/berth-nvidia";
  EXPECT_TRUE(has_line(t, "tmpfs " + own)) << t;
  EXPECT_FALSE(has_line(t, "tmpfs " + dir)) << t;
  EXPECT_TRUE(has_line(t, "link " + own + "/libcuda.so.1 -> libcuda.so.550.54.15")) << t;
  EXPECT_NE(t.find(" -> " + own + "/libcuda.so.550.54.15 [ro,nosuid,nodev]"), std::string::npos) << t;
  EXPECT_EQ(t.find(" -> " + dir + "/libcuda"), std::string::npos) << t;
  EXPECT_NE(t.find("file /etc/ld.so.conf.d/01-berth-nvidia.conf mode=0644 \"" + own + "\\n\""), std::string::npos) << t;
  EXPECT_NE(t.find(" " + own + "\n"), std::string::npos) << "on ldconfig's command line\n" << t;

  Case mounted;  // a spec mount inside the empty lib dir: a tmpfs there would hide it
  mounted.spec.mounts.push_back({dir + "/extra", "", "/opt/extra", {"bind"}, {}, {}});
  mounted.env("NVIDIA_VISIBLE_DEVICES=0");
  t = mounted.text();
  EXPECT_EQ(t.find("tmpfs /usr/lib"), std::string::npos) << t;
  EXPECT_NE(t.find(" -> " + dir + "/libcuda.so.550.54.15 [ro,nosuid,nodev]"), std::string::npos) << t;

  Case bare("2gpu-mig", false, false);  // no loader: the links must be where they always were
  std::filesystem::create_directories(bare.rootfs + "/usr/lib64");
  std::ofstream(bare.rootfs + "/usr/lib64/libz.so.1") << "";
  bare.env("NVIDIA_VISIBLE_DEVICES=0");
  t = bare.text();
  EXPECT_EQ(t.find("tmpfs /usr/lib"), std::string::npos) << t;
  EXPECT_TRUE(has_line(t, "link /usr/lib64/libcuda.so.1 -> libcuda.so.550.54.15")) << t;

  Case musl("2gpu-mig", false, false);
  std::filesystem::create_directories(musl.rootfs + "/lib");
  std::filesystem::create_directories(musl.rootfs + "/usr/lib64");
  std::ofstream(musl.rootfs + "/lib/ld-musl-x86_64.so.1") << "";
  std::ofstream(musl.rootfs + "/usr/lib64/libz.so.1") << "";
  musl.env("NVIDIA_VISIBLE_DEVICES=0");
  t = musl.text();
  EXPECT_TRUE(has_line(t, "tmpfs /usr/lib64/berth-nvidia")) << t;
  EXPECT_NE(t.find("/usr/lib64/berth-nvidia\\n\""), std::string::npos) << "in the .path file\n" << t;
}

// /lib/firmware and the daemons' socket directories get a tmpfs where the image has
// nothing there; an image's own /lib/firmware, or a spec mount inside it, keeps the
// per-file mount points.
TEST(NvidiaModule, FirmwareAndSocketDirectoriesGetATmpfsWhereTheImageHasNone) {
  Case bare;
  bare.env("NVIDIA_VISIBLE_DEVICES=0");
  std::string t = bare.text();
  EXPECT_TRUE(has_line(t, "tmpfs /lib/firmware")) << t;
  EXPECT_TRUE(has_line(t, "tmpfs /var/run/nvidia-persistenced")) << t;
  EXPECT_NE(t.find(" -> /lib/firmware/nvidia/550.54.15/gsp_ga10x.bin [ro,nosuid,nodev,noexec]"), std::string::npos) << t;

  Case image;
  std::filesystem::create_directories(image.rootfs + "/lib/firmware");
  std::ofstream(image.rootfs + "/lib/firmware/regulatory.db") << "";
  image.spec.mounts.push_back({"/var/run/nvidia-persistenced/x", "", "/opt/x", {"bind"}, {}, {}});
  image.env("NVIDIA_VISIBLE_DEVICES=0");
  t = image.text();
  EXPECT_FALSE(has_line(t, "tmpfs /lib/firmware")) << "the image's own firmware stays visible\n" << t;
  EXPECT_FALSE(has_line(t, "tmpfs /var/run/nvidia-persistenced")) << "a spec mount inside\n" << t;
  EXPECT_TRUE(has_line(t, "tmpfs /var/run/nvidia-fabricmanager")) << t;

  Case linked;  // /var/run -> /run in the image, the spec mounting at /run/...: still seen
  std::filesystem::create_directories(linked.rootfs + "/run");
  std::filesystem::create_directories(linked.rootfs + "/var");
  std::filesystem::create_symlink("../run", linked.rootfs + "/var/run");
  linked.spec.mounts.push_back({"/run/nvidia-fabricmanager", "", "/opt/fm", {"bind"}, {}, {}});
  linked.env("NVIDIA_VISIBLE_DEVICES=0");
  t = linked.text();
  EXPECT_FALSE(has_line(t, "tmpfs /var/run/nvidia-fabricmanager")) << "the spec's mount there, through the link\n" << t;
  EXPECT_TRUE(has_line(t, "tmpfs /var/run/nvidia-persistenced")) << t;
}

// The binaries (all /usr/bin/<name>) get a tmpfs at /usr/bin where the image has none or
// an empty one, only when the request mounts a binary; an image's own /usr/bin, or a spec
// mount inside it, keeps the per-file mount points and every file of the image visible.
TEST(NvidiaModule, BinariesGetATmpfsWhereTheImageHasNoUsrBin) {
  Case bare;
  bare.env("NVIDIA_VISIBLE_DEVICES=0");
  std::string t = bare.text();
  EXPECT_TRUE(has_line(t, "tmpfs /usr/bin")) << t;
  EXPECT_NE(t.find(" -> /usr/bin/nvidia-smi [ro,nosuid,nodev]"), std::string::npos) << t;

  Case empty;  // an empty /usr/bin hides nothing either
  std::filesystem::create_directories(empty.rootfs + "/usr/bin");
  empty.env("NVIDIA_VISIBLE_DEVICES=0");
  EXPECT_TRUE(has_line(empty.text(), "tmpfs /usr/bin"));

  Case image;
  std::filesystem::create_directories(image.rootfs + "/usr/bin");
  std::ofstream(image.rootfs + "/usr/bin/env") << "";
  image.env("NVIDIA_VISIBLE_DEVICES=0");
  t = image.text();
  EXPECT_FALSE(has_line(t, "tmpfs /usr/bin")) << "the image's own binaries stay visible\n" << t;
  EXPECT_NE(t.find(" -> /usr/bin/nvidia-smi [ro,nosuid,nodev]"), std::string::npos) << t;

  Case spec_inside;
  spec_inside.spec.mounts.push_back({"/usr/bin/tool", "", "/opt/tool", {"bind"}, {}, {}});
  spec_inside.env("NVIDIA_VISIBLE_DEVICES=0");
  EXPECT_FALSE(has_line(spec_inside.text(), "tmpfs /usr/bin")) << "a spec mount inside";

  Case no_binary;  // graphics: no binary mounted, no tmpfs for none
  no_binary.env("NVIDIA_VISIBLE_DEVICES=0").env("NVIDIA_DRIVER_CAPABILITIES=graphics");
  t = no_binary.text();
  EXPECT_EQ(t.find("/usr/bin"), std::string::npos) << t;
}

TEST(NvidiaModule, CompatRuleChoosesTheDropIn) {
  for (const auto& [image, used] : std::vector<std::pair<std::string, bool>>{
           {"compat-note", true}, {"compat-plain", true}, {"compat-unlisted", false}, {"compat-old", false}}) {
    Case c("2gpu-mig", true, true, image);
    c.env("NVIDIA_VISIBLE_DEVICES=0");
    std::string t = c.text();
    EXPECT_EQ(t.find("00-compat-berth.conf") != std::string::npos, used) << image << "\n" << t;
  }
}

TEST(NvidiaModule, NoDriver) {
  Case c;
  c.cfg.proc_root = test::temp_dir("berth-noproc");
  c.env("NVIDIA_VISIBLE_DEVICES=all");
  auto env_only = c.run();
  ASSERT_TRUE(env_only) << env_only.error().message();
  EXPECT_TRUE(env_only->empty()) << "a CUDA image's env runs without GPUs";
  c.cfg.env_request_without_driver = "error";
  EXPECT_FALSE(c.run());
  c.cfg.env_request_without_driver = "warn";
  c.spec.annotations[kGpusAnnotation] = "0";
  auto annotated = c.run();
  ASSERT_FALSE(annotated);
  EXPECT_NE(annotated.error().message().find("GPUs requested (org.berth.gpus=0) but no NVIDIA driver is loaded"),
            std::string::npos) << annotated.error().message();
}

TEST(NvidiaModule, UnknownDeviceNamesTheHostsDevices) {
  Case c;
  c.env("NVIDIA_VISIBLE_DEVICES=GPU-deadbeef");
  auto r = c.run();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("unknown device \"GPU-deadbeef\""), std::string::npos);
  EXPECT_NE(r.error().message().find("1 GPU-3b2a1c4d-11c1-52b8-0517-92f30e7fac89 0000:07:00.0"), std::string::npos)
      << r.error().message();
}

TEST(NvidiaModule, Requirements) {
  Case c;
  c.env("NVIDIA_VISIBLE_DEVICES=0").env("CUDA_VERSION=12.6.0");
  auto r = c.run();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("unsatisfied requirement \"cuda>=12.6\": host driver 550.54.15 supports CUDA 12.4"),
            std::string::npos) << r.error().message();
  c.env("NVIDIA_DISABLE_REQUIRE=true");
  EXPECT_TRUE(c.run());
  Case brand;
  brand.env("NVIDIA_VISIBLE_DEVICES=all").env("NVIDIA_REQUIRE_CUDA=cuda>=12.6 brand=tesla,driver>=550");
  auto b = brand.run();
  ASSERT_FALSE(b) << "GPU 0 is not a Tesla (NVML asked for the brand)";
  EXPECT_NE(b.error().message().find("GPU 0 (NVIDIA A100-SXM4-40GB) brand nvidia arch 8.0"), std::string::npos)
      << b.error().message();
  Case tesla;
  tesla.env("NVIDIA_VISIBLE_DEVICES=1").env("NVIDIA_REQUIRE_CUDA=cuda>=12.6 brand=tesla,driver>=550");
  EXPECT_TRUE(tesla.run()) << "GPU 1 is a Tesla";
  Case arch;
  arch.env("NVIDIA_VISIBLE_DEVICES=all").env("NVIDIA_REQUIRE_ARCH=arch>=7.5");
  auto a = arch.run();
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message().find("GPU 1 (Tesla V100-SXM2-16GB)"), std::string::npos) << a.error().message();
}

TEST(NvidiaModule, PrivilegedAndImexErrors) {
  Case mig;
  mig.privileged().env("NVIDIA_VISIBLE_DEVICES=0").env("NVIDIA_MIG_CONFIG_DEVICES=1");
  auto r = mig.run();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("GPU 1 is not in NVIDIA_VISIBLE_DEVICES"), std::string::npos);
  Case imex;
  imex.env("NVIDIA_VISIBLE_DEVICES=0").env("NVIDIA_IMEX_CHANNELS=7");
  auto i = imex.run();
  ASSERT_FALSE(i);
  EXPECT_NE(i.error().message().find("no channel 7 on this host (channels: 0,1)"), std::string::npos) << i.error().message();
}

const DeviceNode* node(const Edits& e, const std::string& path) {
  for (const auto& n : e.nodes)
    if (n.container_path == path) return &n;
  return nullptr;
}

bool mounts(const Edits& e, const std::string& needle) {
  for (const auto& m : e.mounts)
    if (m.container_path.find(needle) != std::string::npos) return true;
  return false;
}

// Issue 19 #4: a compute container on a host whose ld.so.cache has no libcuda of the driver.
TEST(NvidiaModule, MissingLibcudaWarnsAndFailsAStatedCudaRequirement) {
  Case c;
  // The driver root's cache without libcuda (libnvidia-ml only), as after a partial install.
  std::string lib = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1";
  std::ofstream(c.fixture + "/driver/etc/ld.so.cache.nocuda") << build_ldcache({{0x0303, "libnvidia-ml.so.1", lib, 0}});
  c.cfg.ldcache = "/etc/ld.so.cache.nocuda";
  c.env("NVIDIA_VISIBLE_DEVICES=0");
  auto plain = c.run();
  ASSERT_TRUE(plain) << "no requirement stated: created, with a warning: " << plain.error().message();
  EXPECT_TRUE(mounts(*plain, "libnvidia-ml.so"));
  EXPECT_FALSE(mounts(*plain, "libcuda")) << to_text(*plain);
  for (const char* stated : {"CUDA_VERSION=12.0.1", "NVIDIA_REQUIRE_CUDA=cuda>=12.0 brand=tesla"}) {
    Case r;
    r.cfg.ldcache = "/etc/ld.so.cache.nocuda";
    r.env("NVIDIA_VISIBLE_DEVICES=1").env(stated);  // GPU 1 is a Tesla: the brand alternative would hold
    auto e = r.run();
    ASSERT_FALSE(e) << stated;
    EXPECT_NE(e.error().message().find("with a CUDA requirement (" + std::string(stated)), std::string::npos) << e.error().message();
    EXPECT_NE(e.error().message().find("libcuda.so.1 of driver 550.54.15 is not in the driver root's ld.so.cache (" +
                                       r.fixture + "/driver/etc/ld.so.cache.nocuda)"),
              std::string::npos) << e.error().message();
    r.env("NVIDIA_DISABLE_REQUIRE=true");
    EXPECT_TRUE(r.run()) << "requirements switched off: a warning only";
  }
  Case utility;
  utility.cfg.ldcache = "/etc/ld.so.cache.nocuda";
  utility.env("NVIDIA_VISIBLE_DEVICES=0").env("NVIDIA_DRIVER_CAPABILITIES=utility");
  EXPECT_TRUE(utility.run()) << "no compute capability, no libcuda wanted";
}

// Issue 19 #5: DRI nodes get the host node's mode and owner, not 0666.
TEST(NvidiaModule, DriNodesMirrorTheHostNodes) {
  Case c;
  c.env("NVIDIA_VISIBLE_DEVICES=0").env("NVIDIA_DRIVER_CAPABILITIES=graphics");
  auto e = c.run();
  ASSERT_TRUE(e) << e.error().message();
  for (const char* name : {"card1", "renderD129"}) {
    const DeviceNode* n = node(*e, std::string("/dev/dri/") + name);
    ASSERT_NE(n, nullptr) << name;
    struct stat st;
    ASSERT_EQ(::stat((c.fixture + "/dev/dri/" + name).c_str(), &st), 0);
    EXPECT_EQ(n->mode, 0660u) << name << ": the host node is 0660";
    EXPECT_EQ(n->mode, st.st_mode & 07777);
    EXPECT_EQ(n->uid, st.st_uid);
    EXPECT_EQ(n->gid, st.st_gid);
  }
  EXPECT_EQ(node(*e, "/dev/nvidia1")->mode, 0666u) << "GPU nodes keep the driver's DeviceFileMode";
}

TEST(NvidiaModule, EightGpusTiming) {
  Case c("8gpu");
  c.env("NVIDIA_VISIBLE_DEVICES=all").env("CUDA_VERSION=12.2.0");
  ASSERT_TRUE(c.run());  // fills the discovery cache
  constexpr int kRounds = 50;
  auto start = std::chrono::steady_clock::now();
  size_t nodes = 0;
  for (int i = 0; i < kRounds; ++i) {
    auto e = c.run();
    ASSERT_TRUE(e);
    nodes = e->nodes.size();
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / kRounds;
  EXPECT_EQ(nodes, 11u) << "nvidiactl, uvm, uvm-tools and 8 GPUs";
  // Measured, not asserted (the budget is 5 ms per create): shows in the test log.
  std::printf("[ timing ] nvidia module, 8 GPUs, warm cache: %.3f ms per create\n", ms);
  RecordProperty("ms_per_create", std::to_string(ms));
}

}  // namespace
}  // namespace berth::devices::nvidia
