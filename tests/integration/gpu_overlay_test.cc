// The driver's files on a fresh overlayfs rootfs, as engines give one per container: the
// libraries and their SONAME links go into a read-only tmpfs of berth's own (the image's
// empty lib dir, or berth-nvidia inside a full one, named to the loader), the firmware and
// the daemons' sockets and the binaries too where the image has no such directory (or an
// empty one), so the upper layer gets no entry per file; the image's files stay visible,
// nothing stays mounted on the host.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cstring>
#include <filesystem>
#include <sstream>

#include "fixtures/gpu/integration_fixture.h"

namespace berth::test::gpu {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// The bundle's rootfs becomes the lower layer of an overlay mounted at its place, with a new
// empty upper layer: what Docker's and containerd's snapshotters give a container.
class FreshOverlay {
 public:
  explicit FreshOverlay(Bundle& b) : rootfs_(b.rootfs()) {
    fs::rename(rootfs_, dir_.path() + "/lower");
    fs::create_directories(rootfs_);
    renew();
  }
  ~FreshOverlay() {
    if (mounted_) ::umount2(rootfs_.c_str(), MNT_DETACH);
  }
  // The next container's rootfs: the same image, a new empty upper layer.
  void renew() {
    if (mounted_) ::umount2(rootfs_.c_str(), MNT_DETACH);
    for (const char* d : {"upper", "work"}) {
      fs::remove_all(dir_.path() + "/" + d);
      fs::create_directories(dir_.path() + "/" + d);
    }
    std::string opts = "lowerdir=" + dir_.path() + "/lower,upperdir=" + upper() + ",workdir=" + dir_.path() + "/work";
    mounted_ = ::mount("overlay", rootfs_.c_str(), "overlay", 0, opts.c_str()) == 0;
  }
  bool mounted() const { return mounted_; }
  std::string upper() const { return dir_.path() + "/upper"; }
  // Every entry of the upper layer, relative to it, one a line.
  std::string upper_entries() const {
    std::string out;
    for (const auto& e : fs::recursive_directory_iterator(upper())) out += e.path().string().substr(upper().size()) + "\n";
    return out;
  }

 private:
  TempDir dir_{"berth-gpu-overlay"};
  std::string rootfs_;
  bool mounted_ = false;
};

// Mounts of the host below `path` (the container's must all be gone with its namespace).
std::string host_mounts_below(const std::string& path) {
  std::string out;
  std::istringstream in(read_file("/proc/self/mountinfo"));
  for (std::string line; std::getline(in, line);)
    if (contains(line, " " + path + "/")) out += line + "\n";
  return out;
}

TEST(GpuOverlay, BusyboxLibrariesGoIntoAReadOnlyTmpfsNotTheUpperLayer) {
  ASSERT_FALSE(fixture().empty());
  Runtime rt;
  Bundle b;
  b.script(
      "exec >/out 2>&1; "
      "for l in libcuda.so libcuda.so.1 libnvidia-ml.so.1; do echo \"link $l $(readlink /usr/lib64/$l)\"; done; "
      "[ -f /usr/lib64/libcuda.so.550.54.15 ] && echo 'lib libcuda'; "
      "grep ' /usr/lib64 ' /proc/self/mountinfo | awk '{print \"mnt\", $5, $6, $9}'; "
      "touch /usr/lib64/x 2>/dev/null && echo 'lib dir writable'; "
      "echo \"fw $(cat /lib/firmware/nvidia/550.54.15/gsp_ga10x.bin)\"; "
      "[ -S /var/run/nvidia-persistenced/socket ] && echo 'socket persistenced'; "
      "echo \"smi $(nvidia-smi)\"; echo done");
  b.spec().process->env.push_back("NVIDIA_VISIBLE_DEVICES=all");
  std::string cg = cgroup_for(b, "overlay-busybox");
  FreshOverlay ovl(b);
  ASSERT_TRUE(ovl.mounted()) << "overlayfs: " << std::strerror(errno);
  GpuRun r = create_start_wait(rt, b, "gpu-ovl-busybox", cg);
  ASSERT_EQ(r.create.code, 0) << r.create.err;
  ASSERT_TRUE(r.stopped) << "the container did not finish";
  std::string out = read_file(b.rootfs() + "/out");
  EXPECT_TRUE(contains(out, "link libcuda.so libcuda.so.1")) << out;
  EXPECT_TRUE(contains(out, "link libcuda.so.1 libcuda.so.550.54.15")) << out;
  EXPECT_TRUE(contains(out, "link libnvidia-ml.so.1 libnvidia-ml.so.550.54.15")) << out;
  EXPECT_TRUE(contains(out, "lib libcuda")) << out;
  EXPECT_TRUE(contains(out, "mnt /usr/lib64 ro,nosuid,nodev,noexec")) << out;
  EXPECT_TRUE(contains(out, "mnt /usr/lib64 ro,nosuid,nodev,noexec,relatime tmpfs") ||
              contains(out, "mnt /usr/lib64 ro,nosuid,nodev,noexec tmpfs"))
      << out;
  EXPECT_FALSE(contains(out, "lib dir writable")) << out;
  EXPECT_TRUE(contains(out, "fw gsp-ga10x")) << out;
  EXPECT_TRUE(contains(out, "socket persistenced")) << out;
  EXPECT_TRUE(contains(out, "smi nvidia-smi (fake) driver 550.54.15")) << out;
  EXPECT_TRUE(contains(out, "done")) << out;
  std::string upper = ovl.upper_entries();
  EXPECT_TRUE(contains(upper, "/usr/lib64\n")) << "the tmpfs's mount point\n" << upper;
  EXPECT_FALSE(contains(upper, "/usr/lib64/")) << "no library or link in the image's upper layer\n" << upper;
  EXPECT_FALSE(contains(upper, "/lib/firmware/")) << "nor the firmware's directories and files\n" << upper;
  EXPECT_FALSE(contains(upper, "/nvidia-persistenced/")) << "nor a socket's mount point\n" << upper;
  EXPECT_FALSE(contains(upper, "/usr/bin/")) << "nor the binaries' (nvidia-smi ran from the tmpfs)\n" << upper;
  EXPECT_EQ(host_mounts_below(b.rootfs()), "") << "the container's mounts went with it";
}

// A Debian-like glibc image with files of its own in the lib dir: the driver's libraries go
// into berth-nvidia inside it, which the drop-in names; ldconfig's cache points the loader
// there, and the image's own library is still where it was. The next container of the
// image, on a fresh overlay again, takes the stored ld.so.cache (the key describes the
// tmpfs's names by the edits, not by what the first create left on disk).
TEST(GpuOverlay, GlibcImageWithAFullLibDirLoadsLibcudaFromBerthsDirectory) {
  ASSERT_FALSE(fixture().empty());
  Runtime rt;
  Bundle b;
  add_glibc(b.rootfs());
  const std::string dir = "/usr/lib/x86_64-linux-gnu";
  fs::create_directories(b.rootfs() + dir);
  std::ofstream(b.rootfs() + dir + "/libimage.so.1") << "the image's";
  b.script("exec >/out 2>&1; /cudaver; cat " + dir + "/libimage.so.1; echo; "
           "touch " + dir + "/berth-nvidia/x 2>/dev/null && echo 'berth dir writable'; "
           "touch " + dir + "/y && echo 'lib dir writable'; echo done");
  b.spec().process->env.push_back("NVIDIA_VISIBLE_DEVICES=0");
  std::string cg = cgroup_for(b, "overlay-glibc");
  FreshOverlay ovl(b);
  ASSERT_TRUE(ovl.mounted()) << "overlayfs: " << std::strerror(errno);
  GpuRun r = create_start_wait(rt, b, "gpu-ovl-glibc", cg, {"--debug"});
  ASSERT_EQ(r.create.code, 0) << r.create.err;
  EXPECT_TRUE(contains(r.create.err, "ldconfig cache: stored")) << r.create.err;
  ASSERT_TRUE(r.stopped) << "the container did not finish";
  std::string out = read_file(b.rootfs() + "/out");
  EXPECT_TRUE(contains(out, "libcuda " + dir + "/berth-nvidia/libcuda.so.1 cuda 12040\n")) << out;
  EXPECT_TRUE(contains(out, "the image's\n")) << out;
  EXPECT_FALSE(contains(out, "berth dir writable")) << out;
  EXPECT_TRUE(contains(out, "lib dir writable")) << "the image's own directory stays the image's\n" << out;
  EXPECT_TRUE(contains(out, "done")) << out;
  EXPECT_EQ(read_file(b.rootfs() + "/etc/ld.so.conf.d/01-berth-nvidia.conf"), dir + "/berth-nvidia\n");
  std::string upper = ovl.upper_entries();
  EXPECT_TRUE(contains(upper, dir + "/berth-nvidia\n")) << upper;
  EXPECT_FALSE(contains(upper, dir + "/berth-nvidia/")) << upper;
  EXPECT_FALSE(contains(upper, "libcuda")) << upper;
  EXPECT_EQ(host_mounts_below(b.rootfs()), "") << "the container's mounts went with it";

  ovl.renew();
  ASSERT_TRUE(ovl.mounted()) << "overlayfs: " << std::strerror(errno);
  GpuRun again = create_start_wait(rt, b, "gpu-ovl-glibc-2", cg, {"--debug"});
  ASSERT_EQ(again.create.code, 0) << again.create.err;
  ASSERT_TRUE(again.stopped) << "the second container did not finish";
  EXPECT_TRUE(contains(again.create.err, "ldconfig cache: hit")) << again.create.err;
  out = read_file(b.rootfs() + "/out");
  EXPECT_TRUE(contains(out, "libcuda " + dir + "/berth-nvidia/libcuda.so.1 cuda 12040\n")) << out;
}

}  // namespace
}  // namespace berth::test::gpu
