// The device modules consulted by create (see device_modules.h): NVIDIA (NVIDIA_* env,
// org.berth.gpus, toolkit volume mounts) and CDI (cdi.k8s.io/* annotations), with the
// berth config file (nvidia.enabled, nvidia.loadKernelModules, cdi.enabled, cdi.specDirs).
#include "container/device_modules.h"

#include <algorithm>

#include "devices/cdi/apply.h"
#include "devices/cdi/registry.h"
#include "devices/config.h"
#include "devices/nvidia/cdi_hooks.h"
#include "devices/nvidia/modprobe.h"
#include "devices/nvidia/module.h"
#include "devices/rdma/request.h"
#include "util/log.h"
#include "util/strings.h"

namespace berth::container {
namespace {

namespace nv = devices::nvidia;

// Anything that may be a GPU request, decided from the spec alone.
bool maybe_gpu(const spec::Spec& spec) {
  if (spec.annotations.count(nv::kGpusAnnotation)) return true;
  if (spec.process && nv::env_value(spec.process->env, "NVIDIA_VISIBLE_DEVICES")) return true;
  for (const auto& m : spec.mounts)
    if (m.destination.find("/nvidia-container-devices/") != std::string::npos) return true;
  return false;
}

// nvidia.com/gpu names with no CDI spec on the host are served by the native module, so a
// Kubernetes node needs no generated spec files.
Result<nv::Request> native_cdi_request(const spec::Spec& spec, const devices::Config& cfg,
                                       std::vector<devices::cdi::QualifiedName>& names, const devices::cdi::Registry& reg) {
  std::vector<std::string> ids, texts;
  bool has_spec = false;
  for (const auto& s : reg.specs) has_spec = has_spec || s.kind == "nvidia.com/gpu";
  if (has_spec) return nv::Request{};
  std::erase_if(names, [&](const devices::cdi::QualifiedName& n) {
    if (n.kind != "nvidia.com/gpu") return false;
    ids.push_back(n.device);
    texts.push_back(n.text());
    return true;
  });
  if (ids.empty()) return nv::Request{};
  spec::Spec copy = spec;
  copy.annotations[nv::kGpusAnnotation] = str::join(ids, ",");
  BERTH_ASSIGN(nv::Request r, nv::parse_request(copy, {cfg.nvidia.default_capabilities, false}));
  r.origin = nv::Origin::kCdi;
  r.source = "CDI devices " + str::join(texts, ",");
  return r;
}

Status load_modules_if_needed(const devices::NvidiaConfig& cfg, const nv::Request& req) {
  if (!req.wanted || !cfg.load_kernel_modules || nv::driver_loaded(cfg)) return ok();
  std::vector<std::string> mods = {"nvidia"};
  if (req.caps & nv::kCompute) mods.push_back("nvidia-uvm");
  if (req.caps & nv::kDisplay) mods.push_back("nvidia-modeset");
  return nv::load_kernel_modules(cfg.modprobe, mods).context("nvidia.loadKernelModules");
}

}  // namespace

Result<devices::Edits> collect_device_edits(const spec::Spec& spec, const DeviceContext& ctx) {
  BERTH_ASSIGN(devices::Edits out, devices::rdma::edits(spec, {}));  // org.berth.rdma.devices
  BERTH_ASSIGN(auto cdi_names, devices::cdi::requested_devices(spec.annotations));
  if (cdi_names.empty() && !maybe_gpu(spec)) return out;
  BERTH_ASSIGN(devices::Config cfg, devices::load_config());
  if (!cdi_names.empty() && !cfg.cdi.enabled) {
    // Turned off where the engine already applied CDI and still passes the annotations on.
    log::debug("CDI is disabled in the berth config: ignoring " + cdi_names[0].text() + " and the other CDI annotations");
    cdi_names.clear();
  }
  devices::cdi::Registry reg;
  if (!cdi_names.empty()) reg = devices::cdi::load_registry(cfg.cdi.spec_dirs);
  BERTH_ASSIGN(nv::Request req, native_cdi_request(spec, cfg, cdi_names, reg));
  if (!req.wanted) {
    BERTH_ASSIGN(req, nv::parse_request(spec, {cfg.nvidia.default_capabilities, cfg.nvidia.accept_volume_mounts}));
    bool cdi_gpu = std::any_of(cdi_names.begin(), cdi_names.end(), [](const auto& n) { return n.kind == "nvidia.com/gpu"; });
    if (req.wanted && cdi_gpu && req.origin != nv::Origin::kEnv)
      return Error::invalid_spec(req.source + " and CDI nvidia.com/gpu devices both request GPUs: use one");
    // With CDI devices the CDI specs decide; a CUDA image's NVIDIA_VISIBLE_DEVICES=all
    // must not add every GPU beside them.
    if (req.origin == nv::Origin::kEnv && !cdi_names.empty()) req.wanted = false;
  }
  if (req.wanted && !cfg.nvidia.enabled) {
    if (req.explicit_request()) return Error::unsupported("GPUs requested (" + req.source + ") but the NVIDIA module is disabled in " + cfg.source);
    req.wanted = false;
  }
  BERTH_TRY(load_modules_if_needed(cfg.nvidia, req));
  nv::ModuleContext mctx{ctx.rootfs, ctx.state_root, ctx.user_ns};
  BERTH_ASSIGN(devices::Edits gpu, nv::nvidia_edits(spec, req, cfg.nvidia, mctx));
  devices::append(out, gpu);
  if (!cdi_names.empty()) {
    BERTH_ASSIGN(auto resolved, devices::cdi::resolve(reg, cdi_names));
    BERTH_ASSIGN(devices::Edits cdi, devices::cdi::cdi_edits(resolved));
    BERTH_TRY(nv::translate_cdi_hooks(cdi, spec, cfg.nvidia, ctx.rootfs));
    devices::append(out, cdi);
  }
  return out;
}

}  // namespace berth::container
