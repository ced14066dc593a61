// Discovery cache file (see cache.h): the driver files, the CUDA answer or the memo of a
// failed probe, and NVML's answer keyed by the MIG state.
#include "devices/nvidia/cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
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
  v("cudaVersion", f.cuda_version);  // an answer only: a failure goes to CudaFailure
  v("libs", f.libs);
  v("libs32", f.libs32);
  v("bins", f.bins);
  v("firmware", f.firmware);
  v("configs", f.configs);
  v("ipc", f.ipc);
}

template <class V>
void visit(V& v, NvmlMig& m) {
  v("index", m.index);
  v("uuid", m.uuid);
  v("gi", m.gi);
  v("ci", m.ci);
}

template <class V>
void visit(V& v, NvmlGpu& g) {
  v("busId", g.bus_id);
  v("brand", g.brand);
  v("arch", g.arch);
  v("migEnabled", g.mig_enabled);
  v("migs", g.migs);
}

// A CUDA probe that failed or timed out, for the libcuda with identity `stamp`.
struct CudaFailure {
  std::string stamp, what;  // what: "libcuda.so.550.54.15 timed out after 10 s"
  int64_t at = 0, retry_at = 0;
};

template <class V>
void visit(V& v, CudaFailure& f) {
  v("stamp", f.stamp);
  v("what", f.what);
  v("at", f.at);
  v("retryAt", f.retry_at);
}

struct NvmlEntry {
  std::string key;  // libnvidia-ml's identity, the buses asked about, mig_state()
  std::vector<NvmlGpu> gpus;
};

template <class V>
void visit(V& v, NvmlEntry& e) {
  v("key", e.key);
  v("gpus", e.gpus);
}

struct CacheFile {
  std::string key, stamp;
  std::string cuda_stamp;  // identity of the libcuda that answered cudaVersion
  DriverFiles files;
  CudaFailure cuda_failure;
  NvmlEntry nvml;
};

template <class V>
void visit(V& v, CacheFile& c) {
  v("key", c.key);
  v("stamp", c.stamp);
  v("cudaStamp", c.cuda_stamp);
  v("files", c.files);
  v("cudaFailure", c.cuda_failure);
  v("nvml", c.nvml);
}

namespace {

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

bool all_present(const RootDir& driver, const DriverFiles& f) {
  for (const auto* list : {&f.libs, &f.libs32, &f.bins, &f.firmware, &f.configs, &f.ipc})
    for (const auto& x : *list)
      if (!driver.exists(x.source)) return false;
  return true;
}

std::string utc(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm;
  char buf[40];
  if (!::gmtime_r(&tt, &tm) || !::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm)) return std::to_string(t);
  return buf;
}

std::string basename_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// "libcuda.so.550.54.15 timed out after 10 s" / "... failed (cuDriverGetVersion returned 3)".
std::string describe_probe_error(const Error& e, const std::string& host_path) {
  std::string name = basename_of(host_path);
  if (e.err() == ETIMEDOUT) return name + " timed out after " + e.root().substr(e.root().rfind("after ") + 6);
  std::string text = e.chain_text(), prefix = "read the CUDA version from " + host_path + ": ";
  if (str::starts_with(text, prefix)) text = text.substr(prefix.size());
  return name + " failed (" + text + ")";
}

std::string describe_failure(const CudaFailure& f) {
  return f.what + " at " + utc(f.at) + "; not asked again until the library changes or " + utc(f.retry_at);
}

// A recorded failure of this very libcuda, still inside its retry window. A clock set
// back (now before the failure) ends the window rather than stretching it.
bool failure_holds(const CudaFailure& f, const std::string& stamp, int64_t now) {
  return !f.stamp.empty() && f.stamp == stamp && now >= f.at && now < f.retry_at;
}

}  // namespace

DriverCache::DriverCache(const RootDir& driver, const NvidiaConfig& cfg, const std::string& version,
                         const std::string& state_root)
    : driver_(driver), cfg_(cfg), version_(version), state_root_(state_root) {
  if (state_root.empty() || !cfg.discovery_cache) return;
  key_ = version + "|" + driver.path() + "|" + cfg.ldcache + "|" + str::join(cfg.bin_dirs, ":") + "|" + cfg.mps_pipe_dir;
  stamp_ = stamp_of(driver, cfg.ldcache);
  char name[96];
  snprintf(name, sizeof name, ".nvidia-%s-%016llx.json", version.c_str(), static_cast<unsigned long long>(fnv1a(key_)));
  name_ = name;
  path_ = state_root + "/" + name_;
}

bool DriverCache::load(CacheFile& c) const {
  auto text = file::read(path_, 4u << 20);
  if (!text) return false;
  auto parsed = json::parse_as<CacheFile>(*text, "nvidia discovery cache");
  if (!parsed || parsed->key != key_ || parsed->stamp != stamp_ || !all_present(driver_, parsed->files)) return false;
  c = std::move(*parsed);
  return true;
}

void DriverCache::store(const CacheFile& c) const {
  UniqueFd dir(::open(state_root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  // A cache that cannot be written only costs time on the next create.
  if (!dir || !file::write_atomic(dir.get(), name_, json::serialize(c), 0600))
    log::debug("nvidia: could not write the discovery cache " + path_);
}

Result<DriverFiles> DriverCache::files() {
  if (!enabled()) return find_driver_files(driver_, cfg_, version_);
  CacheFile c;
  if (load(c)) {
    // The CUDA version is an answer of one libcuda: served only while it is the same file.
    const DriverFile* cuda = find_libcuda(c.files);
    if (c.files.cuda_version.empty() || !cuda || c.cuda_stamp != stamp_of(driver_, cuda->source)) c.files.cuda_version.clear();
    return std::move(c.files);
  }
  c.key = key_, c.stamp = stamp_;
  BERTH_ASSIGN(c.files, find_driver_files(driver_, cfg_, version_));
  store(c);
  return std::move(c.files);
}

void DriverCache::need_cuda_version(DriverFiles& files, int64_t now_s) {
  if (!files.cuda_version.empty() || !files.cuda_error.empty()) return;  // asked already
  const DriverFile* cuda = find_libcuda(files);
  if (!cuda) {
    files.cuda_error = "libcuda.so.1 (" + files.version + ") is not in the driver root's ld.so.cache";
    return;
  }
  std::string host_path = driver_.host_path(cuda->source), stamp = stamp_of(driver_, cuda->source);
  CacheFile c;
  bool cached = enabled() && load(c);
  if (cached && !c.files.cuda_version.empty() && c.cuda_stamp == stamp) {
    files.cuda_version = c.files.cuda_version;  // another create answered meanwhile
    return;
  }
  if (cached && failure_holds(c.cuda_failure, stamp, now_s)) {
    files.cuda_error = describe_failure(c.cuda_failure);
    return;
  }
  auto v = probe_cuda_version(host_path, static_cast<int>(cfg_.probe_timeout_ms));
  if (!enabled()) {
    if (v) files.cuda_version = *v;
    else files.cuda_error = describe_probe_error(v.error(), host_path);
    return;
  }
  if (!cached) c.key = key_, c.stamp = stamp_, c.files = files, c.files.cuda_error.clear();
  if (v) {
    files.cuda_version = c.files.cuda_version = *v;
    c.cuda_stamp = stamp;
    c.cuda_failure = {};
  } else {
    bool timed_out = v.error().err() == ETIMEDOUT;
    c.cuda_failure = {stamp, describe_probe_error(v.error(), host_path), now_s,
                      now_s + (timed_out ? kCudaRetryAfterTimeoutS : kCudaRetryAfterFailureS)};
    files.cuda_error = describe_failure(c.cuda_failure);
  }
  store(c);
}

Result<std::vector<NvmlGpu>> DriverCache::nvml(const DriverFiles& files, const std::vector<std::string>& buses,
                                               const std::string& mig_state, bool reuse, bool* hit) {
  *hit = false;
  auto lib = std::find_if(files.libs.begin(), files.libs.end(), [](const DriverFile& l) { return l.path == "libnvidia-ml.so.1"; });
  if (lib == files.libs.end())
    return Error::generic("libnvidia-ml.so.1 (" + files.version + ") is not in the driver root's ld.so.cache");
  // The MIG state is read before NVML is asked: a layout changing meanwhile is stored under
  // the older state, which the next create no longer sees, so it is never served.
  std::string key = stamp_of(driver_, lib->source) + "\n" + str::join(buses, ",") + "\n" + mig_state;
  CacheFile c;
  bool cached = enabled() && load(c);
  if (reuse && cached && c.nvml.key == key) {
    *hit = true;
    return c.nvml.gpus;
  }
  BERTH_ASSIGN(auto gpus, probe_nvml(driver_.host_path(lib->source), buses, static_cast<int>(cfg_.probe_timeout_ms)));
  if (!enabled()) return gpus;
  if (!cached) c.key = key_, c.stamp = stamp_, c.files = files, c.files.cuda_version.clear(), c.files.cuda_error.clear();
  c.nvml = {key, gpus};
  store(c);
  return gpus;
}

Result<DriverFiles> cached_driver_files(const RootDir& driver, const NvidiaConfig& cfg, const std::string& version,
                                        const std::string& state_root) {
  return DriverCache(driver, cfg, version, state_root).files();
}

std::string serialize_driver_files(const DriverFiles& f, const std::string& key, const std::string& stamp) {
  CacheFile c;
  c.key = key, c.stamp = stamp, c.files = f;
  return json::serialize(c);
}

Result<DriverFiles> parse_driver_files(const std::string& text, const std::string& key, const std::string& stamp) {
  BERTH_ASSIGN(CacheFile c, json::parse_as<CacheFile>(text, "nvidia discovery cache"));
  if (c.key != key || c.stamp != stamp) return Error::generic("stale nvidia discovery cache");
  return c.files;
}

}  // namespace berth::devices::nvidia
