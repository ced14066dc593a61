// Checks on a parsed config that the JSON types alone cannot express (ociVersion: any, as runc),
// closed vocabularies (namespace types, rlimits, seccomp names, scheduler, personality,
// memoryPolicy, timeOffsets, rootfsPropagation), duplicates, absolute paths. Each error names
// the property. Whether this host can honour a valid field is decided where it is applied.
#include <set>

#include "berth/spec.h"
#include "spec/names.h"
#include "util/log.h"
#include "util/strings.h"

namespace berth::spec {
namespace {

class Checker {
 public:
  explicit Checker(std::string_view source) : source_(source) {}

  void fail(const std::string& path, const std::string& what) {
    if (!error_) error_ = Error::invalid_spec(source_ + ": " + path + ": " + what);
  }
  void one_of(const std::string& path, const std::string& value, const names::List& allowed) {
    if (!names::contains(allowed, value)) fail(path, "unknown value " + str::go_quote(value));
  }
  void absolute(const std::string& path, const std::string& value) {
    if (value.empty() || value[0] != '/') fail(path, "must be an absolute path, got " + str::go_quote(value));
  }
  Status result() { return error_ ? Status(std::move(*error_)) : ok(); }

 private:
  std::string source_;
  std::optional<Error> error_;
};

// "1.0.0" .. "1.3.x", with optional pre-release/build suffix ("1.0.2-dev").
bool version_supported(const std::string& v) {
  auto core = v.substr(0, v.find_first_of("-+"));
  auto parts = str::split(core, '.');
  if (parts.size() != 3) return false;
  auto major = str::parse_u64(parts[0]), minor = str::parse_u64(parts[1]), patch = str::parse_u64(parts[2]);
  return major && minor && patch && *major == 1 && *minor <= 3;
}

void check_process(Checker& c, const Process& p, const std::string& at) {
  for (size_t i = 0; i < p.rlimits.size(); ++i) {
    std::string path = at + ".rlimits[" + std::to_string(i) + "]";
    c.one_of(path + ".type", p.rlimits[i].type, names::rlimits());
    if (p.rlimits[i].soft > p.rlimits[i].hard) c.fail(path, "soft limit is above the hard limit");
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < p.rlimits.size(); ++i)
    if (!seen.insert(p.rlimits[i].type).second)
      c.fail(at + ".rlimits[" + std::to_string(i) + "].type", "duplicate " + p.rlimits[i].type);
  if (p.oom_score_adj && (*p.oom_score_adj < -1000 || *p.oom_score_adj > 1000))
    c.fail(at + ".oomScoreAdj", "must be between -1000 and 1000");
  if (p.scheduler) {
    c.one_of(at + ".scheduler.policy", p.scheduler->policy, names::scheduler_policies());
    for (size_t i = 0; i < p.scheduler->flags.size(); ++i)
      c.one_of(at + ".scheduler.flags[" + std::to_string(i) + "]", p.scheduler->flags[i], names::scheduler_flags());
  }
  if (p.io_priority) {
    c.one_of(at + ".ioPriority.class", p.io_priority->klass, names::ioprio_classes());
    if (p.io_priority->priority < 0 || p.io_priority->priority > 7)
      c.fail(at + ".ioPriority.priority", "must be between 0 and 7");
  }
  if (p.user.umask && *p.user.umask > 0777) c.fail(at + ".user.umask", "must be at most 0777");
}

void check_namespaces(Checker& c, const Linux& l) {
  std::set<std::string> seen;
  for (size_t i = 0; i < l.namespaces.size(); ++i) {
    std::string path = "linux.namespaces[" + std::to_string(i) + "]";
    const auto& ns = l.namespaces[i];
    c.one_of(path + ".type", ns.type, names::namespaces());
    if (!seen.insert(ns.type).second) c.fail(path + ".type", "duplicate namespace " + str::go_quote(ns.type));
    if (!ns.path.empty()) c.absolute(path + ".path", ns.path);
  }
  for (const auto& [clock, _] : l.time_offsets)
    c.one_of("linux.timeOffsets", clock, names::time_clocks());
}

void check_devices(Checker& c, const Linux& l) {
  for (size_t i = 0; i < l.devices.size(); ++i) {
    std::string path = "linux.devices[" + std::to_string(i) + "]";
    const auto& d = l.devices[i];
    c.absolute(path + ".path", d.path);
    if (d.type != "c" && d.type != "b" && d.type != "u" && d.type != "p")
      c.fail(path + ".type", "unknown device type " + str::go_quote(d.type) + " (want c, b, u or p)");
  }
  if (!l.resources) return;
  for (size_t i = 0; i < l.resources->devices.size(); ++i) {
    std::string path = "linux.resources.devices[" + std::to_string(i) + "]";
    const auto& r = l.resources->devices[i];
    if (!r.type.empty() && r.type != "a" && r.type != "c" && r.type != "b")
      c.fail(path + ".type", "unknown device type " + str::go_quote(r.type) + " (want a, c or b)");
    // As runc: r, w, m in any order and number, other characters skipped; empty means rwm.
    if (!r.access.empty() && r.access.find_first_of("rwm") == std::string::npos)
      c.fail(path + ".access", "invalid device access " + str::go_quote(r.access) + ": none of r, w and m");
  }
}

void check_seccomp(Checker& c, const Seccomp& s) {
  c.one_of("linux.seccomp.defaultAction", s.default_action, names::seccomp_actions());
  for (size_t i = 0; i < s.architectures.size(); ++i)
    c.one_of("linux.seccomp.architectures[" + std::to_string(i) + "]", s.architectures[i], names::seccomp_archs());
  for (size_t i = 0; i < s.flags.size(); ++i)
    c.one_of("linux.seccomp.flags[" + std::to_string(i) + "]", s.flags[i], names::seccomp_flags());
  bool notify = s.default_action == "SCMP_ACT_NOTIFY";
  for (size_t i = 0; i < s.syscalls.size(); ++i) {
    std::string path = "linux.seccomp.syscalls[" + std::to_string(i) + "]";
    const auto& sc = s.syscalls[i];
    c.one_of(path + ".action", sc.action, names::seccomp_actions());
    notify = notify || sc.action == "SCMP_ACT_NOTIFY";
    if (sc.names.empty()) c.fail(path + ".names", "must name at least one syscall");
    for (size_t j = 0; j < sc.args.size(); ++j) {
      std::string ap = path + ".args[" + std::to_string(j) + "]";
      c.one_of(ap + ".op", sc.args[j].op, names::seccomp_operators());
      if (sc.args[j].index > 5) c.fail(ap + ".index", "must be between 0 and 5");
    }
  }
  if (notify && s.listener_path.empty())
    c.fail("linux.seccomp.listenerPath", "required when an action is SCMP_ACT_NOTIFY");
  if (!s.listener_path.empty()) c.absolute("linux.seccomp.listenerPath", s.listener_path);
}

void check_linux(Checker& c, const Linux& l) {
  check_namespaces(c, l);
  check_devices(c, l);
  if (l.seccomp) check_seccomp(c, *l.seccomp);
  if (!l.rootfs_propagation.empty())
    c.one_of("linux.rootfsPropagation", l.rootfs_propagation, names::propagations());
  if (l.personality) c.one_of("linux.personality.domain", l.personality->domain, names::personality_domains());
  if (l.memory_policy) {
    c.one_of("linux.memoryPolicy.mode", l.memory_policy->mode, names::mempolicy_modes());
    for (size_t i = 0; i < l.memory_policy->flags.size(); ++i)
      c.one_of("linux.memoryPolicy.flags[" + std::to_string(i) + "]", l.memory_policy->flags[i],
               names::mempolicy_flags());
  }
  for (size_t i = 0; i < l.masked_paths.size(); ++i)
    c.absolute("linux.maskedPaths[" + std::to_string(i) + "]", l.masked_paths[i]);
  for (size_t i = 0; i < l.readonly_paths.size(); ++i)
    c.absolute("linux.readonlyPaths[" + std::to_string(i) + "]", l.readonly_paths[i]);
  for (const auto& [host, dev] : l.net_devices) {
    if (host.empty() || host.size() > 15 || host.find('/') != std::string::npos)
      c.fail("linux.netDevices", "invalid interface name " + str::go_quote(host));
    if (dev.name.size() > 15 || dev.name.find('/') != std::string::npos)
      c.fail("linux.netDevices[\"" + host + "\"].name", "invalid interface name " + str::go_quote(dev.name));
  }
}

void check_hooks(Checker& c, const Hooks& h) {
  auto each = [&](const char* kind, const std::vector<Hook>& hooks) {
    for (size_t i = 0; i < hooks.size(); ++i) {
      std::string path = std::string("hooks.") + kind + "[" + std::to_string(i) + "]";
      c.absolute(path + ".path", hooks[i].path);
      if (hooks[i].timeout && *hooks[i].timeout <= 0) c.fail(path + ".timeout", "must be greater than zero");
    }
  };
  each("prestart", h.prestart);
  each("createRuntime", h.create_runtime);
  each("createContainer", h.create_container);
  each("startContainer", h.start_container);
  each("poststart", h.poststart);
  each("poststop", h.poststop);
}

}  // namespace

Status validate(const Spec& spec, std::string_view source) {
  Checker c(source);
  // Any string, even none, as runc (engines write "", "1.0.2-dev", or an older or newer
  // version than ours): the fields are what count.
  if (!spec.oci_version.empty() && !version_supported(spec.oci_version))
    log::debug("config.json: ociVersion " + str::go_quote(spec.oci_version) + " is outside 1.0.0 to 1.3.x; read as 1.3");
  if (spec.process) check_process(c, *spec.process, "process");
  for (size_t i = 0; i < spec.mounts.size(); ++i)
    if (spec.mounts[i].destination.empty()) c.fail("mounts[" + std::to_string(i) + "].destination", "missing");
  if (spec.hooks) check_hooks(c, *spec.hooks);
  if (spec.linux) check_linux(c, *spec.linux);
  return c.result();
}

Status validate_process(const Process& process, std::string_view where) {
  Checker c(where);
  check_process(c, process, "process");
  return c.result();
}

}  // namespace berth::spec
