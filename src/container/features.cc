// `berth features`: the OCI features document, truthful for this build and host — it lists
// only what berth really applies (mount options, namespaces, capabilities, cgroup layouts,
// seccomp, memory policy...), and its annotations name berth's own capabilities.
#include "container/features.h"

#include "berth/checkpoint.h"

#include <seccomp.h>

#include "linux/caps.h"
#include "linux/exe_seal.h"
#include "linux/rootfs/options.h"
#include "seccomp/seccomp.h"
#include "spec/names.h"
#include "util/json.h"

namespace berth::container {
namespace {

void strings(json::Writer& w, const char* key, const std::vector<std::string>& v) {
  w.key(key);
  w.begin_array();
  for (const auto& s : v) w.string(s);
  w.end_array();
}

std::vector<std::string> to_strings(const spec::names::List& l) { return {l.begin(), l.end()}; }

void enabled(json::Writer& w, const char* key, bool on) {
  w.key(key);
  w.begin_object();
  w.key("enabled");
  w.boolean(on);
  w.end_object();
}

// What this libseccomp and kernel really accept (probed once, seccomp::support()).
void seccomp_section(json::Writer& w) {
  seccomp::Support s = seccomp::support();
  w.key("seccomp");
  w.begin_object();
  w.key("enabled");
  w.boolean(true);
  strings(w, "actions", s.actions);
  strings(w, "operators", s.operators);
  strings(w, "archs", s.archs);
  strings(w, "knownFlags", s.known_flags);
  strings(w, "supportedFlags", s.supported_flags);
  w.end_object();
}

void linux_section(json::Writer& w) {
  w.key("linux");
  w.begin_object();
  strings(w, "namespaces", to_strings(spec::names::namespaces()));
  strings(w, "capabilities", linux::cap_names(linux::last_cap() >= 63 ? ~0ULL : (1ULL << (linux::last_cap() + 1)) - 1));
  w.key("cgroup");
  w.begin_object();
  for (const char* k : {"v1", "v2"}) w.key(k), w.boolean(true);
  // The system instance's driver, and the user's own instance for rootless containers.
  w.key("systemd"), w.boolean(true);
  w.key("systemdUser"), w.boolean(true);
  w.key("rdma");
  w.boolean(true);
  w.end_object();
  seccomp_section(w);
  enabled(w, "apparmor", false);
  // linux.mountLabel and process.selinuxLabel are applied where the host runs SELinux
  // (src/linux/selinux.cc); "enabled" says the runtime supports them, as runc's and crun's.
  enabled(w, "selinux", true);
  enabled(w, "intelRdt", false);
  w.key("memoryPolicy");
  w.begin_object();
  strings(w, "modes", to_strings(spec::names::mempolicy_modes()));
  strings(w, "flags", to_strings(spec::names::mempolicy_flags()));
  w.end_object();
  w.key("mountExtensions");
  w.begin_object();
  enabled(w, "idmap", true);  // idmap/ridmap binds (mount_setattr MOUNT_ATTR_IDMAP)
  w.end_object();
  enabled(w, "netDevices", true);
  w.end_object();
}

}  // namespace

std::string features_json() {
  json::Writer w(true, "    ");
  w.begin_object();
  w.key("ociVersionMin");
  w.string("1.0.0");
  w.key("ociVersionMax");
  w.string("1.3.0");
  strings(w, "hooks", to_strings(spec::names::hooks()));
  strings(w, "mountOptions", linux::rootfs::known_mount_options());
  linux_section(w);
  w.key("annotations");
  w.begin_object();
  const struct scmp_version* v = seccomp_version();
  w.key("io.github.seccomp.libseccomp.version");
  w.string(v ? std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->micro) : "");
  // berth's own device support, done natively in rootfs preparation (no hooks).
  w.key("org.berth.cdi.enabled");
  w.string("true");
  // checkpoint/restore: only when built with CRIU's rpc.proto code (CRIU itself is looked up
  // when used).
  w.key("org.berth.checkpoint.enabled");
  w.string(criu_supported() ? "true" : "false");
  w.key("org.berth.commit");
  w.string(BERTH_COMMIT);
  // Whether this binary is sealed (on a read-only mount, docs/security.md): if not,
  // create/run/exec re-execute from a read-only clone each call.
  w.key("org.berth.exe.sealed");
  w.string(linux::exe_seal() == linux::ExeSeal::kSealed ? "true" : "false");
  w.key("org.berth.gpu.native");
  w.string("true");
  w.key("org.berth.rdma.native");
  w.string("true");
  // Rootless (docs/rootless.md): user namespaces with the caller's own id or, through
  // newuidmap/newgidmap, its subordinate ranges; cgroups only where delegated.
  w.key("org.berth.rootless");
  w.string("true");
  w.key("org.berth.version");
  w.string(BERTH_VERSION);
  w.end_object();
  w.end_object();
  return w.str();
}

}  // namespace berth::container
