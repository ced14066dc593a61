// containerEdits → Edits (see apply.h): env, deviceNodes, mounts, hooks, additionalGids,
// netDevices; intelRdt refused.
#include "devices/cdi/apply.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <set>

#include "util/strings.h"

namespace berth::devices::cdi {
namespace {

struct Merger {
  Edits e;
  std::string origin;  // "nvidia.com/gpu=0 (file)" for messages

  Status env(const std::vector<std::string>& env) {
    for (const auto& v : env) {
      std::string name = v.substr(0, v.find('=') + 1);
      std::erase_if(e.env, [&](const std::string& x) { return str::starts_with(x, name); });
      e.env.push_back(v);
    }
    return ok();
  }

  Result<devices::DeviceNode> fill(const cdi::DeviceNode& d) {
    devices::DeviceNode n;
    n.container_path = d.path;
    n.host_path = d.host_path.empty() ? d.path : d.host_path;
    n.type = d.type.empty() ? '\0' : d.type[0];
    n.major = static_cast<uint32_t>(d.major.value_or(0));
    n.minor = static_cast<uint32_t>(d.minor.value_or(0));
    // As the CDI library: a node with its type and numbers given is taken as written.
    bool need_stat = d.type.empty() || (d.type != "p" && d.major.value_or(0) == 0 && d.minor.value_or(0) == 0);
    if (need_stat) {
      struct stat st;
      if (::stat(n.host_path.c_str(), &st) < 0) return Error::sys(errno, origin + ": device node " + d.path + ": stat " + n.host_path);
      char t = S_ISCHR(st.st_mode) ? 'c' : S_ISBLK(st.st_mode) ? 'b' : S_ISFIFO(st.st_mode) ? 'p' : 0;
      if (!t) return Error::invalid_spec(origin + ": device node " + d.path + ": " + n.host_path + " is not a device");
      if (d.type.empty()) n.type = t;
      if (n.type != 'p' && !d.major && !d.minor) n.major = major(st.st_rdev), n.minor = minor(st.st_rdev);
      if (!d.file_mode) n.mode = st.st_mode & 07777;
    }
    if (d.file_mode) n.mode = *d.file_mode & 07777;
    n.uid = d.uid.value_or(0);
    n.gid = d.gid.value_or(0);
    n.access = d.permissions.empty() ? "rwm" : d.permissions;
    return n;
  }

  Status nodes(const std::vector<cdi::DeviceNode>& nodes) {
    for (const auto& d : nodes) {
      BERTH_ASSIGN(devices::DeviceNode n, fill(d));
      auto same = std::find_if(e.nodes.begin(), e.nodes.end(), [&](const devices::DeviceNode& x) { return x.container_path == n.container_path; });
      if (same == e.nodes.end()) {
        e.nodes.push_back(std::move(n));
      } else if (same->type != n.type || same->major != n.major || same->minor != n.minor) {
        return Error::invalid_spec("CDI conflict at " + n.container_path + ": " + origin + " wants a different device node");
      }
    }
    return ok();
  }

  Status mounts(const std::vector<cdi::Mount>& mounts) {
    for (const auto& m : mounts) {
      if (!m.type.empty() && m.type != "bind" && m.type != "rbind")
        return Error::unsupported(origin + ": mount at " + m.container_path + " of type \"" + m.type + "\": only bind mounts are supported");
      std::vector<std::string> opts;
      for (const auto& o : m.options)
        if (o != "bind") opts.push_back(o);
      if (m.type == "rbind" && std::find(opts.begin(), opts.end(), "rbind") == opts.end()) opts.push_back("rbind");
      auto same = std::find_if(e.mounts.begin(), e.mounts.end(), [&](const BindMount& x) { return x.container_path == m.container_path; });
      if (same == e.mounts.end()) e.mounts.push_back({m.host_path, m.container_path, opts});
      else if (same->host_path != m.host_path)
        return Error::invalid_spec("CDI conflict at " + m.container_path + ": " + origin + " mounts " + m.host_path +
                                   ", another device " + same->host_path);
    }
    return ok();
  }

  Status rest(const ContainerEdits& c) {
    for (const auto& h : c.hooks) {
      spec::Hook hook{h.path, h.args, h.env, h.timeout};
      e.hooks.push_back({h.hook_name, std::move(hook)});
    }
    for (uint32_t g : c.additional_gids)
      if (std::find(e.additional_gids.begin(), e.additional_gids.end(), g) == e.additional_gids.end()) e.additional_gids.push_back(g);
    // The runtime spec lets a runtime without RDT support refuse linux.intelRdt; berth has
    // none (no resctrl group is made), so a device that needs it cannot be set up.
    if (c.intel_rdt)
      return Error::unsupported(origin + ": intelRdt (closID \"" + c.intel_rdt->clos_id +
                                "\"): berth does not support Intel RDT");
    for (const auto& n : c.net_devices) {
      auto it = e.net_devices.find(n.host_interface_name);
      if (it != e.net_devices.end() && it->second.name != n.name)
        return Error::invalid_spec("CDI conflict: " + origin + " moves " + n.host_interface_name + " under another name");
      e.net_devices[n.host_interface_name] = spec::NetDevice{n.name};
    }
    return ok();
  }

  Status apply(const ContainerEdits& c) {
    BERTH_TRY(env(c.env));
    BERTH_TRY(nodes(c.device_nodes));
    BERTH_TRY(mounts(c.mounts));
    return rest(c);
  }
};

size_t depth(const std::string& p) { return static_cast<size_t>(std::count(p.begin(), p.end(), '/')); }

}  // namespace

Result<Edits> cdi_edits(const std::vector<Resolved>& devices) {
  Merger m;
  std::set<const Spec*> spec_done;
  for (const auto& r : devices) {
    m.origin = r.name.text() + " (" + r.spec->source + ")";
    if (spec_done.insert(r.spec).second) BERTH_TRY(m.apply(r.spec->container_edits));
    BERTH_TRY(m.apply(r.device->container_edits));
  }
  // Parents before children, so that a mount at /a/b is not hidden by a later one at /a.
  std::stable_sort(m.e.mounts.begin(), m.e.mounts.end(),
                   [](const BindMount& a, const BindMount& b) { return depth(a.container_path) < depth(b.container_path); });
  return std::move(m.e);
}

}  // namespace berth::devices::cdi
