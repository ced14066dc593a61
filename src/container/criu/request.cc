// The CRIU request of checkpoint, pre-dump and restore (runc's options and external
// mounts: mounts of type bind and cgroup, linux.maskedPaths, linux.devices,
// linux.namespaces[].path for network and pid), descriptors.json, the GPU/RDMA refusal.
#include "container/criu/request.h"

#include <sched.h>

#include <algorithm>

#include "linux/paths.h"
#include "util/json.h"
#include "util/strings.h"

namespace berth::container::criu {
namespace {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kDump: return "dump";
    case Kind::kPreDump: return "pre-dump";
    case Kind::kRestore: return "restore";
  }
  return "?";
}

const char* mode_name(CgroupsMode m) {
  switch (m) {
    case CgroupsMode::kSoft: return "soft";
    case CgroupsMode::kFull: return "full";
    case CgroupsMode::kStrict: return "strict";
    case CgroupsMode::kNone: break;
  }
  return "";
}

bool is_bind(const spec::Mount& m) {
  if (m.type == "bind") return true;
  return std::any_of(m.options.begin(), m.options.end(), [](const std::string& o) { return o == "bind" || o == "rbind"; });
}

bool has_namespace(const spec::Spec& spec, const std::string& type) {
  if (!spec.linux) return false;
  for (const auto& n : spec.linux->namespaces)
    if (n.type == type) return true;
  return false;
}

// The in-container path CRIU sees as the mount point: absolute and clean, so that "a/../b"
// in a config names the same mount as at dump.
std::string mount_key(const std::string& dest) { return linux::clean_path("/" + dest); }

// A v1 hierarchy's directory under /sys/fs/cgroup ("cpu,cpuacct") from the host path of
// the container's cgroup in it.
std::string v1_mount_dir(const std::string& host_path) {
  constexpr std::string_view kRoot = "/sys/fs/cgroup/";
  if (!str::starts_with(host_path, kRoot)) return "";
  std::string rest = host_path.substr(kRoot.size());
  return rest.substr(0, rest.find('/'));
}

// A "cgroup" mount outside a cgroup namespace is berth's bind of the container's cgroup
// (cgroup v2: at the destination; v1 and hybrid: one directory per hierarchy in a tmpfs,
// the unified one included), which CRIU sees as a mount whose root is not the
// filesystem's: each is external, keyed by its in-container path, and restore binds the new
// container's cgroup there. In a cgroup namespace the mounts are fresh and CRIU dumps them.
// Pairs of (in-container path, host directory).
std::vector<std::pair<std::string, std::string>> cgroup_binds(const spec::Spec& spec, const spec::Mount& m,
                                                              const std::map<std::string, std::string>& paths) {
  std::vector<std::pair<std::string, std::string>> out;
  if (has_namespace(spec, "cgroup")) return out;
  std::string dest = mount_key(m.destination);
  if (paths.size() == 1 && paths.count("")) {
    out.push_back({dest, paths.at("")});
    return out;
  }
  std::set<std::string> seen;
  for (const auto& [ctrl, path] : paths) {
    std::string d = v1_mount_dir(path);
    if (!d.empty() && seen.insert(d).second) out.push_back({mount_key(dest + "/" + d), path});
  }
  return out;
}

void dedup(std::vector<ExtMount>& v) {
  std::stable_sort(v.begin(), v.end(), [](const ExtMount& a, const ExtMount& b) { return a.key < b.key; });
  v.erase(std::unique(v.begin(), v.end(), [](const ExtMount& a, const ExtMount& b) { return a.key == b.key; }), v.end());
}

std::string ns_key(const std::string& type) { return type == "network" ? "extRootNetNS" : "extRootPidNS"; }
const char* ns_image_name(const std::string& type) { return type == "network" ? "net" : "pid"; }

Status common(const CriuCommonOptions& o, Request& r) {
  BERTH_ASSIGN(r.cg_mode, parse_cgroups_mode(o.manage_cgroups_mode));
  BERTH_ASSIGN(r.empty_ns, parse_empty_ns(o.empty_ns));
  // As runc, which "doesn't manage network devices and their configuration": CRIU never saves
  // or restores a network namespace's contents (links, addresses, routes, firewall; no
  // iproute2 needed), --empty-ns network or not. The restore gets a new empty namespace.
  r.empty_ns |= CLONE_NEWNET;
  r.images_dir = o.image_path;
  r.work_dir = o.work_path;
  r.tcp_established = o.tcp_established;
  r.ext_unix_sk = o.ext_unix_sk;
  r.shell_job = o.shell_job;
  r.file_locks = o.file_locks;
  r.auto_dedup = o.auto_dedup;
  r.lazy_pages = o.lazy_pages;
  return ok();
}

// runc's org.criu.config annotation: a file of CRIU options for this container, which CRIU
// (3.11 and later) reads after the RPC's and which wins over them; set but empty, none at
// all. Without it, the file runc names for every container: a host configured for runc
// (say, tcp-established in that file) gets the same from berth. CRIU ignores a file that
// does not exist. runc hands CRIU the path as it is; berth first checks that the container
// cannot write the file (config_file.cc, use_config_file), since CRIU reads it as root.
}  // namespace

std::string config_file(const spec::Spec& spec) {
  auto it = spec.annotations.find("org.criu.config");
  return it == spec.annotations.end() ? "/etc/criu/runc.conf" : it->second;
}

namespace {

Status page_server(const std::string& spec, Request& r) {
  if (spec.empty()) return ok();
  auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return Error::invalid_argument("Use --page-server ADDRESS:PORT to specify page server");
  auto port = str::parse_u64(spec.substr(colon + 1));
  if (!port || *port > 65535) return Error::invalid_argument("Invalid port number");
  r.page_server_address = spec.substr(0, colon);
  r.page_server_port = static_cast<int>(*port);
  return ok();
}

}  // namespace

Result<CgroupsMode> parse_cgroups_mode(const std::string& mode) {
  if (mode.empty()) return CgroupsMode::kNone;
  if (mode == "soft") return CgroupsMode::kSoft;
  if (mode == "full") return CgroupsMode::kFull;
  if (mode == "strict") return CgroupsMode::kStrict;
  return Error::invalid_argument("Invalid manage cgroups mode");
}

Result<uint32_t> parse_empty_ns(const std::vector<std::string>& types) {
  uint32_t mask = 0;
  for (const auto& t : types) {
    if (t != "network") return Error::invalid_argument("namespace " + str::go_quote(t) + " is not supported");
    mask |= CLONE_NEWNET;
  }
  return mask;
}

Result<Request> dump_request(const CheckpointOptions& o, const spec::Spec& spec, const DumpFacts& f) {
  Request r;
  r.kind = o.pre_dump ? Kind::kPreDump : Kind::kDump;
  BERTH_TRY(common(o, r));
  BERTH_TRY(page_server(o.page_server, r));
  r.config_file = config_file(spec);
  r.pid = f.pid;
  r.root = f.rootfs;
  r.log_file = "dump.log";
  r.parent_img = o.parent_path;
  r.leave_running = o.leave_running;
  r.track_mem = o.pre_dump;
  r.status_fd = o.lazy_pages ? o.status_fd : -1;
  auto freezer = f.cgroup_paths.find("freezer");
  if (freezer == f.cgroup_paths.end()) freezer = f.cgroup_paths.find("");
  if (freezer != f.cgroup_paths.end()) r.freeze_cgroup = freezer->second;
  // Namespaces joined by path belong to someone else: CRIU records them as external and
  // restore hands it a namespace of the new container's config under the same key.
  for (const char* t : {"network", "pid"}) {
    auto it = f.joined_ns_inodes.find(t);
    if (it != f.joined_ns_inodes.end())
      r.externals.push_back(std::string(ns_image_name(t)) + "[" + std::to_string(it->second) + "]:" + ns_key(t));
  }
  for (const auto& m : spec.mounts) {
    if (is_bind(m)) {
      r.ext_mounts.push_back({mount_key(m.destination), mount_key(m.destination)});
    } else if (m.type == "cgroup" || m.type == "cgroup2") {
      for (const auto& [key, host] : cgroup_binds(spec, m, f.cgroup_paths)) r.ext_mounts.push_back({key, key});
    }
  }
  // A masked file is /dev/null bound over it: an external mount restore binds again.
  if (spec.linux) {
    for (const auto& p : spec.linux->masked_paths)
      if (!f.masked_dirs.count(p)) r.ext_mounts.push_back({mount_key(p), "/dev/null"});
    for (const auto& d : spec.linux->devices) r.ext_mounts.push_back({mount_key(d.path), mount_key(d.path)});
  }
  dedup(r.ext_mounts);
  return r;
}

Result<Request> restore_request(const RestoreOptions& o, const spec::Spec& spec, const RestoreFacts& f) {
  Request r;
  r.kind = Kind::kRestore;
  BERTH_TRY(common(o, r));
  r.config_file = config_file(spec);
  r.root = f.root;
  r.log_file = "restore.log";
  r.evasive_devices = true;
  r.lsm_profile = o.lsm_profile;
  r.lsm_mount_context = o.lsm_mount_context;
  r.cg_roots = f.cg_roots;
  for (const char* t : {"network", "pid"}) {
    auto it = f.joined_ns_fds.find(t);
    if (it != f.joined_ns_fds.end()) r.inherit_fds.push_back({ns_key(t), it->second});
  }
  for (const auto& m : spec.mounts) {
    if (is_bind(m)) {
      std::string src = m.source.empty() || m.source[0] == '/' ? m.source : f.bundle + "/" + m.source;
      r.ext_mounts.push_back({mount_key(m.destination), linux::clean_path(src)});
    } else if (m.type == "cgroup" || m.type == "cgroup2") {
      for (const auto& [key, host] : cgroup_binds(spec, m, f.cgroup_paths)) r.ext_mounts.push_back({key, host});
    }
  }
  if (spec.linux && !spec.linux->masked_paths.empty()) r.ext_mounts.push_back({"/dev/null", "/dev/null"});
  if (spec.linux)
    for (const auto& d : spec.linux->devices) r.ext_mounts.push_back({mount_key(d.path), mount_key(d.path)});
  dedup(r.ext_mounts);
  // Pipes of the checkpointed init's stdio become ours (fd i of the CRIU worker, which
  // inherits berth's stdio); terminals and files are restored from the image.
  for (size_t i = 0; i < f.descriptors.size() && i < 3; ++i)
    if (f.descriptors[i].find("pipe:") != std::string::npos)
      r.inherit_fds.push_back({f.descriptors[i], static_cast<int>(i)});
  return r;
}

std::string describe(const Request& r) {
  std::string s = std::string("type ") + kind_name(r.kind) + "\n";
  auto line = [&](const std::string& k, const std::string& v) { s += k + (v.empty() ? "" : " " + v) + "\n"; };
  if (r.pid) line("pid", std::to_string(r.pid));
  if (!r.images_dir.empty()) line("images_dir", r.images_dir);
  if (!r.work_dir.empty()) line("work_dir", r.work_dir);
  if (!r.parent_img.empty()) line("parent_img", r.parent_img);
  line("root", r.root);
  line("log_file", r.log_file);
  if (!r.freeze_cgroup.empty()) line("freeze_cgroup", r.freeze_cgroup);
  const std::pair<const char*, bool> flags[] = {
      {"leave_running", r.leave_running}, {"tcp_established", r.tcp_established}, {"ext_unix_sk", r.ext_unix_sk},
      {"shell_job", r.shell_job},         {"file_locks", r.file_locks},           {"auto_dedup", r.auto_dedup},
      {"track_mem", r.track_mem},         {"evasive_devices", r.evasive_devices}, {"orphan_pts_master", r.orphan_pts_master},
      {"manage_cgroups", r.manage_cgroups}, {"lazy_pages", r.lazy_pages}};
  for (const auto& [name, on] : flags)
    if (on) line(name, "");
  if (r.cg_mode != CgroupsMode::kNone) line("manage_cgroups_mode", mode_name(r.cg_mode));
  if (r.empty_ns) line("empty_ns", std::to_string(r.empty_ns));
  if (!r.page_server_address.empty()) line("page_server", r.page_server_address + ":" + std::to_string(r.page_server_port));
  if (r.status_fd >= 0) line("status_fd", std::to_string(r.status_fd));
  if (!r.config_file.empty()) line("config_file", r.config_file);
  if (!r.lsm_profile.empty()) line("lsm_profile", r.lsm_profile);
  if (!r.lsm_mount_context.empty()) line("lsm_mount_context", r.lsm_mount_context);
  for (const auto& m : r.ext_mounts) line("ext_mount", m.key + ":" + m.val);
  for (const auto& e : r.externals) line("external", e);
  for (const auto& i : r.inherit_fds) line("inherit_fd", i.key + ":" + std::to_string(i.fd));
  for (const auto& [c, p] : r.cg_roots) line("cg_root", (c.empty() ? std::string("unified") : c) + ":" + p);
  return s;
}

std::string descriptors_json(const std::vector<std::string>& fds) {
  json::Writer w;
  w.begin_array();
  for (const auto& f : fds) w.string(f);
  w.end_array();
  return w.str();
}

Result<std::vector<std::string>> parse_descriptors(std::string_view text) {
  BERTH_ASSIGN(auto doc, json::Document::parse(text, "descriptors.json"));
  yajl_val v = doc.root();
  if (!YAJL_IS_ARRAY(v)) return Error::generic("descriptors.json: must be an array of strings, got " + json::describe(v));
  std::vector<std::string> out;
  for (size_t i = 0; i < v->u.array.len; ++i) {
    yajl_val e = v->u.array.values[i];
    if (!YAJL_IS_STRING(e)) return Error::generic("descriptors.json: [" + std::to_string(i) + "]: must be a string");
    out.emplace_back(YAJL_GET_STRING(e));
  }
  return out;
}

std::string native_device_refusal(const std::vector<std::string>& dev_paths) {
  for (const auto& p : dev_paths) {
    std::string c = linux::clean_path("/" + p);
    if (str::starts_with(c, "/dev/nvidia"))
      return "cannot checkpoint a container with NVIDIA GPUs (" + c +
             "): CRIU cannot save device memory without the CUDA checkpoint plugin";
    if (str::starts_with(c, "/dev/infiniband"))
      return "cannot checkpoint a container with RDMA devices (" + c + "): CRIU cannot save RDMA state";
  }
  return "";
}

std::string first_log_error(std::string_view log) {
  for (const auto& l : str::split(log, '\n')) {
    auto at = l.find("Error (");
    if (at == std::string::npos) continue;
    auto close = l.find("): ", at);
    std::string text(str::trim(close == std::string::npos ? l.substr(at) : l.substr(close + 3)));
    // A helper's exit status: the next error says what CRIU was doing with it.
    if (str::starts_with(text, "exited, status=") || str::starts_with(text, "Can't wait or bad status")) continue;
    return text;
  }
  return "";
}

}  // namespace berth::container::criu
