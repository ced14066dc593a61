// The NVIDIA module's flow (see module.h): NVIDIA_VISIBLE_DEVICES and friends → Edits.
#include "devices/nvidia/module.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <optional>
#include <set>

#include "devices/nvidia/cache.h"
#include "devices/nvidia/compat.h"
#include "devices/nvidia/container_fs.h"
#include "devices/nvidia/discover.h"
#include "devices/nvidia/elf.h"
#include "devices/nvidia/plan.h"
#include "devices/nvidia/probe.h"
#include "devices/nvidia/require.h"
#include "devices/nvidia/select.h"
#include "util/log.h"
#include "util/strings.h"

namespace berth::devices::nvidia {
namespace {

// NVML, asked at most once per create and only when a MIG name or a brand/arch rule needs
// it; its answer is kept in the driver cache under the MIG state (see cache.h).
struct LazyNvml {
  DriverCache& cache;
  const DriverFiles& files;
  const HostView& host;
  const HostDevices& dev;
  std::optional<Result<std::vector<NvmlGpu>>> data;
  bool from_cache = false;

  Result<std::vector<NvmlGpu>> get() {
    if (!data) data = load(true);
    return *data;
  }
  // The cached layout named a MIG instance the driver does not have: NVML itself is asked.
  void refresh() { data = load(false); }
  Result<std::vector<NvmlGpu>> load(bool reuse) {
    std::vector<std::string> buses;
    for (const auto& g : dev.gpus) buses.push_back(g.bus_id);
    return cache.nvml(files, buses, mig_state(host), reuse, &from_cache);
  }
};

// The CUDA version, asked of libcuda only when a decision needs it (cache.h).
struct LazyCuda {
  DriverCache& cache;
  DriverFiles& files;
  bool asked = false;

  const std::string& get() {
    if (!asked) cache.need_cuda_version(files, static_cast<int64_t>(::time(nullptr)));
    asked = true;
    return files.cuda_version;
  }
};

// One requirement for every selected GPU. Facts missing from procfs are fetched lazily:
// the CUDA version from libcuda, brand and arch from NVML. A requirement that hinges on a
// CUDA version that a present libcuda did not give (a failing or hung driver) is not
// checked, with a warning saying why: the driver, not the image, is at fault, and the
// container fails as it would on that host anyway when it runs CUDA.
Status check_requirement(const std::string& text, const Requirement& r, const DriverFiles& files, const Selection& sel,
                         LazyNvml& nvml, LazyCuda& cuda) {
  size_t n = std::max<size_t>(sel.gpus.size(), 1);
  for (size_t i = 0; i < n; ++i) {
    Facts f{files.cuda_version, files.version, "", "", ""};
    if (!sel.gpus.empty()) f.gpu = "GPU " + std::to_string(sel.gpus[i].gpu.index) + " (" + sel.gpus[i].gpu.model + ")";
    Evaluation ev = evaluate(r, f);
    std::string why;
    bool asked_nvml = false;
    for (int round = 0; round < 3 && ev.verdict == Verdict::kUnknown; ++round) {
      if (ev.unknown_rule == "cuda" && !cuda.asked) {
        f.cuda = cuda.get();
      } else if ((ev.unknown_rule == "brand" || ev.unknown_rule == "arch") && !sel.gpus.empty() && !asked_nvml) {
        asked_nvml = true;
        auto data = nvml.get();
        if (!data) why = data.error().message();
        for (const auto& g : data ? *data : std::vector<NvmlGpu>{})
          if (pci_key(g.bus_id) == pci_key(sel.gpus[i].gpu.bus_id)) f.brand = g.brand, f.arch = g.arch;
      } else {
        break;
      }
      ev = evaluate(r, f);
    }
    if (ev.verdict == Verdict::kUnknown && ev.unknown_rule == "cuda") {
      if (find_libcuda(files)) {
        log::warn("nvidia: CUDA version unknown (" + files.cuda_error + "): requirement \"" + text + "\" not checked");
        return ok();
      }
      why = files.cuda_error;
    }
    if (ev.verdict != Verdict::kHolds) return requirement_error(text, ev, f, why);
  }
  return ok();
}

Status check_requirements(const Request& req, const DriverFiles& files, const Selection& sel, LazyNvml& nvml,
                          LazyCuda& cuda) {
  if (req.disable_require) return ok();
  for (const auto& text : req.requirements) {
    BERTH_ASSIGN(Requirement r, parse_requirement(text).context("NVIDIA_REQUIRE"));
    BERTH_TRY(check_requirement(text, r, files, sel, nvml, cuda));
  }
  return ok();
}

// NVIDIA_MIG_CONFIG_DEVICES / _MONITOR_DEVICES name whole GPUs among the selected ones.
Result<std::vector<unsigned>> mig_gpus(const std::vector<std::string>& ids, const char* what, const HostDevices& dev,
                                       const Selection& sel) {
  std::vector<unsigned> out;
  if (ids.empty()) return out;
  BERTH_ASSIGN(Selection s, select_devices(ids, dev.gpus, [] { return Result<std::vector<NvmlGpu>>(Error::generic("MIG devices cannot be named here")); })
                                .context(what));
  for (const auto& g : s.gpus) {
    if (!sel.find(g.gpu.index))
      return Error::invalid_spec(std::string(what) + ": GPU " + std::to_string(g.gpu.index) + " is not in NVIDIA_VISIBLE_DEVICES");
    out.push_back(g.gpu.index);
  }
  return out;
}

Result<std::vector<uint32_t>> imex_channels(const Request& req, const HostDevices& dev) {
  std::vector<uint32_t> out;
  if (req.imex_channels.empty()) return out;
  if (!dev.majors.imex) return Error::invalid_spec("NVIDIA_IMEX_CHANNELS: nvidia-caps-imex-channels is not in /proc/devices");
  if (req.imex_channels[0] == "all") return dev.imex_channels;
  for (const auto& c : req.imex_channels) {
    uint32_t n = static_cast<uint32_t>(*str::parse_u64(c));
    if (std::find(dev.imex_channels.begin(), dev.imex_channels.end(), n) == dev.imex_channels.end()) {
      std::vector<std::string> have;
      for (uint32_t h : dev.imex_channels) have.push_back(std::to_string(h));
      return Error::invalid_spec("NVIDIA_IMEX_CHANNELS: no channel " + c + " on this host (channels: " +
                                 (have.empty() ? "none" : str::join(have, ",")) + ")");
    }
    out.push_back(n);
  }
  return out;
}

// A compute container without the host's libcuda runs no CUDA program: said, and refused
// when the image states that it needs CUDA (unless NVIDIA_DISABLE_REQUIRE).
Status check_libcuda(const Request& req, const DriverFiles& files, const RootDir& driver, const NvidiaConfig& cfg) {
  if (!(req.caps & kCompute) || find_libcuda(files)) return ok();
  std::string msg = "libcuda.so.1 of driver " + files.version + " is not in the driver root's ld.so.cache (" +
                    driver.host_path(cfg.ldcache) + ")";
  if (!req.cuda_requirement.empty() && !req.disable_require)
    return Error::generic("GPUs requested (" + req.source + ") with a CUDA requirement (" + req.cuda_requirement + ") but " + msg);
  log::warn("nvidia: " + msg + ": the container gets no libcuda (" + req.source + ")");
  return ok();
}

// The driver's MIG minor table lists every possible GPU, GI and CI: read only for a MIG
// request, and only its GPUs' entries kept.
void load_mig_minors(const HostView& host, const Selection& sel, const PlanInput& in, HostDevices& dev) {
  std::set<uint32_t> minors;
  for (const auto& s : sel.gpus)
    if (!s.migs.empty()) minors.insert(s.gpu.minor);
  for (unsigned idx : in.mig_config_gpus)
    for (const auto& g : dev.gpus)
      if (g.index == idx) minors.insert(g.minor);
  if (minors.empty() && in.mig_monitor_gpus.empty()) return;
  dev.mig = read_mig_minors(host, minors);
}

std::string describe_selection(const Selection& sel) {
  std::vector<std::string> out;
  for (const auto& s : sel.gpus) {
    if (s.whole) out.push_back(std::to_string(s.gpu.index));
    for (const auto& m : s.migs) out.push_back(std::to_string(s.gpu.index) + ":" + std::to_string(m.index));
  }
  return out.empty() ? "none" : str::join(out, ",");
}

// Two sources asked for GPUs: one container, one set of GPUs. Both must name the same ones.
Status check_also(const Request& req, const Selection& sel, const HostDevices& dev, LazyNvml& nvml) {
  if (!req.also) return ok();
  BERTH_ASSIGN(Selection other, select_devices(req.also->devices, dev.gpus, [&] { return nvml.get(); }).context(req.also->source));
  std::string a = describe_selection(sel), b = describe_selection(other);
  if (a == b) return ok();
  return Error::invalid_spec(req.also->source + " (GPUs " + b + ") and " + req.source + " (GPUs " + a +
                             ") request different GPUs: ask in one place");
}

// A MIG device whose GI or CI the driver does not expose: from a cached layout, the layout
// is stale (the instance was destroyed or renumbered), so NVML is asked again; from NVML
// itself, the device is refused rather than handed over half set up.
Status check_mig_instances(const HostView& host, const Selection& sel) {
  for (const auto& s : sel.gpus)
    for (const auto& m : s.migs)
      if (!mig_instance_exists(host, s.gpu.minor, m.gi, m.ci))
        return Error::invalid_spec("MIG device " + m.uuid + " (GPU " + std::to_string(s.gpu.index) + " GI " +
                                   std::to_string(m.gi) + " CI " + std::to_string(m.ci) + "): the driver has no " +
                                   host.proc("/driver/nvidia/capabilities/gpu" + std::to_string(s.gpu.minor) + "/mig/gi" +
                                             std::to_string(m.gi) + "/ci" + std::to_string(m.ci) + "/access"));
  return ok();
}

Result<Selection> select_checked(const Request& req, const HostDevices& dev, const HostView& host, LazyNvml& nvml) {
  auto lookup = [&] { return nvml.get(); };
  BERTH_ASSIGN(Selection sel, select_devices(req.devices, dev.gpus, lookup).context(req.source));
  if (nvml.from_cache && !check_mig_instances(host, sel)) {
    log::debug("nvidia: the cached MIG layout names an instance the driver lacks: asking NVML again");
    nvml.refresh();
    BERTH_ASSIGN(sel, select_devices(req.devices, dev.gpus, lookup).context(req.source));
  }
  BERTH_TRY(check_mig_instances(host, sel));
  BERTH_TRY(check_also(req, sel, dev, nvml));
  return sel;
}

}  // namespace

// The host ldconfig, which must be static: it runs on the image's files after pivot_root
// and would otherwise load the image's libc.
std::string choose_ldconfig(const NvidiaConfig& cfg) {
  std::string path = cfg.ldconfig;
  if (path.empty()) path = ::access("/sbin/ldconfig.real", X_OK) == 0 ? "/sbin/ldconfig.real" : "/sbin/ldconfig";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto info = fd ? read_elf_info(fd.get()) : Result<ElfInfo>(Error::sys(errno, "open " + path));
  if (!info || info->has_interp) {
    log::warn("nvidia: not running " + path + " in the container: " +
              (info ? std::string("it is dynamically linked") : info.error().message()) + "; SONAME links only");
    return "";
  }
  return path;
}

bool mounts_proc(const spec::Spec& spec) {
  for (const auto& m : spec.mounts)
    if (m.type == "proc" && (m.destination == "/proc" || m.destination == "/proc/")) return true;
  return false;
}

bool driver_loaded(const NvidiaConfig& cfg) {
  struct stat st;
  return ::stat(HostView::from(cfg).proc("/driver/nvidia/version").c_str(), &st) == 0;
}

Result<Edits> nvidia_edits(const spec::Spec& spec, const Request& req, const NvidiaConfig& cfg, const ModuleContext& ctx) {
  if (!req.wanted) return Edits{};
  HostView host = HostView::from(cfg);
  BERTH_ASSIGN(auto version, read_driver_version(host));
  if (!version) {
    std::string msg = "GPUs requested (" + req.source + ") but no NVIDIA driver is loaded on this host (" +
                      host.proc("/driver/nvidia/version") + " does not exist)";
    if (req.explicit_request() || cfg.env_request_without_driver == "error") return Error::generic(msg);
    if (cfg.env_request_without_driver == "warn") log::warn(msg + ": running without GPUs");
    return Edits{};
  }
  BERTH_ASSIGN(HostDevices dev, discover_devices(host, *version));
  BERTH_ASSIGN(RootDir driver, RootDir::open(cfg.driver_root).context("nvidia driver root"));
  DriverCache cache(driver, cfg, *version, ctx.state_root);
  BERTH_ASSIGN(DriverFiles files, cache.files());
  BERTH_TRY(check_libcuda(req, files, driver, cfg));
  LazyNvml nvml{cache, files, host, dev, std::nullopt};
  LazyCuda cuda{cache, files};
  Selection sel;
  if (!req.driver_only) {
    BERTH_ASSIGN(sel, select_checked(req, dev, host, nvml));
  }
  BERTH_TRY(check_requirements(req, files, sel, nvml, cuda));
  PlanInput in;
  BERTH_ASSIGN(in.mig_config_gpus, mig_gpus(req.mig_config, "NVIDIA_MIG_CONFIG_DEVICES", dev, sel));
  BERTH_ASSIGN(in.mig_monitor_gpus, mig_gpus(req.mig_monitor, "NVIDIA_MIG_MONITOR_DEVICES", dev, sel));
  BERTH_ASSIGN(in.imex, imex_channels(req, dev));
  load_mig_minors(host, sel, in, dev);
  std::vector<std::string> dests;
  for (const auto& m : spec.mounts) dests.push_back(m.destination);
  BERTH_ASSIGN(ContainerFacts ct, inspect_container(ctx.rootfs, dests));
  if (ct.compat && (req.caps & kCompute)) {
    // Only a note-bearing compat libcuda is weighed against the host's CUDA version.
    CompatDecision d = decide_compat(*version, ct.compat->note ? cuda.get() : "", ct.compat->version, ct.compat->note);
    in.use_compat = d.use;
    log::debug("nvidia: CUDA forward compatibility: " + d.reason);
    if (ct.compat->note && files.cuda_version.empty() && d.use)
      log::warn("nvidia: CUDA version unknown (" + files.cuda_error + "): forward compatibility chosen by the driver branch alone");
  }
  if (ct.libc == Libc::kGlibc) in.ldconfig = choose_ldconfig(cfg);
  in.req = &req;
  in.dev = &dev;
  in.files = &files;
  in.sel = &sel;
  in.ct = &ct;
  in.host = host;
  in.driver_root = driver.host_path("/");
  in.proc_mounted = mounts_proc(spec);
  struct stat st;
  in.has_modeset = ::stat(host.dev("/nvidia-modeset").c_str(), &st) == 0;
  if (req.caps & kGraphics)
    for (const auto& s : sel.gpus) in.dri[s.gpu.bus_id] = dri_nodes(host, s.gpu.bus_id);
  return plan_edits(in);
}

}  // namespace berth::devices::nvidia
