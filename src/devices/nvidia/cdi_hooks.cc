// Native nvidia-cdi-hook subcommands: create-symlinks, update-ldcache, enable-cuda-compat,
// disable-device-node-modification, chmod (see cdi_hooks.h).
#include "devices/nvidia/cdi_hooks.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "devices/nvidia/compat.h"
#include "devices/nvidia/container_fs.h"
#include "devices/nvidia/discover.h"
#include "devices/nvidia/module.h"
#include "devices/nvidia/plan.h"
#include "util/file.h"
#include "util/log.h"
#include "util/strings.h"

namespace berth::devices::nvidia {
namespace {

struct Call {
  std::string sub;
  std::vector<std::string> args;  // after the subcommand
};

std::optional<Call> nvidia_hook(const spec::Hook& h) {
  std::string base = h.path.substr(h.path.rfind('/') + 1);
  size_t at;
  if (base == "nvidia-cdi-hook") at = 1;
  else if (base == "nvidia-ctk" && h.args.size() > 1 && h.args[1] == "hook") at = 2;
  else return std::nullopt;
  if (h.args.size() <= at) return std::nullopt;
  return Call{h.args[at], std::vector<std::string>(h.args.begin() + static_cast<long>(at) + 1, h.args.end())};
}

// Values of --name X and --name=X.
std::vector<std::string> flag(const std::vector<std::string>& args, const std::string& name) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) out.push_back(args[++i]);
    else if (str::starts_with(args[i], name + "=")) out.push_back(args[i].substr(name.size() + 1));
  }
  return out;
}

// Like the hook: only params changes; everything else of /proc/driver/nvidia stays visible.
Overlay proc_mask(const HostView& host) {
  Overlay o;
  o.container_path = "/proc/driver/nvidia";
  std::string dir = host.proc("/driver/nvidia");
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (struct dirent* ent = ::readdir(d))
      if (ent->d_name[0] != '.') names.emplace_back(ent->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    struct stat st;
    std::string path = dir + "/" + n;
    if (::stat(path.c_str(), &st) < 0) continue;
    if (S_ISDIR(st.st_mode)) {
      o.binds.push_back({path, n, {}});
    } else if (auto text = file::read(path, 1u << 20)) {
      o.files.push_back({n, n == "params" ? mask_params(*text) : *text, 0444});
    }
  }
  return o;
}

struct Translation {
  std::vector<std::string> folders;
  std::optional<std::string> host_driver;
  bool mask = false;
};

bool translate(const spec::Hook& h, Edits& e, Translation& t) {
  auto call = nvidia_hook(h);
  if (!call) return false;
  if (call->sub == "create-symlinks") {
    for (const auto& l : flag(call->args, "--link")) {
      auto sep = l.find("::");
      if (sep != std::string::npos) e.symlinks.push_back({l.substr(0, sep), l.substr(sep + 2)});
    }
  } else if (call->sub == "update-ldcache") {
    for (const auto& f : flag(call->args, "--folder"))
      if (std::find(t.folders.begin(), t.folders.end(), f) == t.folders.end()) t.folders.push_back(f);
  } else if (call->sub == "enable-cuda-compat") {
    auto v = flag(call->args, "--host-driver-version");
    if (!v.empty()) t.host_driver = v.back();
  } else if (call->sub == "disable-device-node-modification") {
    t.mask = true;
  } else if (call->sub == "chmod") {
    log::warn("CDI hook nvidia-cdi-hook chmod is not run by berth (" + str::join(call->args, " ") + ")");
  } else {
    return false;
  }
  return true;
}

}  // namespace

Status translate_cdi_hooks(Edits& e, const spec::Spec& spec, const NvidiaConfig& cfg, const std::string& rootfs) {
  Translation t;
  std::vector<StagedHook> rest;
  for (auto& h : e.hooks)
    if (!translate(h.hook, e, t)) rest.push_back(std::move(h));
  e.hooks = std::move(rest);
  if (t.mask && mounts_proc(spec)) e.overlays.push_back(proc_mask(HostView::from(cfg)));
  if (t.folders.empty() && !t.host_driver) return ok();
  BERTH_ASSIGN(ContainerFacts ct, inspect_container(rootfs));
  std::string compat;
  if (t.host_driver && ct.compat) {
    CompatDecision d = decide_compat(*t.host_driver, "", ct.compat->version, ct.compat->note);
    log::debug("CDI enable-cuda-compat: " + d.reason);
    if (d.use) compat = ct.compat->dir;
  }
  std::string ldconfig = ct.libc == Libc::kGlibc ? choose_ldconfig(cfg) : "";
  ld_config_edits(ct, t.folders, compat, ldconfig, "01-berth-cdi.conf", e);
  return ok();
}

}  // namespace berth::devices::nvidia
