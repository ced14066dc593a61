// Discovery cache file (see cache.h).
#include "devices/nvidia/cache.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <optional>

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
  v("cudaVersion", f.cuda_version);  // an answer only: a failed probe is never cached
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
  std::string cuda_stamp;  // identity of the libcuda that answered cudaVersion
  DriverFiles files;
};

template <class V>
void visit(V& v, CacheFile& c) {
  v("key", c.key);
  v("stamp", c.stamp);
  v("cudaStamp", c.cuda_stamp);
  v("files", c.files);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// A file's identity: a reinstall (new inode, size or mtime) changes it.
std::string stamp_of(const RootDir& driver, const std::string& path) {
  struct stat st;
  if (!driver.stat(path, &st)) return "";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

std::string libcuda_stamp(const RootDir& driver, const DriverFiles& f) {
  const DriverFile* cuda = find_libcuda(f);
  return cuda ? stamp_of(driver, cuda->source) : "";
}

std::optional<CacheFile> read_cache(const std::string& path, const std::string& key, const std::string& stamp) {
  auto text = file::read(path, 4u << 20);
  if (!text) return std::nullopt;
  auto c = json::parse_as<CacheFile>(*text, "nvidia discovery cache");
  if (!c || c->key != key || c->stamp != stamp) return std::nullopt;
  return std::move(*c);
}

bool all_present(const RootDir& driver, const DriverFiles& f) {
  for (const auto* list : {&f.libs, &f.libs32, &f.bins, &f.firmware, &f.configs, &f.ipc})
    for (const auto& x : *list)
      if (!driver.exists(x.source)) return false;
  return true;
}

}  // namespace

std::string serialize_driver_files(const DriverFiles& f, const std::string& key, const std::string& stamp) {
  return json::serialize(CacheFile{key, stamp, "", f});
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
  auto cached = read_cache(path, key, stamp);
  if (cached && !all_present(driver, cached->files)) cached.reset();
  CacheFile c;
  if (cached) {
    c = std::move(*cached);
  } else {
    BERTH_ASSIGN(c.files, find_driver_files(driver, cfg, version));
    c.key = key, c.stamp = stamp;
  }
  // The CUDA version is an answer of this libcuda: reused while the file is the same one,
  // asked again otherwise. A failed probe (a timeout of a busy driver) is not an answer
  // and is asked again on the next create instead of refusing every CUDA image from then on.
  std::string cuda_stamp = libcuda_stamp(driver, c.files);
  bool write = !cached;
  if (c.files.cuda_version.empty() || c.cuda_stamp != cuda_stamp) {
    probe_cuda(driver, c.files);
    c.cuda_stamp = c.files.cuda_version.empty() ? "" : cuda_stamp;
    write = write || !c.files.cuda_version.empty();
  }
  if (write) {
    UniqueFd dir(::open(state_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    // A cache that cannot be written only costs time on the next create.
    if (!dir || !file::write_atomic(dir.get(), name, json::serialize(c), 0600))
      log::debug("nvidia: could not write the discovery cache " + path);
  }
  return std::move(c.files);
}

}  // namespace berth::devices::nvidia
