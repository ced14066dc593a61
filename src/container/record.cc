// state.json (ContainerRecord) and the OCI state document: their JSON forms.
#include "container/record.h"

#include "util/json_schema.h"
#include "util/strings.h"

namespace berth {

using json::kAlways;

template <class V> void visit(V& v, ContainerRecord& r) {
  v("ociVersion", r.oci_version, kAlways);
  v("id", r.id, kAlways);
  v("pid", r.pid, kAlways);
  v("pidStartTime", r.pid_start_time, kAlways);
  v("bundle", r.bundle, kAlways);
  v("rootfs", r.rootfs, kAlways);
  v("created", r.created, kAlways);
  v("owner", r.owner, kAlways);
  v("annotations", r.annotations);
  v("cgroupPaths", r.cgroup_paths);
  v("cgroupCreated", r.cgroup_created);
  v("newNamespaces", r.new_namespaces);
  v("systemdCgroup", r.systemd_cgroup);
  v("rootless", r.rootless);
}

std::string record_to_json(const ContainerRecord& r) { return json::serialize(r); }

Result<ContainerRecord> record_from_json(std::string_view text, std::string_view source) {
  return json::parse_as<ContainerRecord>(text, source);
}

std::string oci_state_json(const OciState& s, bool indent) {
  // Hand-written to keep runc's key order and its "  " indentation exactly.
  const char* nl = indent ? "\n" : "";
  const char* in = indent ? "  " : "";
  const char* sep = indent ? ": " : ":";
  auto q = [](const std::string& v) {
    json::Writer w;
    w.string(v);
    return w.str();
  };
  std::string out = "{";
  out += nl + std::string(in) + "\"ociVersion\"" + sep + q(s.oci_version) + ",";
  out += nl + std::string(in) + "\"id\"" + sep + q(s.id) + ",";
  out += nl + std::string(in) + "\"pid\"" + sep + std::to_string(s.pid) + ",";
  out += nl + std::string(in) + "\"status\"" + sep + q(s.status) + ",";
  out += nl + std::string(in) + "\"bundle\"" + sep + q(s.bundle) + ",";
  out += nl + std::string(in) + "\"rootfs\"" + sep + q(s.rootfs) + ",";
  out += nl + std::string(in) + "\"created\"" + sep + q(s.created) + ",";
  if (!s.annotations.empty()) {
    out += nl + std::string(in) + "\"annotations\"" + sep + "{";
    bool first = true;
    for (const auto& [k, val] : s.annotations) {
      out += first ? "" : ",";
      out += nl + std::string(in) + in + q(k) + sep + q(val);
      first = false;
    }
    out += nl + std::string(in) + "},";
  }
  out += nl + std::string(in) + "\"owner\"" + sep + q(s.owner);
  out += nl + std::string("}");
  return out;
}

const char* status_name(ContainerStatus s) {
  switch (s) {
    case ContainerStatus::kCreating: return "creating";
    case ContainerStatus::kCreated: return "created";
    case ContainerStatus::kRunning: return "running";
    case ContainerStatus::kPaused: return "paused";
    case ContainerStatus::kStopped: return "stopped";
  }
  return "unknown";
}

}  // namespace berth
