// Driver file lookup per capability (see driver_files.h): the library, binary, firmware,
// config and IPC tables of design §1.4.
#include "devices/nvidia/driver_files.h"

#include <sys/stat.h>

#include <algorithm>

#include "devices/nvidia/ldcache.h"
#include "devices/nvidia/probe.h"
#include "devices/nvidia/request.h"
#include "util/strings.h"

namespace berth::devices::nvidia {
namespace {

struct Named {
  const char* name;
  uint32_t caps;
};

constexpr Named kLibraries[] = {
    {"libnvidia-ml", kUtility}, {"libnvidia-cfg", kUtility}, {"libnvidia-nscq", kUtility},
    {"libcuda", kCompute}, {"libcudadebugger", kCompute}, {"libnvidia-opencl", kCompute},
    {"libnvidia-gpucomp", kCompute | kGraphics}, {"libnvidia-ptxjitcompiler", kCompute},
    {"libnvidia-fatbinaryloader", kCompute}, {"libnvidia-allocator", kCompute}, {"libnvidia-compiler", kCompute},
    {"libnvidia-pkcs11", kCompute}, {"libnvidia-pkcs11-openssl3", kCompute}, {"libnvidia-nvvm", kCompute},
    {"libnvidia-tileiras", kCompute},
    {"libvdpau_nvidia", kVideo}, {"libnvidia-encode", kVideo}, {"libnvidia-opticalflow", kVideo},
    {"libnvcuvid", kVideo},
    {"libnvidia-eglcore", kGraphics}, {"libnvidia-glcore", kGraphics}, {"libnvidia-tls", kGraphics},
    {"libnvidia-glsi", kGraphics}, {"libnvidia-fbc", kGraphics}, {"libnvidia-ifr", kGraphics},
    {"libnvidia-rtcore", kGraphics}, {"libnvoptix", kGraphics}, {"libGLX_nvidia", kGraphics},
    {"libEGL_nvidia", kGraphics}, {"libGLESv2_nvidia", kGraphics}, {"libGLESv1_CM_nvidia", kGraphics},
    {"libnvidia-glvkspirv", kGraphics}, {"libnvidia-cbl", kGraphics},
    {"libnvidia-ngx", kNgx},
};

constexpr Named kBinaries[] = {
    {"nvidia-smi", kUtility}, {"nvidia-debugdump", kUtility}, {"nvidia-persistenced", kUtility},
    {"nv-fabricmanager", kUtility}, {"nvidia-cuda-mps-control", kCompute}, {"nvidia-cuda-mps-server", kCompute},
};

constexpr Named kConfigs[] = {
    {"/usr/share/glvnd/egl_vendor.d/10_nvidia.json", kGraphics},
    {"/etc/glvnd/egl_vendor.d/10_nvidia.json", kGraphics},
    {"/usr/share/vulkan/icd.d/nvidia_icd.json", kGraphics},
    {"/etc/vulkan/icd.d/nvidia_icd.json", kGraphics},
    {"/usr/share/vulkan/implicit_layer.d/nvidia_layers.json", kGraphics},
    {"/etc/vulkan/implicit_layer.d/nvidia_layers.json", kGraphics},
};
constexpr const char* kEglPlatformDirs[] = {"/usr/share/egl/egl_external_platform.d", "/etc/egl/egl_external_platform.d"};

std::string base_name(const std::string& p) { return p.substr(p.rfind('/') + 1); }

// The resolved file, if it is a regular file; "" otherwise.
std::string regular_file(const RootDir& root, const std::string& path) {
  auto resolved = root.resolve(path);
  struct stat st;
  if (!resolved || !root.stat(*resolved, &st) || !S_ISREG(st.st_mode)) return "";
  return *resolved;
}

Status find_libraries(const RootDir& driver, const NvidiaConfig& cfg, DriverFiles& f) {
  BERTH_ASSIGN(std::string data, driver.read(cfg.ldcache, 64u << 20).context("read the driver root's ld.so.cache"));
  BERTH_ASSIGN(auto entries, parse_ldcache(data).context(driver.host_path(cfg.ldcache)));
  std::string suffix = "." + f.version;
  for (const auto& e : entries) {
    uint32_t caps = library_caps(e.key);
    LibArch arch = classify(e.flags);
    if (!caps || arch == LibArch::kOther) continue;
    auto& list = arch == LibArch::kNative ? f.libs : f.libs32;
    std::string src = regular_file(driver, e.value);
    // Only this driver's own files: a stale libcuda.so.535.x left by an older install
    // would crash every CUDA program against the loaded 550 kernel module.
    if (src.empty() || !str::ends_with(base_name(src), suffix)) continue;
    bool seen = std::any_of(list.begin(), list.end(), [&](const DriverFile& x) { return x.path == e.key || x.source == src; });
    if (!seen) list.push_back({e.key, src, caps});
  }
  return ok();
}

void find_binaries(const RootDir& driver, const NvidiaConfig& cfg, DriverFiles& f) {
  for (const auto& b : kBinaries)
    for (const auto& dir : cfg.bin_dirs) {
      std::string src = regular_file(driver, dir + "/" + b.name);
      if (src.empty()) continue;
      f.bins.push_back({std::string("/usr/bin/") + b.name, src, b.caps});
      break;
    }
}

void find_firmware(const RootDir& driver, DriverFiles& f) {
  std::string dir = "/lib/firmware/nvidia/" + f.version;
  for (const auto& name : driver.list(dir)) {
    if (!str::starts_with(name, "gsp") || !str::ends_with(name, ".bin")) continue;
    std::string src = regular_file(driver, dir + "/" + name);
    if (!src.empty()) f.firmware.push_back({dir + "/" + name, src, kAllCapabilities});
  }
}

void find_configs(const RootDir& driver, DriverFiles& f) {
  for (const auto& c : kConfigs) {
    std::string src = regular_file(driver, c.name);
    if (!src.empty()) f.configs.push_back({c.name, src, c.caps});
  }
  for (const char* dir : kEglPlatformDirs)
    for (const auto& name : driver.list(dir)) {
      if (name.find("nvidia") == std::string::npos || !str::ends_with(name, ".json")) continue;
      std::string path = std::string(dir) + "/" + name;
      std::string src = regular_file(driver, path);
      if (!src.empty()) f.configs.push_back({path, src, kGraphics});
    }
}

void find_ipc(const RootDir& driver, const NvidiaConfig& cfg, DriverFiles& f) {
  struct Ipc {
    std::string path;
    uint32_t caps;
    bool dir;
  };
  const Ipc ipcs[] = {{"/var/run/nvidia-persistenced/socket", kUtility, false},
                      {"/var/run/nvidia-fabricmanager/socket", kUtility, false},
                      {cfg.mps_pipe_dir, kCompute, true}};
  for (const auto& i : ipcs) {
    auto src = driver.resolve(i.path);
    struct stat st;
    if (!src || !driver.stat(*src, &st) || (i.dir ? !S_ISDIR(st.st_mode) : !S_ISSOCK(st.st_mode))) continue;
    f.ipc.push_back({i.path, *src, i.caps});
  }
}

}  // namespace

uint32_t library_caps(const std::string& soname) {
  for (const auto& l : kLibraries)
    if (str::starts_with(soname, std::string(l.name) + ".so")) return l.caps;
  return 0;
}

std::vector<std::pair<std::string, std::string>> extra_library_links(const std::string& soname) {
  // Development links some programs dlopen by their unversioned name, and the GLVND
  // indirect-rendering name (as nvidia-container-cli adds them).
  if (soname == "libcuda.so.1") return {{"libcuda.so", "libcuda.so.1"}};
  if (soname == "libnvidia-opticalflow.so.1") return {{"libnvidia-opticalflow.so", "libnvidia-opticalflow.so.1"}};
  if (soname == "libGLX_nvidia.so.0") return {{"libGLX_indirect.so.0", "libGLX_nvidia.so.0"}};
  return {};
}

Result<DriverFiles> find_driver_files(const RootDir& driver, const NvidiaConfig& cfg, const std::string& version) {
  DriverFiles f;
  f.version = version;
  BERTH_TRY(find_libraries(driver, cfg, f));
  find_binaries(driver, cfg, f);
  find_firmware(driver, f);
  find_configs(driver, f);
  find_ipc(driver, cfg, f);
  return f;
}

const DriverFile* find_libcuda(const DriverFiles& f) {
  auto cuda = std::find_if(f.libs.begin(), f.libs.end(), [](const DriverFile& l) { return l.path == "libcuda.so.1"; });
  return cuda == f.libs.end() ? nullptr : &*cuda;
}

void probe_cuda(const RootDir& driver, DriverFiles& f) {
  f.cuda_version.clear();
  f.cuda_error.clear();
  const DriverFile* cuda = find_libcuda(f);
  if (!cuda) {
    f.cuda_error = "libcuda.so.1 (" + f.version + ") is not in the driver root's ld.so.cache";
    return;
  }
  auto v = probe_cuda_version(driver.host_path(cuda->source));
  if (v) f.cuda_version = *v;
  else f.cuda_error = v.error().message();
}

Result<DriverFiles> discover_driver_files(const RootDir& driver, const NvidiaConfig& cfg, const std::string& version) {
  BERTH_ASSIGN(DriverFiles f, find_driver_files(driver, cfg, version));
  probe_cuda(driver, f);
  return f;
}

}  // namespace berth::devices::nvidia
