// Folding device-module Edits into the spec and the plan (see extend.h): hooks,
// linux.netDevices, process.env, additional GIDs, nodes and their cgroup rules, binds,
// links, files, overlays, ldconfig runs, the modules' own tmpfs directories.
#include "container/extend.h"

#include <sys/stat.h>

#include <algorithm>

#include "linux/paths.h"
#include "linux/rootfs/options.h"
#include "linux/selinux.h"
#include "util/env.h"

namespace berth::container {
namespace {

// /dev is a bind mount (of the host's /dev, mostly): nothing is made in it, a node must be
// there already (see DeviceStep::existing) and links are the source's own (udev's).
bool in_bound_dev(const linux::rootfs::RootfsPlan& plan, const std::string& path) {
  return !plan.setup_dev && path.compare(0, 5, "/dev/") == 0;
}

spec::DeviceRule allow_rule(const devices::DeviceNode& n) {
  spec::DeviceRule r;
  r.allow = true;
  r.type = std::string(1, n.type == 'b' ? 'b' : 'c');
  r.major = n.major;
  r.minor = n.minor;
  r.access = n.access;
  return r;
}

void merge_nodes(const devices::Edits& e, linux::rootfs::RootfsPlan& plan, std::vector<spec::DeviceRule>& rules,
                 bool user_ns) {
  for (const auto& n : e.nodes) {
    linux::rootfs::DeviceStep d;
    d.path = linux::clean_path(n.container_path);
    d.type = n.type;
    d.major = n.major;
    d.minor = n.minor;
    d.mode = n.mode;
    d.uid = n.uid;
    d.gid = n.gid;
    d.bind = user_ns;
    d.host_path = n.host_path.empty() ? n.container_path : n.host_path;
    d.existing = in_bound_dev(plan, d.path);
    std::erase_if(plan.devices, [&](const linux::rootfs::DeviceStep& x) { return x.path == d.path; });
    plan.devices.push_back(d);
    rules.push_back(allow_rule(n));
  }
  rules.insert(rules.end(), e.extra_rules.begin(), e.extra_rules.end());
}

// A module's own directory (Edits::tmpfs): a tmpfs before its binds and links, read-only
// at the end (the links are made after the mounts phase), labelled as the spec's tmpfs.
void merge_tmpfs(const devices::Edits& e, linux::rootfs::RootfsPlan& plan) {
  for (const auto& t : e.tmpfs) {
    linux::rootfs::MountStep s;
    s.source = s.type = "tmpfs";
    s.destination = linux::clean_path(t);
    s.opts = linux::rootfs::parse_mount_options({"nosuid", "nodev", "noexec", "mode=0755"});
    if (!plan.mount_label.empty()) s.opts.data.push_back(linux::context_option(plan.mount_label));
    s.defer_ro = true;
    plan.mounts.push_back(std::move(s));
  }
}

void merge_mounts(const devices::Edits& e, linux::rootfs::RootfsPlan& plan) {
  merge_tmpfs(e, plan);
  for (const auto& m : e.mounts) {
    linux::rootfs::MountStep s;
    s.kind = linux::rootfs::MountKind::kBind;
    s.source = m.host_path;
    s.destination = linux::clean_path(m.container_path);
    std::vector<std::string> opts = m.options;
    opts.push_back("bind");
    s.opts = linux::rootfs::parse_mount_options(opts);
    struct stat st;
    s.file = ::stat(m.host_path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
    plan.mounts.push_back(std::move(s));
  }
}

void merge_overlays(const devices::Edits& e, linux::rootfs::RootfsPlan& plan) {
  for (const auto& o : e.overlays) {
    linux::rootfs::OverlayStep s;
    s.path = linux::clean_path(o.container_path);
    for (const auto& f : o.files) s.files.push_back({f.container_path, f.content, f.mode});
    for (const auto& b : o.binds) s.binds.emplace_back(b.host_path, b.container_path);
    plan.overlays.push_back(std::move(s));
  }
}

std::vector<spec::Hook>* stage_list(spec::Hooks& h, const std::string& stage) {
  if (stage == "prestart") return &h.prestart;
  if (stage == "createRuntime") return &h.create_runtime;
  if (stage == "createContainer") return &h.create_container;
  if (stage == "startContainer") return &h.start_container;
  if (stage == "poststart") return &h.poststart;
  if (stage == "poststop") return &h.poststop;
  return nullptr;
}

Status merge_hooks(const std::vector<devices::StagedHook>& hooks, spec::Spec& spec) {
  for (const auto& h : hooks) {
    if (!spec.hooks) spec.hooks.emplace();
    std::vector<spec::Hook>* list = stage_list(*spec.hooks, h.stage);
    if (!list) return Error::invalid_spec("CDI hook " + h.hook.path + ": unknown hook stage \"" + h.stage + "\"");
    list->push_back(h.hook);
  }
  return ok();
}

std::string name_inside(const std::string& host, const spec::NetDevice& d) { return d.name.empty() ? host : d.name; }

Status add_net_device(std::map<std::string, spec::NetDevice>& have, const std::string& host, const spec::NetDevice& dev) {
  std::string inside = name_inside(host, dev);
  if (auto same = have.find(host); same != have.end()) {
    if (name_inside(host, same->second) == inside) return ok();
    return Error::invalid_spec("CDI netDevices: " + host + " is moved as " + name_inside(host, same->second) +
                               " by linux.netDevices and as " + inside + " by a CDI device");
  }
  // A template name ("net%d") is numbered by the kernel: two of them do not collide.
  for (const auto& [other, d] : have)
    if (name_inside(other, d) == inside && inside.find('%') == std::string::npos)
      return Error::invalid_spec("CDI netDevices: " + host + " and " + other + " would both be " + inside + " in the container");
  have[host] = dev;
  return ok();
}

Status merge_net_devices(const std::map<std::string, spec::NetDevice>& add, spec::Spec& spec) {
  if (add.empty()) return ok();
  bool netns = spec.linux && std::any_of(spec.linux->namespaces.begin(), spec.linux->namespaces.end(),
                                         [](const spec::Namespace& n) { return n.type == "network"; });
  if (!netns)
    return Error::invalid_spec("CDI netDevices (" + add.begin()->first +
                               "): unable to move network devices without a private NET namespace (linux.namespaces)");
  for (const auto& [host, dev] : add) BERTH_TRY(add_net_device(spec.linux->net_devices, host, dev));
  return ok();
}

}  // namespace

Result<bool> merge_spec_edits(devices::Edits& e, spec::Spec& spec) {
  bool changed = !e.hooks.empty() || !e.net_devices.empty();
  BERTH_TRY(merge_hooks(e.hooks, spec));
  BERTH_TRY(merge_net_devices(e.net_devices, spec));
  e.hooks.clear();
  e.net_devices.clear();
  return changed;
}

void merge_edits(const devices::Edits& e, linux::rootfs::RootfsPlan& plan, spec::Process& process,
                 std::vector<spec::DeviceRule>& rules, bool user_ns) {
  // An edit's NAME=value replaces the image's NAME in place, as the CDI library and Docker
  // do: appended after it, it would lose at getenv().
  process.env.insert(process.env.end(), e.env.begin(), e.env.end());
  process.env = env::merge(process.env);
  auto& gids = process.user.additional_gids;
  for (uint32_t g : e.additional_gids)
    if (std::find(gids.begin(), gids.end(), g) == gids.end()) gids.push_back(g);
  merge_nodes(e, plan, rules, user_ns);
  merge_mounts(e, plan);
  for (const auto& l : e.symlinks)
    if (!in_bound_dev(plan, linux::clean_path(l.container_path)))
      plan.links.push_back({l.target, linux::clean_path(l.container_path)});
  for (const auto& f : e.files) plan.files.push_back({linux::clean_path(f.container_path), f.content, f.mode, f.replace});
  merge_overlays(e, plan);
  for (const auto& l : e.ldconfig) plan.exec_after_pivot.push_back({l.host_binary, l.args});
}

}  // namespace berth::container
