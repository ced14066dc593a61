// Issue 34: what the driver cache keeps across creates. #1: libcuda is asked for the CUDA
// version only by a decision that needs it, and a failing or hung libcuda is remembered
// per file (one timeout per library change, not one per create). #3: NVML's MIG layout is
// kept under the MIG state, a changed layout is seen by the next create, and a stale one
// never hands over another device.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "devices/nvidia/cache.h"
#include "devices/nvidia/module.h"
#include "devices/nvidia/request.h"
#include "unit/devices/gpu_fixture.h"
#include "unit/seccomp/seccomp_test_util.h"
#include "util/file.h"

namespace berth::devices::nvidia {
namespace {

namespace fs = std::filesystem;

// An environment variable for the fake libraries, which the probe children inherit.
class Env {
 public:
  Env(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~Env() { ::unsetenv(name_); }

 private:
  const char* name_;
};

// Lines in a fake library's call log: how many probes ran.
size_t calls(const std::string& log) {
  auto t = file::read(log);
  return t ? static_cast<size_t>(std::count(t->begin(), t->end(), '\n')) : 0;
}

// One container's request on the fake host; creates of one Case share its state root.
struct Case {
  spec::Spec spec;
  std::string fixture, rootfs, state;
  NvidiaConfig cfg;

  explicit Case(const std::string& image = "") : fixture(test::gpu_fixture("2gpu-mig")) {
    spec.process.emplace();
    spec.mounts.push_back({"/proc", "proc", "proc", {}, {}, {}});
    rootfs = test::make_rootfs(fixture, true, true, image);
    state = test::temp_dir("berth-state");
    cfg = test::fixture_config(fixture);
    // The fake libraries answer at once unless a test wedges one (and then sets the short
    // timeout it waits out): a short timeout here made healthy probes fail on a loaded
    // machine, where a fork and a dlopen can take longer than 150 ms.
    cfg.probe_timeout_ms = 10000;
  }
  Case& wedgeable() {
    cfg.probe_timeout_ms = 150;
    return *this;
  }
  Case& env(const std::string& e) {
    spec.process->env.push_back(e);
    return *this;
  }
  Result<Edits> run() {
    BERTH_ASSIGN(Request r, parse_request(spec, {cfg.default_capabilities, true}));
    return nvidia_edits(spec, r, cfg, {rootfs, state, false});
  }
  std::string text() {
    auto e = run();
    EXPECT_TRUE(e) << e.error().message();
    return e ? to_text(*e) : "";
  }
};

// --- #1: the lazy CUDA probe ---------------------------------------------------------------

TEST(NvidiaCudaProbe, OnlyDecisionsThatNeedTheVersionAskLibcuda) {
  std::string log = test::temp_dir("berth-cudalog") + "/calls";
  Env logged("FIXTURE_CUDA_LOG", log);
  struct Kind {
    std::vector<std::string> env;
    std::string image;
    size_t probes;
  };
  const Kind kinds[] = {
      {{"NVIDIA_DRIVER_CAPABILITIES=utility"}, "", 0},
      {{"NVIDIA_DRIVER_CAPABILITIES=graphics"}, "", 0},
      {{"NVIDIA_DRIVER_CAPABILITIES=compute,utility"}, "", 0},
      {{"CUDA_VERSION=12.0.1", "NVIDIA_DISABLE_REQUIRE=true"}, "", 0},
      {{"NVIDIA_REQUIRE_DRIVER=driver>=550"}, "", 0},
      {{"CUDA_VERSION=12.0.1"}, "", 1},
      {{"NVIDIA_REQUIRE_CUDA=cuda>=12.2 brand=tesla"}, "", 1},
      {{}, "compat-plain", 0},  // no note: the driver branch decides
      {{}, "compat-note", 1},   // the note's CUDA version is weighed against the host's
  };
  for (const auto& k : kinds) {
    Case c(k.image);
    c.env("NVIDIA_VISIBLE_DEVICES=0");
    for (const auto& e : k.env) c.env(e);
    std::string what = k.image + (k.env.empty() ? "" : " " + k.env[0]);
    fs::remove(log);
    ASSERT_TRUE(c.run()) << what;
    EXPECT_EQ(calls(log), k.probes) << what;
    ASSERT_TRUE(c.run()) << what;
    EXPECT_EQ(calls(log), k.probes) << what << ": a second create uses the cached answer";
  }
}

TEST(NvidiaCudaProbe, AWedgedLibcudaCostsOneTimeoutAcrossCreates) {
  std::string log = test::temp_dir("berth-cudalog") + "/calls";
  Env logged("FIXTURE_CUDA_LOG", log);
  Env hang("FIXTURE_CUDA_HANG", "1");
  seccomp::testing::LogCapture warnings;
  Case c;
  c.wedgeable().env("NVIDIA_VISIBLE_DEVICES=0").env("CUDA_VERSION=12.0.1");
  constexpr int kCreates = 6;
  for (int i = 0; i < kCreates; ++i) ASSERT_TRUE(c.run()) << "create " << i << ": the requirement is skipped, not failed";
  // One probe (one timeout) for all of them: the memo, counted rather than timed.
  EXPECT_EQ(calls(log), 1u) << "one probe for " << kCreates << " creates";
  std::string text = warnings.text();
  EXPECT_NE(text.find("nvidia: CUDA version unknown (libcuda.so.550.54.15 timed out after 150 ms at "), std::string::npos) << text;
  EXPECT_NE(text.find("; not asked again until the library changes or "), std::string::npos) << text;
  // The text log quotes the message, escaping its own quotes.
  EXPECT_NE(text.find("): requirement \\\"cuda>=12.0\\\" not checked"), std::string::npos) << text;
  // Requests that need no CUDA version never meet the wedged driver.
  for (const char* caps : {"utility", "graphics", "compute,utility"}) {
    Case other;
    other.wedgeable().env("NVIDIA_VISIBLE_DEVICES=1").env(std::string("NVIDIA_DRIVER_CAPABILITIES=") + caps);
    ASSERT_TRUE(other.run()) << caps;
  }
  Case disabled;
  disabled.wedgeable().env("NVIDIA_VISIBLE_DEVICES=1").env("CUDA_VERSION=12.0.1").env("NVIDIA_DISABLE_REQUIRE=true");
  ASSERT_TRUE(disabled.run());
  EXPECT_EQ(calls(log), 1u) << "utility, graphics, compute without requirement, DISABLE_REQUIRE: no probe";
}

// The memo's retry windows and its key (the file's identity), on the cache itself.
TEST(NvidiaCudaProbe, FailuresAreRememberedPerLibraryUntilTheirRetryTime) {
  const std::string& f = test::gpu_fixture();
  NvidiaConfig cfg = test::fixture_config(f);
  cfg.probe_timeout_ms = 10000;  // the cache holds a reference: the wedged part shortens it
  auto root = RootDir::open(cfg.driver_root);
  ASSERT_TRUE(root);
  std::string log = test::temp_dir("berth-cudalog") + "/calls";
  Env logged("FIXTURE_CUDA_LOG", log);
  DriverCache cache(*root, cfg, "550.54.15", test::temp_dir("berth-state"));
  const int64_t t0 = 2000000000;  // 2033-05-18 03:33:20 UTC
  auto ask = [&](int64_t now) {
    auto files = cache.files();
    EXPECT_TRUE(files);
    cache.need_cuda_version(*files, now);
    return *files;
  };
  {
    Env fail("FIXTURE_CUDA_FAIL", "1");
    DriverFiles first = ask(t0);
    EXPECT_EQ(calls(log), 1u);
    EXPECT_EQ(first.cuda_error,
              "libcuda.so.550.54.15 failed (cuDriverGetVersion returned 3) at 2033-05-18 03:33:20 UTC; not asked again "
              "until the library changes or 2033-05-18 03:38:20 UTC");
    DriverFiles memo = ask(t0 + kCudaRetryAfterFailureS - 1);
    EXPECT_EQ(calls(log), 1u) << "inside the window: the memo answers";
    EXPECT_EQ(memo.cuda_error, first.cuda_error);
    ask(t0 - 60);
    EXPECT_EQ(calls(log), 2u) << "a clock set back ends the window instead of stretching it";
  }
  {
    Env hang("FIXTURE_CUDA_HANG", "1");
    cfg.probe_timeout_ms = 150;
    DriverFiles timed_out = ask(t0 + 1000);
    EXPECT_EQ(calls(log), 3u) << "the failure's window is over";
    EXPECT_NE(timed_out.cuda_error.find("timed out after 150 ms"), std::string::npos) << timed_out.cuda_error;
    ask(t0 + 1000 + kCudaRetryAfterTimeoutS - 1);
    EXPECT_EQ(calls(log), 3u) << "a timeout is remembered for 30 minutes";
    // The library replaced in place (new mtime), then by a copy renamed over it (new inode):
    // each is a new library and asked at once.
    std::string lib = f + "/driver/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15";
    ASSERT_EQ(::utimensat(AT_FDCWD, lib.c_str(), nullptr, 0), 0);
    ask(t0 + 1001);
    EXPECT_EQ(calls(log), 4u) << "new mtime";
    fs::copy_file(lib, lib + ".new");
    fs::rename(lib + ".new", lib);
    ask(t0 + 1002);
    EXPECT_EQ(calls(log), 5u) << "new inode";
    ask(t0 + 1003);
    EXPECT_EQ(calls(log), 5u) << "and that one's timeout is remembered in turn";
    cfg.probe_timeout_ms = 10000;
  }
  DriverFiles healthy = ask(t0 + 1000 + kCudaRetryAfterTimeoutS + 10);
  EXPECT_EQ(healthy.cuda_version, "12.4") << healthy.cuda_error;
  EXPECT_EQ(calls(log), 6u);
  ask(t0 + 1000 + kCudaRetryAfterTimeoutS + 11);
  EXPECT_EQ(calls(log), 6u) << "an answer is kept";
}

// --- #3: the MIG layout in the cache -------------------------------------------------------

constexpr const char* kLayoutA =
    "0 0 MIG-1f4c8d2e-aaaa-5b6c-9d0e-000000000001 1 0\n"
    "0 1 MIG-1f4c8d2e-bbbb-5b6c-9d0e-000000000002 2 0\n"
    "0 2 MIG-7c3e9a10-cccc-5b6c-9d0e-000000000003 2 1\n";

// A MIG host of its own: a copy of the fixture's procfs (whose capabilities tree the test
// changes as creating and destroying MIG instances does) and the fake NVML's layout file.
struct MigHost {
  Case c;
  std::string dir = test::temp_dir("berth-mighost");
  std::string caps = dir + "/proc/driver/nvidia/capabilities/gpu1/mig";  // GPU 0 has minor 1
  std::string layout = dir + "/layout", log = dir + "/nvml-calls";
  Env migs{"FIXTURE_NVML_MIGS", layout};
  Env logged{"FIXTURE_NVML_LOG", log};

  MigHost() {
    fs::copy(c.fixture + "/proc", dir + "/proc", fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    c.cfg.proc_root = dir + "/proc";
    std::ofstream(layout) << kLayoutA;
  }
  void access(const std::string& rel, int minor) {
    fs::create_directories(caps + "/" + rel);
    std::ofstream(caps + "/" + rel + "/access") << "DeviceFileMinor: " << minor << "\nDeviceFileMode: 292\n";
  }
  Result<Edits> create(const std::string& devices) {
    Case one = c;
    one.env("NVIDIA_VISIBLE_DEVICES=" + devices);
    return one.run();
  }
  std::string text(const std::string& devices) {
    auto e = create(devices);
    EXPECT_TRUE(e) << devices << ": " << e.error().message();
    return e ? to_text(*e) : "";
  }
};

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(NvidiaMigCache, AWarmCacheServesTheLayoutWithoutNvml) {
  MigHost h;
  std::string first = h.text("0:2");
  EXPECT_EQ(calls(h.log), 1u);
  // gpu1/gi2/access and gpu1/gi2/ci1/access are minors 21 and 23 in the fixture's table.
  EXPECT_TRUE(has(first, "nvidia-caps/nvidia-cap21 c 235:21") && has(first, "nvidia-caps/nvidia-cap23 c 235:23")) << first;
  EXPECT_EQ(h.text("0:2"), first);
  EXPECT_EQ(h.text("MIG-7c3e"), first) << "the UUID form from the same layout";
  EXPECT_EQ(calls(h.log), 1u) << "warm cache: no NVML child";
  Case tesla = h.c;
  tesla.env("NVIDIA_VISIBLE_DEVICES=1").env("NVIDIA_REQUIRE_BRAND=brand=tesla");
  EXPECT_TRUE(tesla.run()) << "brands come from the same cached answer";
  EXPECT_EQ(calls(h.log), 1u);
  // A new libnvidia-ml (a driver update in place) is asked again.
  std::string lib = h.c.fixture + "/driver/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15";
  ASSERT_EQ(::utimensat(AT_FDCWD, lib.c_str(), nullptr, 0), 0);
  EXPECT_EQ(h.text("0:2"), first);
  EXPECT_EQ(calls(h.log), 2u);
}

TEST(NvidiaMigCache, ALayoutChangedBetweenCreatesIsSeenByTheNextOne) {
  MigHost h;
  std::string before = h.text("0:2");
  ASSERT_TRUE(has(before, "nvidia-cap23 c 235:23")) << before;
  // GI 2 CI 1 destroyed, GI 3 CI 0 created: NVML's device 2 is now that one.
  fs::remove_all(h.caps + "/gi2/ci1");
  h.access("gi3", 24);
  h.access("gi3/ci0", 25);
  std::ofstream(h.layout) << "0 0 MIG-1f4c8d2e-aaaa-5b6c-9d0e-000000000001 1 0\n"
                          << "0 1 MIG-1f4c8d2e-bbbb-5b6c-9d0e-000000000002 2 0\n"
                          << "0 2 MIG-0d0d0d0d-dddd-5b6c-9d0e-000000000004 3 0\n";
  std::string after = h.text("0:2");
  EXPECT_EQ(calls(h.log), 2u) << "the MIG state changed: NVML asked again";
  EXPECT_TRUE(has(after, "nvidia-cap24 c 235:24") && has(after, "nvidia-cap25 c 235:25")) << after;
  EXPECT_FALSE(has(after, "nvidia-cap23")) << "the destroyed instance's node: " << after;
  EXPECT_TRUE(has(after, "gpu1/mig/gi3/ci0/access")) << after;
  auto old = h.create("MIG-7c3e");
  ASSERT_FALSE(old) << "the destroyed device's UUID names nothing now";
  EXPECT_TRUE(has(old.error().message(), "unknown device \"MIG-7c3e\"")) << old.error().message();
  // The same GI and CI numbers made again (destroyed, re-created: new procfs entries)
  // for a new MIG device: its UUID is found, the old one is not served from the cache.
  ::usleep(20000);  // past the filesystem's timestamp granularity
  fs::remove_all(h.caps + "/gi3/ci0");
  h.access("gi3/ci0", 25);
  std::ofstream(h.layout) << "0 2 MIG-0e0e0e0e-eeee-5b6c-9d0e-000000000005 3 0\n";
  EXPECT_TRUE(h.create("MIG-0e0e")) << "the re-created instance's new UUID";
  EXPECT_FALSE(h.create("MIG-0d0d")) << "the previous UUID of the same GI/CI numbers";
  EXPECT_EQ(calls(h.log), 3u);
}

TEST(NvidiaMigCache, AStaleLayoutNeverHandsOverAnotherDevice) {
  MigHost h;
  std::string right = h.text("0:2");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(h.c.state)) names.push_back(e.path().filename());
  ASSERT_EQ(names.size(), 1u);
  std::string path = h.c.state + "/" + names[0];
  // A cached layout that no longer matches the driver under an unchanged key (as if the
  // state had changed without a trace): device 2 on GI 3 CI 1, which the driver lacks.
  auto text = file::read(path);
  ASSERT_TRUE(text);
  std::string entry = "\"uuid\":\"MIG-7c3e9a10-cccc-5b6c-9d0e-000000000003\",\"gi\":2";
  ASSERT_TRUE(has(*text, entry)) << *text;
  std::string poisoned = *text;
  poisoned.replace(poisoned.find(entry), entry.size(), "\"uuid\":\"MIG-7c3e9a10-cccc-5b6c-9d0e-000000000003\",\"gi\":3");
  std::ofstream(path) << poisoned;
  EXPECT_EQ(h.text("0:2"), right) << "the guard found GI 3 missing and asked NVML again";
  EXPECT_EQ(calls(h.log), 2u);
  // NVML itself naming an instance the driver does not expose: refused, not half set up.
  std::ofstream(h.layout) << "0 2 MIG-7c3e9a10-cccc-5b6c-9d0e-000000000003 5 0\n";
  h.access("gi5-placeholder", 0);  // a new entry: the MIG state changes, the cache misses
  auto refused = h.create("0:2");
  ASSERT_FALSE(refused);
  EXPECT_TRUE(has(refused.error().message(), "GI 5 CI 0): the driver has no ")) << refused.error().message();
}

}  // namespace
}  // namespace berth::devices::nvidia
