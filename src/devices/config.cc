// The berth config file (see config.h): "nvidia" {enabled, driverRoot, procRoot, sysRoot,
// devRoot, ldcache, ldconfig, binDirs, defaultCapabilities, envRequestWithoutDriver,
// acceptVolumeMounts, loadKernelModules, modprobe, discoveryCache, mpsPipeDirectory,
// probeTimeoutMs} and
// "cdi" {enabled, specDirs} and "rdma" {sysRoot, devRoot}.
#include "devices/config.h"

#include <cerrno>
#include <cstdlib>

#include "util/file.h"
#include "util/json_schema.h"

namespace berth::devices {

template <class V>
void visit(V& v, NvidiaConfig& c) {
  v("enabled", c.enabled);
  v("driverRoot", c.driver_root);
  v("procRoot", c.proc_root);
  v("sysRoot", c.sys_root);
  v("devRoot", c.dev_root);
  v("ldcache", c.ldcache);
  v("ldconfig", c.ldconfig);
  v("binDirs", c.bin_dirs);
  v("defaultCapabilities", c.default_capabilities);
  v("envRequestWithoutDriver", c.env_request_without_driver);
  v("acceptVolumeMounts", c.accept_volume_mounts);
  v("loadKernelModules", c.load_kernel_modules);
  v("modprobe", c.modprobe);
  v("discoveryCache", c.discovery_cache);
  v("mpsPipeDirectory", c.mps_pipe_dir);
  v("probeTimeoutMs", c.probe_timeout_ms);
}

template <class V>
void visit(V& v, CdiConfig& c) {
  v("enabled", c.enabled);
  v("specDirs", c.spec_dirs);
}

template <class V>
void visit(V& v, RdmaConfig& c) {
  v("sysRoot", c.sys_root);
  v("devRoot", c.dev_root);
}

template <class V>
void visit(V& v, Config& c) {
  v("nvidia", c.nvidia);
  v("cdi", c.cdi);
  v("rdma", c.rdma);
}

namespace {

Status check_absolute(const std::string& source, const std::string& key, const std::string& path) {
  if (!path.empty() && path[0] == '/') return ok();
  std::string full = key.find('.') == std::string::npos ? "nvidia." + key : key;
  return Error::invalid_argument(source + ": " + full + ": must be an absolute path, got \"" + path + "\"");
}

}  // namespace

Result<Config> parse_config(std::string_view text, std::string_view source) {
  BERTH_ASSIGN(Config c, json::parse_as<Config>(text, source));
  c.source = source;
  const NvidiaConfig& n = c.nvidia;
  std::string src(source);
  BERTH_TRY(check_absolute(src, "driverRoot", n.driver_root));
  BERTH_TRY(check_absolute(src, "procRoot", n.proc_root));
  BERTH_TRY(check_absolute(src, "sysRoot", n.sys_root));
  BERTH_TRY(check_absolute(src, "devRoot", n.dev_root));
  BERTH_TRY(check_absolute(src, "ldcache", n.ldcache));
  if (!n.ldconfig.empty()) BERTH_TRY(check_absolute(src, "ldconfig", n.ldconfig));
  BERTH_TRY(check_absolute(src, "rdma.sysRoot", c.rdma.sys_root));
  BERTH_TRY(check_absolute(src, "rdma.devRoot", c.rdma.dev_root));
  const std::string& w = n.env_request_without_driver;
  if (w != "warn" && w != "error" && w != "ignore")
    return Error::invalid_argument(src + ": nvidia.envRequestWithoutDriver: must be warn, error or ignore, got \"" + w + "\"");
  if (n.probe_timeout_ms == 0 || n.probe_timeout_ms > 600000)
    return Error::invalid_argument(src + ": nvidia.probeTimeoutMs: must be 1 to 600000, got " + std::to_string(n.probe_timeout_ms));
  for (const auto& d : c.cdi.spec_dirs)
    if (d.empty() || d[0] != '/')
      return Error::invalid_argument(src + ": cdi.specDirs: must be absolute paths, got \"" + d + "\"");
  return c;
}

Result<Config> load_config() {
  const char* env = std::getenv("BERTH_CONFIG");
  std::string path = env && *env ? env : kDefaultConfigPath;
  auto text = file::read(path, 1u << 20);
  if (!text) {
    if (text.error().err() == ENOENT && !(env && *env)) return Config{};
    return std::move(text).error().context("read berth config");
  }
  return parse_config(*text, path);
}

}  // namespace berth::devices
