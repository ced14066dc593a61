// Folding device-module Edits into the plan (see extend.h).
#include "container/extend.h"

#include <sys/stat.h>

#include "linux/paths.h"
#include "linux/rootfs/options.h"

namespace berth::container {

void merge_edits(const devices::Edits& e, linux::rootfs::RootfsPlan& plan, spec::Process& process,
                 std::vector<spec::DeviceRule>& rules, bool user_ns) {
  for (const auto& env : e.env) process.env.push_back(env);
  for (uint32_t g : e.additional_gids) process.user.additional_gids.push_back(g);
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
    std::erase_if(plan.devices, [&](const linux::rootfs::DeviceStep& x) { return x.path == d.path; });
    plan.devices.push_back(d);
    spec::DeviceRule r;
    r.allow = true;
    r.type = std::string(1, n.type == 'b' ? 'b' : 'c');
    r.major = n.major;
    r.minor = n.minor;
    r.access = n.access;
    rules.push_back(r);
  }
  rules.insert(rules.end(), e.extra_rules.begin(), e.extra_rules.end());
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
  for (const auto& l : e.symlinks) plan.links.push_back({l.target, linux::clean_path(l.container_path)});
  for (const auto& f : e.files) plan.files.push_back({linux::clean_path(f.container_path), f.content, f.mode});
  for (const auto& o : e.overlays) {
    linux::rootfs::OverlayStep s;
    s.path = linux::clean_path(o.container_path);
    for (const auto& f : o.files) s.files.push_back({f.container_path, f.content, f.mode});
    for (const auto& b : o.binds) s.binds.emplace_back(b.host_path, b.container_path);
    plan.overlays.push_back(std::move(s));
  }
  for (const auto& l : e.ldconfig) plan.exec_after_pivot.push_back({l.host_binary, l.args});
}

}  // namespace berth::container
