// The device modules consulted by create (see device_modules.h): NVIDIA (NVIDIA_* env,
// org.berth.gpus, toolkit volume mounts), RDMA (org.berth.rdma.devices) and CDI
// (cdi.k8s.io/* annotations), with the berth config file (nvidia.enabled,
// nvidia.loadKernelModules, cdi.enabled, cdi.specDirs, rdma.sysRoot/devRoot); the host-node
// check of user namespaces.
#include "container/device_modules.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

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

// GPU requests from the spec (env, volume mounts, org.berth.gpus) and from CDI names, merged
// into one: CDI devices of other kinds (RDMA, FPGA) take nothing away from the spec's GPUs.
// When CDI names GPUs too, the image's implicit NVIDIA_VISIBLE_DEVICES=all (every CUDA
// image carries it) yields to the CDI choice; any other list must select the same GPUs
// (checked against the host by the module), and beside GPUs from CDI spec files, whose
// devices berth cannot compare, it is an error naming both.
Result<nv::Request> merge_gpu_requests(nv::Request own, nv::Request cdi_req, const std::vector<devices::cdi::QualifiedName>& cdi_names) {
  std::vector<std::string> spec_gpus;
  for (const auto& n : cdi_names)
    if (n.kind == "nvidia.com/gpu") spec_gpus.push_back(n.text());
  if (!own.wanted || (!cdi_req.wanted && spec_gpus.empty())) return own.wanted ? own : cdi_req;
  bool image_all = own.origin == nv::Origin::kEnv && own.devices == std::vector<std::string>{"all"};
  if (image_all || own.driver_only) {
    log::debug("nvidia: " + own.source + " yields to the GPUs named by CDI devices");
    if (cdi_req.wanted) return cdi_req;
    own.wanted = false;
    return own;
  }
  if (!spec_gpus.empty())
    return Error::invalid_spec(own.source + " and CDI devices " + str::join(spec_gpus, ",") + " both request GPUs: use one");
  cdi_req.also = nv::Request::Also{own.source, own.devices};
  return cdi_req;
}

Status load_modules_if_needed(const devices::NvidiaConfig& cfg, const nv::Request& req) {
  if (!req.wanted || !cfg.load_kernel_modules || nv::driver_loaded(cfg)) return ok();
  std::vector<std::string> mods = {"nvidia"};
  if (req.caps & nv::kCompute) mods.push_back("nvidia-uvm");
  if (req.caps & nv::kDisplay) mods.push_back("nvidia-modeset");
  return nv::load_kernel_modules(cfg.modprobe, mods).context("nvidia.loadKernelModules");
}

devices::rdma::HostView rdma_host(const devices::Config& cfg) { return {cfg.rdma.sys_root, cfg.rdma.dev_root}; }

// In a user namespace every node is bound from its host path: a missing one is named here,
// before anything is set up. berth never makes a node on the host (no mknod there, as the
// toolkit's nvidia-modprobe does); the driver or udev must have made it.
Status check_host_nodes(const devices::Edits& e) {
  for (const auto& n : e.nodes) {
    std::string host = n.host_path.empty() ? n.container_path : n.host_path;
    struct stat st;
    if (::stat(host.c_str(), &st) != 0)
      return Error::sys(errno, "device " + n.container_path + ": host node " + host +
                                   " (bound in a user namespace; berth creates no device nodes on the host)");
    bool type_ok = n.type == 'b' ? S_ISBLK(st.st_mode) : S_ISCHR(st.st_mode);
    if (!type_ok || ::major(st.st_rdev) != n.major || ::minor(st.st_rdev) != n.minor)
      return Error::invalid_spec("device " + n.container_path + ": host node " + host + " is not the device " +
                                 std::string(1, n.type == 'b' ? 'b' : 'c') + " " + std::to_string(n.major) + ":" +
                                 std::to_string(n.minor));
  }
  return ok();
}

bool maybe_rdma(const spec::Spec& spec) { return spec.annotations.count(devices::rdma::kAnnotation) != 0; }

// Without a "network" entry the container stays in the runtime's network namespace, where
// every RDMA device the runtime sees already is: nothing moves, and the init's namespace is
// not opened (an unprivileged caller may not: the init is no longer dumpable once mapped).
bool own_network_namespace(const spec::Spec& spec) {
  if (!spec.linux) return false;
  const auto& ns = spec.linux->namespaces;
  return std::any_of(ns.begin(), ns.end(), [](const spec::Namespace& n) { return n.type == "network"; });
}

Result<devices::Edits> collect_unchecked(const spec::Spec& spec, const DeviceContext& ctx) {
  BERTH_ASSIGN(auto cdi_names, devices::cdi::requested_devices(spec.annotations));
  if (cdi_names.empty() && !maybe_gpu(spec) && !maybe_rdma(spec)) return devices::Edits{};
  BERTH_ASSIGN(devices::Config cfg, devices::load_config());
  BERTH_ASSIGN(devices::Edits out, devices::rdma::edits(spec, rdma_host(cfg)));  // org.berth.rdma.devices
  if (!cdi_names.empty() && !cfg.cdi.enabled) {
    // Turned off where the engine already applied CDI and still passes the annotations on.
    log::debug("CDI is disabled in the berth config: ignoring " + cdi_names[0].text() + " and the other CDI annotations");
    cdi_names.clear();
  }
  devices::cdi::Registry reg;
  if (!cdi_names.empty()) reg = devices::cdi::load_registry(cfg.cdi.spec_dirs);
  BERTH_ASSIGN(nv::Request cdi_req, native_cdi_request(spec, cfg, cdi_names, reg));
  BERTH_ASSIGN(nv::Request own, nv::parse_request(spec, {cfg.nvidia.default_capabilities, cfg.nvidia.accept_volume_mounts}));
  BERTH_ASSIGN(nv::Request req, merge_gpu_requests(std::move(own), std::move(cdi_req), cdi_names));
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

}  // namespace

Result<devices::Edits> collect_device_edits(const spec::Spec& spec, const DeviceContext& ctx) {
  BERTH_ASSIGN(devices::Edits out, collect_unchecked(spec, ctx));
  if (ctx.user_ns) BERTH_TRY(check_host_nodes(out));
  return out;
}

Result<std::vector<devices::rdma::NetnsMove>> rdma_netns_moves(const spec::Spec& spec) {
  if (!maybe_rdma(spec) || !own_network_namespace(spec)) return std::vector<devices::rdma::NetnsMove>{};
  BERTH_ASSIGN(devices::Config cfg, devices::load_config());
  return devices::rdma::netns_moves(spec, rdma_host(cfg));
}

}  // namespace berth::container
