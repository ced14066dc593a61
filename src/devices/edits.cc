// Edits concatenation and their text form (see edits.h).
#include "devices/edits.h"

#include "util/strings.h"

namespace berth::devices {

template <class T>
static void extend(std::vector<T>& a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
}

void append(Edits& a, const Edits& b) {
  extend(a.env, b.env);
  extend(a.nodes, b.nodes);
  extend(a.tmpfs, b.tmpfs);
  extend(a.mounts, b.mounts);
  extend(a.symlinks, b.symlinks);
  extend(a.files, b.files);
  extend(a.overlays, b.overlays);
  extend(a.additional_gids, b.additional_gids);
  extend(a.extra_rules, b.extra_rules);
  extend(a.ldconfig, b.ldconfig);
  extend(a.hooks, b.hooks);
  for (const auto& [k, v] : b.net_devices) a.net_devices[k] = v;
}

namespace {

std::string octal(uint32_t mode) {
  char buf[16];
  snprintf(buf, sizeof buf, "0%o", mode);
  return buf;
}

std::string rule_text(const spec::DeviceRule& r) {
  std::string maj = r.major ? std::to_string(*r.major) : "*";
  std::string min = r.minor ? std::to_string(*r.minor) : "*";
  return std::string(r.allow ? "allow " : "deny ") + (r.type.empty() ? "a" : r.type) + " " + maj + ":" + min +
         " " + r.access;
}

}  // namespace

std::string to_text(const Edits& e) {
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  for (const auto& v : e.env) line("env " + v);
  for (const auto& n : e.nodes)
    line("node " + n.container_path + " " + std::string(1, n.type) + " " + std::to_string(n.major) + ":" +
         std::to_string(n.minor) + " mode=" + octal(n.mode) + " uid=" + std::to_string(n.uid) +
         " gid=" + std::to_string(n.gid) + " access=" + n.access + " host=" + n.host_path);
  for (const auto& t : e.tmpfs) line("tmpfs " + t);
  for (const auto& m : e.mounts)
    line("mount " + m.host_path + " -> " + m.container_path + " [" + str::join(m.options, ",") + "]");
  for (const auto& l : e.symlinks) line("link " + l.container_path + " -> " + l.target);
  for (const auto& f : e.files)
    line("file " + f.container_path + " mode=" + octal(f.mode) + " " +
         (f.replace ? "replace, " + std::to_string(f.content.size()) + " bytes" : str::go_quote(f.content)));
  for (const auto& o : e.overlays) {
    line("overlay " + o.container_path);
    for (const auto& f : o.files) line("  file " + f.container_path + " mode=" + octal(f.mode) + " " + str::go_quote(f.content));
    for (const auto& b : o.binds) line("  bind " + b.host_path + " -> " + b.container_path);
  }
  for (uint32_t g : e.additional_gids) line("gid " + std::to_string(g));
  for (const auto& r : e.extra_rules) line("rule " + rule_text(r));
  for (const auto& l : e.ldconfig) line("ldconfig " + l.host_binary + " " + str::join(l.args, " "));
  for (const auto& h : e.hooks) line("hook " + h.stage + " " + h.hook.path + " " + str::join(h.hook.args, " "));
  for (const auto& [k, v] : e.net_devices) line("netdev " + k + " -> " + v.name);
  return out;
}

}  // namespace berth::devices
