// Discovery cache file (see cache.h).
#include "devices/nvidia/cache.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "util/file.h"
#include "util/json_schema.h"
#include "util/log.h"
#include "util/strings.h"

namespace berth::devices::nvidia {

template <class V>
void visit(V& v, DriverFile& f) {
  v("path", f.path);
  v("source", f.source);
  v("caps", f.caps);
}

template <class V>
void visit(V& v, DriverFiles& f) {
  v("version", f.version);
  v("cudaVersion", f.cuda_version);
  v("cudaError", f.cuda_error);
  v("libs", f.libs);
  v("libs32", f.libs32);
  v("bins", f.bins);
  v("firmware", f.firmware);
  v("configs", f.configs);
  v("ipc", f.ipc);
}

namespace {

struct CacheFile {
  std::string key, stamp;
  DriverFiles files;
};

template <class V>
void visit(V& v, CacheFile& c) {
  v("key", c.key);
  v("stamp", c.stamp);
  v("files", c.files);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string stamp_of(const RootDir& driver, const std::string& ldcache) {
  struct stat st;
  if (!driver.stat(ldcache, &st)) return "";
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

bool all_present(const RootDir& driver, const DriverFiles& f) {
  for (const auto* list : {&f.libs, &f.libs32, &f.bins, &f.firmware, &f.configs, &f.ipc})
    for (const auto& x : *list)
      if (!driver.exists(x.source)) return false;
  return true;
}

}  // namespace

std::string serialize_driver_files(const DriverFiles& f, const std::string& key, const std::string& stamp) {
  return json::serialize(CacheFile{key, stamp, f});
}

Result<DriverFiles> parse_driver_files(const std::string& text, const std::string& key, const std::string& stamp) {
  BERTH_ASSIGN(CacheFile c, json::parse_as<CacheFile>(text, "nvidia discovery cache"));
  if (c.key != key || c.stamp != stamp) return Error::generic("stale nvidia discovery cache");
  return c.files;
}

Result<DriverFiles> cached_driver_files(const RootDir& driver, const NvidiaConfig& cfg, const std::string& version,
                                        const std::string& state_root) {
  if (state_root.empty() || !cfg.discovery_cache) return discover_driver_files(driver, cfg, version);
  std::string key = version + "|" + driver.path() + "|" + cfg.ldcache + "|" + str::join(cfg.bin_dirs, ":") + "|" + cfg.mps_pipe_dir;
  std::string stamp = stamp_of(driver, cfg.ldcache);
  char name[96];
  snprintf(name, sizeof name, ".nvidia-%s-%016llx.json", version.c_str(), static_cast<unsigned long long>(fnv1a(key)));
  std::string path = state_root + "/" + name;
  if (auto text = file::read(path, 4u << 20)) {
    auto f = parse_driver_files(*text, key, stamp);
    if (f && all_present(driver, *f)) return f;
  }
  BERTH_ASSIGN(DriverFiles f, discover_driver_files(driver, cfg, version));
  UniqueFd dir(::open(state_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  // A cache that cannot be written only costs time on the next create.
  if (!dir || !file::write_atomic(dir.get(), name, serialize_driver_files(f, key, stamp), 0600))
    log::debug("nvidia: could not write the discovery cache " + path);
  return f;
}

}  // namespace berth::devices::nvidia
