// Parsing of a container's GPU request (see request.h): NVIDIA_VISIBLE_DEVICES,
// NVIDIA_DRIVER_CAPABILITIES, NVIDIA_REQUIRE_*, CUDA_VERSION, NVIDIA_DISABLE_REQUIRE,
// NVIDIA_MIG_CONFIG_DEVICES, NVIDIA_MIG_MONITOR_DEVICES, NVIDIA_IMEX_CHANNELS, mounts under
// /var/run/nvidia-container-devices, annotations org.berth.gpus[.capabilities].
#include "devices/nvidia/request.h"

#include <algorithm>

#include "util/strings.h"

namespace berth::devices::nvidia {
namespace {

struct CapName {
  const char* name;
  uint32_t bit;
};
constexpr CapName kCapNames[] = {{"utility", kUtility},   {"compute", kCompute}, {"video", kVideo},
                                 {"graphics", kGraphics}, {"display", kDisplay}, {"ngx", kNgx},
                                 {"compat32", kCompat32}};

// Go's strconv.ParseBool true values: the toolkit reads NVIDIA_DISABLE_REQUIRE with it.
bool go_true(std::string_view v) { return v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "true" || v == "True"; }

Result<std::vector<std::string>> privileged_list(const spec::Spec& spec, const std::vector<std::string>& env,
                                                 const char* name) {
  auto v = parse_device_list(env_value(env, name));
  if (!v) return std::vector<std::string>{};
  if (!is_privileged(spec))
    return Error::invalid_spec(std::string(name) + ": only privileged containers (CAP_SYS_ADMIN in the bounding set) may use it");
  return *v;
}

Result<std::vector<std::string>> imex_channels(const std::vector<std::string>& env) {
  auto v = parse_device_list(env_value(env, "NVIDIA_IMEX_CHANNELS"));
  if (!v || (v->size() == 1 && (*v)[0] == "none")) return std::vector<std::string>{};
  for (const auto& c : *v)
    if (c != "all" && !str::parse_u64(c))
      return Error::invalid_spec("NVIDIA_IMEX_CHANNELS: \"" + c + "\" is not a channel number or \"all\"");
  return *v;
}

// Device ids from /dev/null mounts at /var/run/nvidia-container-devices/<id>.
std::vector<std::string> volume_mount_devices(const spec::Spec& spec) {
  std::vector<std::string> ids;
  std::string root = std::string(kVolumeMountRoot) + "/";
  for (const auto& m : spec.mounts) {
    std::string d = m.destination;
    if (str::starts_with(d, "/run/")) d = "/var" + d;
    if (str::starts_with(d, root) && d.size() > root.size()) ids.push_back(d.substr(root.size()));
  }
  return ids;
}

}  // namespace

Result<uint32_t> parse_capabilities(std::string_view value, std::string_view what) {
  uint32_t caps = 0;
  for (const auto& raw : str::split_nonempty(value, ',')) {
    std::string c(str::trim(raw));
    if (c.empty()) continue;
    if (c == "all") {
      caps |= kAllCapabilities;
      continue;
    }
    auto it = std::find_if(std::begin(kCapNames), std::end(kCapNames), [&](const CapName& n) { return c == n.name; });
    if (it == std::end(kCapNames))
      return Error::invalid_spec(std::string(what) + ": unknown driver capability \"" + c +
                                 "\" (known: utility, compute, video, graphics, display, ngx, compat32, all)");
    caps |= it->bit;
  }
  return caps;
}

std::string capabilities_text(uint32_t caps) {
  std::vector<std::string> names;
  for (const auto& n : kCapNames)
    if (caps & n.bit) names.push_back(n.name);
  return str::join(names, ",");
}

std::optional<std::vector<std::string>> parse_device_list(std::optional<std::string_view> value) {
  if (!value) return std::nullopt;
  std::string_view v = str::trim(*value);
  if (v.empty() || v == "void") return std::nullopt;
  std::vector<std::string> out;
  for (const auto& p : str::split(v, ',')) {
    std::string t(str::trim(p));
    if (!t.empty()) out.push_back(t);
  }
  if (out.empty()) return std::nullopt;
  if (std::find(out.begin(), out.end(), "all") != out.end()) return std::vector<std::string>{"all"};
  return out;
}

std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name) {
  for (auto it = env.rbegin(); it != env.rend(); ++it)
    if (it->size() > name.size() && (*it)[name.size()] == '=' && std::string_view(*it).substr(0, name.size()) == name)
      return it->substr(name.size() + 1);
  return std::nullopt;
}

bool is_privileged(const spec::Spec& spec) {
  if (!spec.process || !spec.process->capabilities) return false;
  const auto& b = spec.process->capabilities->bounding;
  return std::find(b.begin(), b.end(), "CAP_SYS_ADMIN") != b.end();
}

void parse_requirements(const std::vector<std::string>& env, Request& r) {
  std::vector<std::pair<std::string, std::string>> reqs;
  bool has_cuda = false;
  for (const auto& e : env) {
    if (!str::starts_with(e, "NVIDIA_REQUIRE_")) continue;
    auto eq = e.find('=');
    if (eq == std::string::npos) continue;
    std::string name = e.substr(0, eq);
    if (name == "NVIDIA_REQUIRE_JETPACK") continue;
    has_cuda = has_cuda || name == "NVIDIA_REQUIRE_CUDA";
    std::erase_if(reqs, [&](const auto& p) { return p.first == name; });  // last wins
    if (!str::trim(e.substr(eq + 1)).empty()) reqs.emplace_back(name, std::string(str::trim(e.substr(eq + 1))));
  }
  for (const auto& [n, v] : reqs)
    if (n == "NVIDIA_REQUIRE_CUDA" || v.find("cuda") != std::string::npos) r.cuda_requirement = n + "=" + v;
  std::sort(reqs.begin(), reqs.end());
  for (auto& [n, v] : reqs) r.requirements.push_back(v);
  // A CUDA image without NVIDIA_REQUIRE_CUDA still needs a driver for its CUDA version.
  if (auto cuda = env_value(env, "CUDA_VERSION"); cuda && !has_cuda) {
    auto parts = str::split(*cuda, '.');
    if (parts.size() >= 2 && str::parse_u64(parts[0]) && str::parse_u64(parts[1]))
      r.requirements.push_back("cuda>=" + parts[0] + "." + parts[1]);
    if (!str::trim(*cuda).empty() && r.cuda_requirement.empty()) r.cuda_requirement = "CUDA_VERSION=" + *cuda;
  }
  auto disable = env_value(env, "NVIDIA_DISABLE_REQUIRE");
  r.disable_require = disable && go_true(*disable);
}

Result<Request> parse_request(const spec::Spec& spec, const RequestOptions& opts) {
  static const std::vector<std::string> kNoEnv;
  const auto& env = spec.process ? spec.process->env : kNoEnv;
  Request r;
  std::optional<std::vector<std::string>> devices;
  if (auto a = spec.annotations.find(kGpusAnnotation); a != spec.annotations.end()) {
    devices = parse_device_list(a->second);
    r.origin = Origin::kAnnotation;
    r.source = std::string(kGpusAnnotation) + "=" + a->second;
  } else if (auto ids = volume_mount_devices(spec); opts.accept_volume_mounts && !ids.empty()) {
    devices = parse_device_list(str::join(ids, ","));
    r.origin = Origin::kVolumeMounts;
    r.source = std::string("mounts at ") + kVolumeMountRoot + "/" + str::join(ids, ",");
  } else {
    auto v = env_value(env, "NVIDIA_VISIBLE_DEVICES");
    devices = parse_device_list(v);
    r.origin = Origin::kEnv;
    r.source = "NVIDIA_VISIBLE_DEVICES=" + v.value_or("");
  }
  if (!devices) return r;
  r.wanted = true;
  if (devices->size() == 1 && (*devices)[0] == "none") r.driver_only = true;
  else r.devices = *devices;
  std::string caps = opts.default_capabilities;
  std::string caps_source = "default capabilities";
  if (auto a = spec.annotations.find(kCapabilitiesAnnotation); a != spec.annotations.end()) {
    caps = a->second, caps_source = kCapabilitiesAnnotation;
  } else if (auto v = env_value(env, "NVIDIA_DRIVER_CAPABILITIES"); v && !str::trim(*v).empty()) {
    caps = *v, caps_source = "NVIDIA_DRIVER_CAPABILITIES";
  }
  BERTH_ASSIGN(r.caps, parse_capabilities(caps, caps_source));
  parse_requirements(env, r);
  BERTH_ASSIGN(r.mig_config, privileged_list(spec, env, "NVIDIA_MIG_CONFIG_DEVICES"));
  BERTH_ASSIGN(r.mig_monitor, privileged_list(spec, env, "NVIDIA_MIG_MONITOR_DEVICES"));
  BERTH_ASSIGN(r.imex_channels, imex_channels(env));
  return r;
}

}  // namespace berth::devices::nvidia
