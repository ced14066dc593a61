// Forked-child probes of libcuda and NVML (see probe.h). The child reports in text lines:
// "cuda 12040", "gpu <bus> <brand> <major.minor> <mig 0|1>", "mig <bus> <index> <uuid> <gi> <ci>",
// or "error <text>" with a non-zero exit.
#include "devices/nvidia/probe.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "util/strings.h"
#include "util/unique_fd.h"

namespace berth::devices::nvidia {
namespace {

int64_t now_ms() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int fail(int fd, const std::string& msg) {
  ::dprintf(fd, "error %s\n", msg.c_str());
  return 1;
}

const char* const kBrands[] = {"unknown", "quadro",    "tesla", "nvs",       "grid",        "geforce",
                               "titan",   "vapps",     "vpc",   "vcs",       "vws",         "cloudgaming",
                               "quadrortx", "nvidiartx", "nvidia", "geforcertx", "titanrtx"};

using nvmlDevice = void*;
struct Nvml {
  int (*init)();
  int (*shutdown)();
  int (*by_bus)(const char*, nvmlDevice*);
  int (*brand)(nvmlDevice, int*);
  int (*cc)(nvmlDevice, int*, int*);
  int (*mig_mode)(nvmlDevice, unsigned*, unsigned*);
  int (*max_mig)(nvmlDevice, unsigned*);
  int (*mig_by_index)(nvmlDevice, unsigned, nvmlDevice*);
  int (*uuid)(nvmlDevice, char*, unsigned);
  int (*gi)(nvmlDevice, unsigned*);
  int (*ci)(nvmlDevice, unsigned*);
};

template <class F>
bool sym(void* h, const char* name, F* out) {
  *out = reinterpret_cast<F>(::dlsym(h, name));
  return *out != nullptr;
}

bool load_nvml(void* h, Nvml* n) {
  return sym(h, "nvmlInit_v2", &n->init) && sym(h, "nvmlShutdown", &n->shutdown) &&
         sym(h, "nvmlDeviceGetHandleByPciBusId_v2", &n->by_bus) && sym(h, "nvmlDeviceGetBrand", &n->brand) &&
         sym(h, "nvmlDeviceGetCudaComputeCapability", &n->cc) && sym(h, "nvmlDeviceGetMigMode", &n->mig_mode) &&
         sym(h, "nvmlDeviceGetMaxMigDeviceCount", &n->max_mig) &&
         sym(h, "nvmlDeviceGetMigDeviceHandleByIndex", &n->mig_by_index) && sym(h, "nvmlDeviceGetUUID", &n->uuid) &&
         sym(h, "nvmlDeviceGetGpuInstanceId", &n->gi) && sym(h, "nvmlDeviceGetComputeInstanceId", &n->ci);
}

void report_migs(const Nvml& n, nvmlDevice d, const std::string& bus, int fd) {
  unsigned count = 0;
  if (n.max_mig(d, &count) != 0) return;
  for (unsigned j = 0; j < count; ++j) {
    nvmlDevice m = nullptr;
    char uuid[96] = {0};
    unsigned gi = 0, ci = 0;
    if (n.mig_by_index(d, j, &m) != 0 || n.uuid(m, uuid, sizeof uuid) != 0 || n.gi(m, &gi) != 0 || n.ci(m, &ci) != 0)
      continue;  // an empty slot: MIG device indexes may have gaps
    ::dprintf(fd, "mig %s %u %s %u %u\n", bus.c_str(), j, uuid, gi, ci);
  }
}

int nvml_child(const std::string& lib, const std::vector<std::string>& buses, int fd) {
  void* h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return fail(fd, std::string("dlopen: ") + ::dlerror());
  Nvml n;
  if (!load_nvml(h, &n)) return fail(fd, "missing NVML symbols in " + lib);
  if (int rc = n.init(); rc != 0) return fail(fd, "nvmlInit_v2 returned " + std::to_string(rc));
  for (const auto& bus : buses) {
    nvmlDevice d = nullptr;
    if (int rc = n.by_bus(bus.c_str(), &d); rc != 0) return fail(fd, "no NVML device at " + bus + " (" + std::to_string(rc) + ")");
    int brand = 0, ma = 0, mi = 0;
    unsigned cur = 0, pending = 0;
    if (n.brand(d, &brand) != 0 || brand < 0 || brand >= static_cast<int>(std::size(kBrands))) brand = 0;
    if (n.cc(d, &ma, &mi) != 0) ma = mi = 0;
    bool mig = n.mig_mode(d, &cur, &pending) == 0 && cur == 1;
    ::dprintf(fd, "gpu %s %s %d.%d %d\n", bus.c_str(), kBrands[brand], ma, mi, mig ? 1 : 0);
    if (mig) report_migs(n, d, bus, fd);
  }
  n.shutdown();
  return 0;
}

}  // namespace

Result<std::string> run_in_child(const std::function<int(int)>& body, int timeout_ms, const std::string& what) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) < 0) return Error::sys(errno, "pipe");
  UniqueFd rd(p[0]), wr(p[1]);
  pid_t pid = ::fork();
  if (pid < 0) return Error::sys(errno, "fork " + what);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    ::_exit(body(wr.get()));
  }
  wr.reset();
  std::string out;
  int64_t deadline = now_ms() + timeout_ms;
  bool timed_out = false;
  while (true) {
    pollfd pfd{rd.get(), POLLIN, 0};
    int left = static_cast<int>(deadline - now_ms());
    if (left <= 0 || ::poll(&pfd, 1, left) == 0) {
      timed_out = true;
      break;
    }
    char buf[4096];
    ssize_t n = ::read(rd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < (1u << 20)) out.append(buf, static_cast<size_t>(n));
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // ETIMEDOUT lets the caller tell a hung driver (remembered longer) from a failing one.
  if (timed_out) return Error(ETIMEDOUT, ErrorKind::kGeneric, what + ": timed out after " + describe_timeout(timeout_ms));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    auto at = out.rfind("error ");
    std::string why = at == std::string::npos ? "exit status " + std::to_string(status) : std::string(str::trim(out.substr(at + 6)));
    return Error::generic(what + ": " + why);
  }
  return out;
}

std::string describe_timeout(int timeout_ms) {
  if (timeout_ms % 1000 == 0) return std::to_string(timeout_ms / 1000) + " s";
  return std::to_string(timeout_ms) + " ms";
}

Result<std::string> probe_cuda_version(const std::string& libcuda_path, int timeout_ms) {
  BERTH_ASSIGN(std::string out, run_in_child(
                                    [&](int fd) {
                                      void* h = ::dlopen(libcuda_path.c_str(), RTLD_NOW | RTLD_LOCAL);
                                      if (!h) return fail(fd, std::string("dlopen: ") + ::dlerror());
                                      int (*get)(int*) = nullptr;
                                      if (!sym(h, "cuDriverGetVersion", &get)) return fail(fd, "no cuDriverGetVersion");
                                      int v = 0;
                                      if (int rc = get(&v); rc != 0) return fail(fd, "cuDriverGetVersion returned " + std::to_string(rc));
                                      ::dprintf(fd, "cuda %d\n", v);
                                      return 0;
                                    },
                                    timeout_ms, "read the CUDA version from " + libcuda_path));
  auto parts = str::split_nonempty(str::trim(out), ' ');
  auto v = parts.size() == 2 && parts[0] == "cuda" ? str::parse_u64(parts[1]) : std::nullopt;
  if (!v) return Error::generic("unexpected CUDA version report: " + out);
  // cuDriverGetVersion: 1000 * major + 10 * minor.
  return std::to_string(*v / 1000) + "." + std::to_string((*v % 1000) / 10);
}

Result<std::vector<NvmlGpu>> parse_nvml_report(const std::string& text) {
  std::vector<NvmlGpu> gpus;
  for (const auto& line : str::split_nonempty(text, '\n')) {
    auto f = str::split_nonempty(line, ' ');
    if (f.size() == 5 && f[0] == "gpu") {
      gpus.push_back({f[1], f[2], f[3], f[4] == "1", {}});
    } else if (f.size() == 6 && f[0] == "mig" && !gpus.empty() && gpus.back().bus_id == f[1]) {
      auto idx = str::parse_u64(f[2]), gi = str::parse_u64(f[4]), ci = str::parse_u64(f[5]);
      if (!idx || !gi || !ci) return Error::generic("bad NVML report line: " + line);
      gpus.back().migs.push_back({static_cast<unsigned>(*idx), f[3], static_cast<unsigned>(*gi), static_cast<unsigned>(*ci)});
    } else {
      return Error::generic("bad NVML report line: " + line);
    }
  }
  return gpus;
}

Result<std::vector<NvmlGpu>> probe_nvml(const std::string& libnvml_path, const std::vector<std::string>& bus_ids,
                                        int timeout_ms) {
  BERTH_ASSIGN(std::string out,
               run_in_child([&](int fd) { return nvml_child(libnvml_path, bus_ids, fd); }, timeout_ms, "query NVML"));
  return parse_nvml_report(out);
}

}  // namespace berth::devices::nvidia
