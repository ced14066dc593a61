// CRIU's RPC messages: a Request → packed criu_req, a packed criu_resp → Response, and the
// text of a packed request for tests (rpc.proto's field names). Built with CRIU's own
// protobuf-c code (BERTH_HAVE_CRIU); without it every call says berth was built without CRIU.
#include "container/criu/rpc.h"

#include <memory>

#include "container/criu/driver.h"

#ifdef BERTH_HAVE_CRIU
extern "C" {
#include <criu/rpc.pb-c.h>
}
#endif

namespace berth::container::criu {

#ifndef BERTH_HAVE_CRIU

Result<std::vector<uint8_t>> pack_request(const Request&, const RpcFds&) { return not_built(); }
Result<std::vector<uint8_t>> pack_notify_ack(bool) { return not_built(); }
Result<std::vector<uint8_t>> pack_lazy_pages_check() { return not_built(); }
Result<std::vector<uint8_t>> pack_version_request() { return not_built(); }
Result<std::string> describe_packed_request(const std::vector<uint8_t>&) { return not_built(); }
Result<Response> unpack_response(const uint8_t*, size_t) { return not_built(); }
const char* request_type_name(Kind) { return "?"; }

#else

namespace {

// protobuf-c takes char*; the strings outlive the packing and are never written.
char* s(const std::string& v) { return const_cast<char*>(v.c_str()); }

CriuReqType req_type(Kind k) {
  switch (k) {
    case Kind::kDump: return CRIU_REQ_TYPE__DUMP;
    case Kind::kPreDump: return CRIU_REQ_TYPE__PRE_DUMP;
    case Kind::kRestore: return CRIU_REQ_TYPE__RESTORE;
  }
  return CRIU_REQ_TYPE__EMPTY;
}

CriuCgMode cg_mode(CgroupsMode m) {
  switch (m) {
    case CgroupsMode::kSoft: return CRIU_CG_MODE__SOFT;
    case CgroupsMode::kFull: return CRIU_CG_MODE__FULL;
    case CgroupsMode::kStrict: return CRIU_CG_MODE__STRICT;
    case CgroupsMode::kNone: break;
  }
  return CRIU_CG_MODE__DEFAULT;
}

Result<std::vector<uint8_t>> pack(const CriuReq& req) {
  std::vector<uint8_t> out(criu_req__get_packed_size(&req));
  if (criu_req__pack(&req, out.data()) != out.size()) return Error::generic("criu: packing the request failed");
  return out;
}

// The sub-messages and pointer arrays the request points into.
struct Parts {
  std::vector<std::unique_ptr<ExtMountMap>> mounts;
  std::vector<std::unique_ptr<::InheritFd>> inherits;
  std::vector<std::unique_ptr<CgroupRoot>> roots;
  std::vector<ExtMountMap*> mount_ptrs;
  std::vector<::InheritFd*> inherit_ptrs;
  std::vector<CgroupRoot*> root_ptrs;
  std::vector<char*> externals;
  CriuPageServerInfo ps;
};

void set_flags(CriuOpts& o, const Request& r) {
  struct Flag {
    protobuf_c_boolean* has;
    protobuf_c_boolean* value;
    bool on;
  };
  const Flag flags[] = {
      {&o.has_leave_running, &o.leave_running, r.leave_running},
      {&o.has_tcp_established, &o.tcp_established, r.tcp_established},
      {&o.has_ext_unix_sk, &o.ext_unix_sk, r.ext_unix_sk},
      {&o.has_shell_job, &o.shell_job, r.shell_job},
      {&o.has_file_locks, &o.file_locks, r.file_locks},
      {&o.has_auto_dedup, &o.auto_dedup, r.auto_dedup},
      {&o.has_track_mem, &o.track_mem, r.track_mem},
      {&o.has_evasive_devices, &o.evasive_devices, r.evasive_devices},
      {&o.has_orphan_pts_master, &o.orphan_pts_master, r.orphan_pts_master},
      {&o.has_manage_cgroups, &o.manage_cgroups, r.manage_cgroups},
      {&o.has_lazy_pages, &o.lazy_pages, r.lazy_pages}};
  for (const auto& f : flags)
    if (f.on) *f.has = *f.value = 1;
  if (r.cg_mode != CgroupsMode::kNone) {
    o.has_manage_cgroups_mode = 1;
    o.manage_cgroups_mode = cg_mode(r.cg_mode);
  }
  if (r.empty_ns) {
    o.has_empty_ns = 1;
    o.empty_ns = r.empty_ns;
  }
  if (r.kind == Kind::kRestore) {
    o.has_rst_sibling = o.rst_sibling = 1;
  }
  o.has_notify_scripts = o.notify_scripts = 1;
  o.has_log_level = 1;
  o.log_level = 4;
}

void set_lists(CriuOpts& o, const Request& r, const RpcFds& fds, Parts& p) {
  for (const auto& m : r.ext_mounts) {
    auto e = std::make_unique<ExtMountMap>();
    ext_mount_map__init(e.get());
    e->key = s(m.key);
    e->val = s(m.val);
    p.mount_ptrs.push_back(e.get());
    p.mounts.push_back(std::move(e));
  }
  for (size_t i = 0; i < r.inherit_fds.size() && i < fds.inherit.size(); ++i) {
    auto e = std::make_unique<::InheritFd>();
    inherit_fd__init(e.get());
    e->key = s(r.inherit_fds[i].key);
    e->fd = fds.inherit[i];
    p.inherit_ptrs.push_back(e.get());
    p.inherits.push_back(std::move(e));
  }
  for (const auto& [ctrl, path] : r.cg_roots) {
    auto e = std::make_unique<CgroupRoot>();
    cgroup_root__init(e.get());
    if (!ctrl.empty()) e->ctrl = s(ctrl);
    e->path = s(path);
    p.root_ptrs.push_back(e.get());
    p.roots.push_back(std::move(e));
  }
  for (const auto& x : r.externals) p.externals.push_back(s(x));
  o.n_ext_mnt = p.mount_ptrs.size();
  o.ext_mnt = p.mount_ptrs.data();
  o.n_inherit_fd = p.inherit_ptrs.size();
  o.inherit_fd = p.inherit_ptrs.data();
  o.n_cg_root = p.root_ptrs.size();
  o.cg_root = p.root_ptrs.data();
  o.n_external = p.externals.size();
  o.external = p.externals.data();
  if (!r.page_server_address.empty()) {
    criu_page_server_info__init(&p.ps);
    p.ps.address = s(r.page_server_address);
    p.ps.has_port = 1;
    p.ps.port = r.page_server_port;
    o.ps = &p.ps;
  }
}

void line(std::string& out, const std::string& k, const std::string& v = "") { out += k + (v.empty() ? "" : " " + v) + "\n"; }

void describe_opts(const CriuOpts& o, std::string& t) {
  line(t, "images_dir_fd", std::to_string(o.images_dir_fd));
  if (o.has_work_dir_fd) line(t, "work_dir_fd", std::to_string(o.work_dir_fd));
  if (o.has_pid) line(t, "pid", std::to_string(o.pid));
  if (o.parent_img) line(t, "parent_img", o.parent_img);
  if (o.root) line(t, "root", o.root);
  if (o.log_file) line(t, "log_file", o.log_file);
  if (o.has_log_level) line(t, "log_level", std::to_string(o.log_level));
  if (o.freeze_cgroup) line(t, "freeze_cgroup", o.freeze_cgroup);
  const std::pair<const char*, bool> flags[] = {
      {"leave_running", o.has_leave_running && o.leave_running},
      {"tcp_established", o.has_tcp_established && o.tcp_established},
      {"ext_unix_sk", o.has_ext_unix_sk && o.ext_unix_sk}, {"shell_job", o.has_shell_job && o.shell_job},
      {"file_locks", o.has_file_locks && o.file_locks}, {"auto_dedup", o.has_auto_dedup && o.auto_dedup},
      {"track_mem", o.has_track_mem && o.track_mem}, {"evasive_devices", o.has_evasive_devices && o.evasive_devices},
      {"orphan_pts_master", o.has_orphan_pts_master && o.orphan_pts_master},
      {"manage_cgroups", o.has_manage_cgroups && o.manage_cgroups}, {"lazy_pages", o.has_lazy_pages && o.lazy_pages},
      {"rst_sibling", o.has_rst_sibling && o.rst_sibling}, {"notify_scripts", o.has_notify_scripts && o.notify_scripts}};
  for (const auto& [name, on] : flags)
    if (on) line(t, name);
  if (o.has_manage_cgroups_mode) line(t, "manage_cgroups_mode", std::to_string(o.manage_cgroups_mode));
  if (o.has_empty_ns) line(t, "empty_ns", std::to_string(o.empty_ns));
  if (o.has_status_fd) line(t, "status_fd", std::to_string(o.status_fd));
  if (o.ps) line(t, "ps", std::string(o.ps->address ? o.ps->address : "") + ":" + std::to_string(o.ps->port));
  if (o.config_file) line(t, "config_file", o.config_file);
  if (o.lsm_profile) line(t, "lsm_profile", o.lsm_profile);
  if (o.lsm_mount_context) line(t, "lsm_mount_context", o.lsm_mount_context);
  for (size_t i = 0; i < o.n_ext_mnt; ++i) line(t, "ext_mnt", std::string(o.ext_mnt[i]->key) + ":" + o.ext_mnt[i]->val);
  for (size_t i = 0; i < o.n_external; ++i) line(t, "external", o.external[i]);
  for (size_t i = 0; i < o.n_inherit_fd; ++i)
    line(t, "inherit_fd", std::string(o.inherit_fd[i]->key) + ":" + std::to_string(o.inherit_fd[i]->fd));
  for (size_t i = 0; i < o.n_cg_root; ++i)
    line(t, "cg_root", std::string(o.cg_root[i]->ctrl ? o.cg_root[i]->ctrl : "") + ":" + o.cg_root[i]->path);
}

const char* type_text(CriuReqType t) {
  const ProtobufCEnumValue* v = protobuf_c_enum_descriptor_get_value(&criu_req_type__descriptor, t);
  return v ? v->name : "?";
}

}  // namespace

Result<std::vector<uint8_t>> pack_request(const Request& r, const RpcFds& fds) {
  CriuOpts o;
  criu_opts__init(&o);
  Parts p;
  o.images_dir_fd = fds.images_dir;
  if (fds.work_dir >= 0) {
    o.has_work_dir_fd = 1;
    o.work_dir_fd = fds.work_dir;
  }
  if (r.pid) {
    o.has_pid = 1;
    o.pid = r.pid;
  }
  if (!r.parent_img.empty()) o.parent_img = s(r.parent_img);
  o.root = s(r.root);
  o.log_file = s(r.log_file);
  if (!r.freeze_cgroup.empty()) o.freeze_cgroup = s(r.freeze_cgroup);
  if (!r.config_file.empty()) o.config_file = s(r.config_file);
  if (!r.lsm_profile.empty()) o.lsm_profile = s(r.lsm_profile);
  if (!r.lsm_mount_context.empty()) o.lsm_mount_context = s(r.lsm_mount_context);
  set_flags(o, r);
  set_lists(o, r, fds, p);
  CriuReq req;
  criu_req__init(&req);
  req.type = req_type(r.kind);
  req.opts = &o;
  return pack(req);
}

Result<std::vector<uint8_t>> pack_notify_ack(bool success) {
  CriuReq req;
  criu_req__init(&req);
  req.type = CRIU_REQ_TYPE__NOTIFY;
  req.has_notify_success = 1;
  req.notify_success = success;
  return pack(req);
}

Result<std::vector<uint8_t>> pack_lazy_pages_check() {
  CriuFeatures f;
  criu_features__init(&f);
  f.has_lazy_pages = f.lazy_pages = 1;
  CriuReq req;
  criu_req__init(&req);
  req.type = CRIU_REQ_TYPE__FEATURE_CHECK;
  req.features = &f;
  return pack(req);
}

Result<std::vector<uint8_t>> pack_version_request() {
  CriuReq req;
  criu_req__init(&req);
  req.type = CRIU_REQ_TYPE__VERSION;
  return pack(req);
}

Result<std::string> describe_packed_request(const std::vector<uint8_t>& packed) {
  CriuReq* req = criu_req__unpack(nullptr, packed.size(), packed.data());
  if (!req) return Error::invalid_argument("criu: not a packed criu_req");
  std::string t = std::string("type ") + type_text(req->type) + "\n";
  if (req->has_notify_success) line(t, "notify_success", req->notify_success ? "true" : "false");
  if (req->features && req->features->has_lazy_pages) line(t, "features lazy_pages");
  if (req->opts) describe_opts(*req->opts, t);
  criu_req__free_unpacked(req, nullptr);
  return t;
}

const char* request_type_name(Kind k) { return type_text(req_type(k)); }

Result<Response> unpack_response(const uint8_t* data, size_t len) {
  CriuResp* resp = criu_resp__unpack(nullptr, len, data);
  if (!resp) return Error::generic("criu: unreadable response (" + std::to_string(len) + " bytes)");
  Response out;
  out.type = type_text(resp->type);
  out.is_notify = resp->type == CRIU_REQ_TYPE__NOTIFY;
  out.success = resp->success;
  if (resp->notify) {
    if (resp->notify->script) out.script = resp->notify->script;
    if (resp->notify->has_pid) out.pid = resp->notify->pid;
  }
  if (resp->restore) out.pid = resp->restore->pid;
  if (resp->has_cr_errno) out.cr_errno = resp->cr_errno;
  if (resp->cr_errmsg) out.cr_errmsg = resp->cr_errmsg;
  if (resp->features && resp->features->has_lazy_pages) out.lazy_pages = resp->features->lazy_pages;
  if (resp->version) {
    int sub = resp->version->has_sublevel ? resp->version->sublevel : 0;
    out.version = resp->version->major_number * 10000 + resp->version->minor_number * 100 + sub;
  }
  criu_resp__free_unpacked(resp, nullptr);
  return out;
}

#endif

}  // namespace berth::container::criu
