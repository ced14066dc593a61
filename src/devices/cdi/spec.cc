// CDI spec parsing and validation (see spec.h): cdiVersion, kind, annotations, devices,
// containerEdits {env, deviceNodes, mounts, hooks, additionalGids, intelRdt, netDevices}.
#include "devices/cdi/spec.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "devices/cdi/yaml.h"
#include "util/json_schema.h"
#include "util/strings.h"

namespace berth::devices::cdi {

template <class V>
void visit(V& v, DeviceNode& d) {
  v("path", d.path);
  v("hostPath", d.host_path);
  v("type", d.type);
  v("major", d.major);
  v("minor", d.minor);
  v("fileMode", d.file_mode);
  v("permissions", d.permissions);
  v("uid", d.uid);
  v("gid", d.gid);
}
template <class V>
void visit(V& v, Mount& m) {
  v("hostPath", m.host_path);
  v("containerPath", m.container_path);
  v("type", m.type);
  v("options", m.options);
}
template <class V>
void visit(V& v, Hook& h) {
  v("hookName", h.hook_name);
  v("path", h.path);
  v("args", h.args);
  v("env", h.env);
  v("timeout", h.timeout);
}
template <class V>
void visit(V& v, IntelRdt& r) {
  v("closID", r.clos_id);
  v("l3CacheSchema", r.l3_cache_schema);
  v("memBwSchema", r.mem_bw_schema);
  v("schemata", r.schemata);
  v("enableMonitoring", r.enable_monitoring);
}
template <class V>
void visit(V& v, NetDevice& n) {
  v("hostInterfaceName", n.host_interface_name);
  v("name", n.name);
}
template <class V>
void visit(V& v, ContainerEdits& e) {
  v("env", e.env);
  v("deviceNodes", e.device_nodes);
  v("netDevices", e.net_devices);
  v("hooks", e.hooks);
  v("mounts", e.mounts);
  v("intelRdt", e.intel_rdt);
  v("additionalGids", e.additional_gids);
}
template <class V>
void visit(V& v, Device& d) {
  v("name", d.name);
  v("annotations", d.annotations);
  v("containerEdits", d.container_edits);
}
template <class V>
void visit(V& v, Spec& s) {
  v("cdiVersion", s.cdi_version);
  v("kind", s.kind);
  v("annotations", s.annotations);
  v("devices", s.devices);
  v("containerEdits", s.container_edits);
}

namespace {

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// Alphanumerics at both ends, `extra` characters allowed between.
bool name_ok(std::string_view s, std::string_view extra) {
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || extra.find(c) != std::string_view::npos; });
}

bool kind_ok(std::string_view kind) {
  auto slash = kind.find('/');
  if (slash == std::string_view::npos || kind.find('/', slash + 1) != std::string_view::npos) return false;
  std::string_view vendor = kind.substr(0, slash), klass = kind.substr(slash + 1);
  for (const auto& label : str::split(vendor, '.'))
    if (!name_ok(label, "-_")) return false;
  return name_ok(klass, "-_.");
}

const std::set<std::string> kVersions = {"0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0",
                                         "0.7.0", "0.8.0", "1.0.0", "1.1.0"};
const std::set<std::string> kHookNames = {"prestart", "createRuntime", "createContainer", "startContainer", "poststart",
                                          "poststop"};

// Both names are required (CDI 1.1) and must be kernel interface names (dev_valid_name).
bool ifname_ok(const std::string& n) {
  if (n.empty() || n.size() > 15 || n == "." || n == "..") return false;
  return std::none_of(n.begin(), n.end(), [](char c) { return c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c)); });
}

Status validate_edits(const ContainerEdits& e, const std::string& where) {
  for (const auto& env : e.env)
    if (env.find('=') == std::string::npos || env[0] == '=') return Error::invalid_spec(where + ": env: \"" + env + "\" is not NAME=value");
  for (const auto& d : e.device_nodes) {
    if (d.path.empty() || d.path[0] != '/') return Error::invalid_spec(where + ": deviceNodes: path \"" + d.path + "\" is not absolute");
    if (!d.type.empty() && d.type != "b" && d.type != "c" && d.type != "u" && d.type != "p")
      return Error::invalid_spec(where + ": deviceNodes: " + d.path + ": invalid type \"" + d.type + "\"");
    if (d.permissions.find_first_not_of("rwm") != std::string::npos)
      return Error::invalid_spec(where + ": deviceNodes: " + d.path + ": invalid permissions \"" + d.permissions + "\"");
  }
  for (const auto& m : e.mounts)
    if (m.host_path.empty() || m.container_path.empty() || m.container_path[0] != '/')
      return Error::invalid_spec(where + ": mounts: need hostPath and an absolute containerPath");
  for (const auto& h : e.hooks) {
    if (!kHookNames.count(h.hook_name)) return Error::invalid_spec(where + ": hooks: unknown hookName \"" + h.hook_name + "\"");
    if (h.path.empty() || h.path[0] != '/') return Error::invalid_spec(where + ": hooks: path \"" + h.path + "\" is not absolute");
    if (h.timeout && *h.timeout <= 0) return Error::invalid_spec(where + ": hooks: " + h.path + ": timeout must be greater than zero");
  }
  for (const auto& n : e.net_devices) {
    if (!ifname_ok(n.host_interface_name))
      return Error::invalid_spec(where + ": netDevices: invalid hostInterfaceName \"" + n.host_interface_name + "\"");
    if (!ifname_ok(n.name))
      return Error::invalid_spec(where + ": netDevices: " + n.host_interface_name + ": invalid name \"" + n.name + "\"");
  }
  return ok();
}

Status validate(const Spec& s) {
  if (!kVersions.count(s.cdi_version)) return Error::invalid_spec(s.source + ": unsupported cdiVersion \"" + s.cdi_version + "\"");
  if (!kind_ok(s.kind)) return Error::invalid_spec(s.source + ": invalid kind \"" + s.kind + "\" (vendor.com/class)");
  if (s.devices.empty()) return Error::invalid_spec(s.source + ": no devices");
  BERTH_TRY(validate_edits(s.container_edits, s.source + ": containerEdits"));
  std::set<std::string> names;
  for (const auto& d : s.devices) {
    if (!name_ok(d.name, "-_.:")) return Error::invalid_spec(s.source + ": invalid device name \"" + d.name + "\"");
    if (!names.insert(d.name).second) return Error::invalid_spec(s.source + ": device \"" + d.name + "\" defined twice");
    BERTH_TRY(validate_edits(d.container_edits, s.source + ": device " + d.name));
  }
  return ok();
}

}  // namespace

Result<Spec> parse_spec(std::string_view text, const std::string& source) {
  std::string json;
  if (str::ends_with(source, ".yaml") || str::ends_with(source, ".yml")) {
    BERTH_ASSIGN(json, yaml_to_json(text, source));
    text = json;
  }
  BERTH_ASSIGN(Spec s, json::parse_as<Spec>(text, source));
  s.source = source;
  BERTH_TRY(validate(s));
  return s;
}

Result<QualifiedName> parse_qualified_name(std::string_view name) {
  auto eq = name.find('=');
  if (eq == std::string_view::npos) return Error::invalid_spec("CDI device \"" + std::string(name) + "\": not vendor.com/class=name");
  QualifiedName q{std::string(name.substr(0, eq)), std::string(name.substr(eq + 1))};
  if (!kind_ok(q.kind)) return Error::invalid_spec("CDI device \"" + std::string(name) + "\": invalid kind \"" + q.kind + "\"");
  if (!name_ok(q.device, "-_.:")) return Error::invalid_spec("CDI device \"" + std::string(name) + "\": invalid device name");
  return q;
}

Result<std::vector<QualifiedName>> requested_devices(const std::map<std::string, std::string>& annotations) {
  std::vector<QualifiedName> out;
  for (const auto& [key, value] : annotations) {
    if (!str::starts_with(key, kAnnotationPrefix)) continue;
    for (const auto& raw : str::split_nonempty(value, ',')) {
      std::string n(str::trim(raw));
      if (n.empty()) continue;
      BERTH_ASSIGN(QualifiedName q, parse_qualified_name(n).context("annotation " + key));
      bool seen = std::any_of(out.begin(), out.end(), [&](const QualifiedName& x) { return x.text() == q.text(); });
      if (!seen) out.push_back(std::move(q));
    }
  }
  return out;
}

}  // namespace berth::devices::cdi
