// NVIDIA Edits, part one: device nodes, the /proc/driver/nvidia mask, the graphics
// application profile (see plan.h). Driver files and ldconfig are in plan_files.cc.
#include "devices/nvidia/plan.h"

#include <algorithm>
#include <cstdio>

namespace berth::devices::nvidia {
namespace {

constexpr uint32_t kCtlMinor = 255, kModesetMinor = 254;

struct Planner {
  const PlanInput& in;
  Edits& e;

  void node(const std::string& rel, uint32_t major, uint32_t minor, uint32_t mode) {
    node(rel, major, minor, mode, in.dev->params.uid, in.dev->params.gid);
  }
  void node(const std::string& rel, uint32_t major, uint32_t minor, uint32_t mode, uint32_t uid, uint32_t gid) {
    std::string path = "/dev" + rel;
    for (const auto& n : e.nodes)
      if (n.container_path == path) return;
    DeviceNode n;
    n.container_path = path;
    n.host_path = in.host.dev(rel);
    n.type = 'c';
    n.major = major;
    n.minor = minor;
    n.mode = mode;
    n.uid = uid;
    n.gid = gid;
    n.access = "rw";
    e.nodes.push_back(std::move(n));
  }

  void cap_node(uint32_t minor) {
    if (in.dev->majors.caps) node("/nvidia-caps/nvidia-cap" + std::to_string(minor), *in.dev->majors.caps, minor, 0444);
  }

  // The access files' minors come from mig-minors ("gpu<minor>/gi<g>/ci<c>/access").
  void mig_caps(const SelectedGpu& s) {
    std::string gpu = "gpu" + std::to_string(s.gpu.minor);
    for (const auto& m : s.migs) {
      std::string gi = gpu + "/gi" + std::to_string(m.gi) + "/access";
      std::string ci = gpu + "/gi" + std::to_string(m.gi) + "/ci" + std::to_string(m.ci) + "/access";
      for (const auto& key : {gi, ci})
        if (auto it = in.dev->mig.by_path.find(key); it != in.dev->mig.by_path.end()) cap_node(it->second);
    }
  }

  const Gpu* gpu_by_index(unsigned index) const {
    for (const auto& g : in.dev->gpus)
      if (g.index == index) return &g;
    return nullptr;
  }

  void mig_config_caps() {
    if (in.dev->mig.config && !in.mig_config_gpus.empty()) cap_node(*in.dev->mig.config);
    for (unsigned idx : in.mig_config_gpus) {
      const Gpu* g = gpu_by_index(idx);
      if (!g) continue;
      // Every GI/CI of the GPU: a MIG-config container creates and destroys instances.
      std::string prefix = "gpu" + std::to_string(g->minor) + "/";
      for (const auto& [path, minor] : in.dev->mig.by_path)
        if (path.compare(0, prefix.size(), prefix) == 0) cap_node(minor);
    }
    if (in.dev->mig.monitor && !in.mig_monitor_gpus.empty()) cap_node(*in.dev->mig.monitor);
  }

  void dri_nodes() {
    for (const auto& s : in.sel->gpus) {
      auto it = in.dri.find(s.gpu.bus_id);
      if (it == in.dri.end()) continue;
      for (const auto& d : it->second) {
        node("/dri/" + d.name, d.major, d.minor, d.mode, d.uid, d.gid);
        std::string kind = d.name.rfind("card", 0) == 0 ? "card" : "render";
        e.symlinks.push_back({"../" + d.name, "/dev/dri/by-path/pci-" + s.gpu.bus_id + "-" + kind});
      }
    }
  }

  void nodes() {
    const Majors& mj = in.dev->majors;
    const DeviceParams& p = in.dev->params;
    uint32_t caps = in.req->caps;
    node("/nvidiactl", *mj.nvidia, kCtlMinor, p.mode);
    if ((caps & kCompute) && mj.uvm) {
      node("/nvidia-uvm", *mj.uvm, 0, p.mode);
      node("/nvidia-uvm-tools", *mj.uvm, 1, p.mode);
    }
    if ((caps & kDisplay) && in.has_modeset) node("/nvidia-modeset", *mj.nvidia, kModesetMinor, p.mode);
    for (const auto& s : in.sel->gpus) {
      node("/nvidia" + std::to_string(s.gpu.minor), *mj.nvidia, s.gpu.minor, p.mode);
      mig_caps(s);
    }
    mig_config_caps();
    if (mj.imex)
      for (uint32_t c : in.imex) node("/nvidia-caps-imex-channels/channel" + std::to_string(c), *mj.imex, c, 0666);
    if (caps & kGraphics) dri_nodes();
  }

  // A read-only tmpfs over /proc/driver/nvidia: params with ModifyDeviceFiles: 0 (the
  // container's driver must never mknod or chmod /dev/nvidia*), version, registry, and
  // only the selected GPUs' directories bound back.
  void proc_mask() {
    if (!in.proc_mounted) return;
    Overlay o;
    o.container_path = "/proc/driver/nvidia";
    o.files.push_back({"params", mask_params(in.dev->params_text), 0444});
    o.files.push_back({"version", in.dev->version_text, 0444});
    o.files.push_back({"registry", in.dev->registry_text, 0444});
    for (const auto& s : in.sel->gpus)
      o.binds.push_back({in.host.proc("/driver/nvidia/gpus/" + s.gpu.bus_id), "gpus/" + s.gpu.bus_id, {}});
    if (!in.mig_config_gpus.empty() || !in.mig_monitor_gpus.empty()) {
      o.binds.push_back({in.host.proc("/driver/nvidia/capabilities"), "capabilities", {}});
    } else {
      for (const auto& s : in.sel->gpus)
        for (const auto& m : s.migs) {
          std::string gi = "capabilities/gpu" + std::to_string(s.gpu.minor) + "/mig/gi" + std::to_string(m.gi);
          std::string ci = gi + "/ci" + std::to_string(m.ci);
          o.binds.push_back({in.host.proc("/driver/nvidia/" + gi + "/access"), gi + "/access", {}});
          o.binds.push_back({in.host.proc("/driver/nvidia/" + ci + "/access"), ci + "/access", {}});
        }
    }
    e.overlays.push_back(std::move(o));
  }

  // GLVND/EGL: only the selected GPUs are visible to EGL (by minor), as the toolkit's
  // application profile does.
  void app_profile() {
    if (!(in.req->caps & kGraphics)) return;
    unsigned long long mask = 0;
    for (const auto& s : in.sel->gpus)
      if (s.gpu.minor < 64) mask |= 1ull << s.gpu.minor;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "{\n  \"profiles\": [{\"name\": \"_container_\", \"settings\": [\"EGLVisibleDGPUDevices\", 0x%llx]}],\n"
                  "  \"rules\": [{\"pattern\": [], \"profile\": \"_container_\"}]\n}\n",
                  mask);
    Overlay o;
    o.container_path = "/etc/nvidia/nvidia-application-profiles-rc.d";
    o.files.push_back({"10-container.conf", buf, 0444});
    e.overlays.push_back(std::move(o));
  }
};

}  // namespace

Edits plan_edits(const PlanInput& in) {
  Edits e;
  Planner p{in, e};
  p.nodes();
  plan_driver_files(in, e);
  p.proc_mask();
  p.app_profile();
  plan_ld_config(in, e);
  return e;
}

}  // namespace berth::devices::nvidia
