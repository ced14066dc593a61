// Request → libcriu calls (criu_local_*), the notify callback, CRIU's error reporting.
#include "container/criu/driver.h"

#include <fcntl.h>
#include <unistd.h>

#include "util/file.h"
#include "util/strings.h"

#ifdef BERTH_HAVE_CRIU
extern "C" {
#include <criu/criu.h>
}
#endif

namespace berth::container::criu {

Error not_built() {
  return Error::unsupported("berth was built without CRIU support (libcriu): checkpoint and restore are unavailable");
}

Status library_supports(bool lazy_pages, int status_fd) {
  if (lazy_pages) return Error::unsupported("--lazy-pages: not supported by this CRIU library (libcriu 3.17)");
  if (status_fd >= 0) return Error::unsupported("--status-fd: not supported by this CRIU library (libcriu 3.17)");
  return ok();
}

#ifndef BERTH_HAVE_CRIU

bool built_with_criu() { return false; }

Result<Outcome> execute(const Request&, const std::string&, const Notify&) { return not_built(); }

#else

namespace {

// libcriu's callback takes no user data: the one request in flight is reached through this.
const Notify* g_notify = nullptr;
Error g_notify_error = Error::generic("");
bool g_notify_failed = false;

int on_notify(char* action, criu_notify_arg_t na) {
  if (!g_notify || !*g_notify) return 0;
  auto st = (*g_notify)(action, criu_notify_pid(na));
  if (st) return 0;
  g_notify_error = std::move(st).error();
  g_notify_failed = true;
  return -1;
}

const char* type_name(Kind k) {
  switch (k) {
    case Kind::kDump: return "DUMP";
    case Kind::kPreDump: return "PRE_DUMP";
    case Kind::kRestore: return "RESTORE";
  }
  return "?";
}

enum criu_cg_mode cg_mode(CgroupsMode m) {
  switch (m) {
    case CgroupsMode::kSoft: return CRIU_CG_MODE_SOFT;
    case CgroupsMode::kFull: return CRIU_CG_MODE_FULL;
    case CgroupsMode::kStrict: return CRIU_CG_MODE_STRICT;
    case CgroupsMode::kNone: break;
  }
  return CRIU_CG_MODE_DEFAULT;
}

struct Opts {
  criu_opts* o = nullptr;
  ~Opts() {
    if (o) criu_local_free_opts(o);
  }
};

Status check(int rc, const std::string& what) {
  if (rc < 0) return Error::sys(-rc, "criu: " + what);
  return ok();
}

Status apply_paths(criu_opts* o, const Request& r, UniqueFd& images, UniqueFd& work) {
  // CRIU opens these through /proc/<our pid>/fd: close-on-exec is fine.
  images.reset(::open(r.images_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!images) return Error::sys(errno, "open image directory " + r.images_dir);
  criu_local_set_images_dir_fd(o, images.get());
  if (!r.work_dir.empty()) {
    work.reset(::open(r.work_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!work) return Error::sys(errno, "open work directory " + r.work_dir);
    criu_local_set_work_dir_fd(o, work.get());
  }
  if (!r.parent_img.empty()) BERTH_TRY(check(criu_local_set_parent_images(o, r.parent_img.c_str()), "parent images"));
  BERTH_TRY(check(criu_local_set_root(o, r.root.c_str()), "root"));
  BERTH_TRY(check(criu_local_set_log_file(o, r.log_file.c_str()), "log file"));
  criu_local_set_log_level(o, 4);
  if (!r.freeze_cgroup.empty()) BERTH_TRY(check(criu_local_set_freeze_cgroup(o, r.freeze_cgroup.c_str()), "freeze cgroup"));
  return ok();
}

void apply_flags(criu_opts* o, const Request& r) {
  if (r.pid) criu_local_set_pid(o, r.pid);
  criu_local_set_leave_running(o, r.leave_running);
  criu_local_set_tcp_established(o, r.tcp_established);
  criu_local_set_ext_unix_sk(o, r.ext_unix_sk);
  criu_local_set_shell_job(o, r.shell_job);
  criu_local_set_file_locks(o, r.file_locks);
  criu_local_set_auto_dedup(o, r.auto_dedup);
  criu_local_set_track_mem(o, r.track_mem);
  criu_local_set_evasive_devices(o, r.evasive_devices);
  criu_local_set_orphan_pts_master(o, r.orphan_pts_master);
  criu_local_set_manage_cgroups(o, r.manage_cgroups);
  if (r.cg_mode != CgroupsMode::kNone) criu_local_set_manage_cgroups_mode(o, cg_mode(r.cg_mode));
}

// Inherited fds must survive CRIU's exec: duplicates without close-on-exec, closed after.
Status apply_lists(criu_opts* o, const Request& r, std::vector<UniqueFd>& inherited) {
  for (const auto& m : r.ext_mounts) BERTH_TRY(check(criu_local_add_ext_mount(o, m.key.c_str(), m.val.c_str()), "ext mount " + m.key));
  for (const auto& e : r.externals) BERTH_TRY(check(criu_local_add_external(o, e.c_str()), "external " + e));
  for (const auto& i : r.inherit_fds) {
    int fd = i.fd;
    if (fd > 2) {
      fd = ::fcntl(i.fd, F_DUPFD, 3);
      if (fd < 0) return Error::sys(errno, "dup inherited fd");
      inherited.emplace_back(fd);
    }
    BERTH_TRY(check(criu_local_add_inherit_fd(o, fd, i.key.c_str()), "inherit fd " + i.key));
  }
  for (const auto& [c, p] : r.cg_roots) BERTH_TRY(check(criu_local_add_cg_root(o, c.empty() ? nullptr : c.c_str(), p.c_str()), "cgroup root"));
  if (!r.page_server_address.empty())
    BERTH_TRY(check(criu_local_set_page_server_address_port(o, r.page_server_address.c_str(), r.page_server_port), "page server"));
  if (!r.lsm_profile.empty()) BERTH_TRY(check(criu_local_set_lsm_profile(o, r.lsm_profile.c_str()), "lsm profile"));
  if (!r.lsm_mount_context.empty()) BERTH_TRY(check(criu_local_set_lsm_mount_context(o, r.lsm_mount_context.c_str()), "lsm mount context"));
  return ok();
}

Error criu_failure(const Request& r, int rc, int err) {
  std::string dir = r.work_dir.empty() ? r.images_dir : r.work_dir;
  std::string log = dir + "/" + r.log_file;
  std::string text = std::string("criu failed: type ") + type_name(r.kind) + " errno " +
                     std::to_string(rc == -EBADE ? err : -rc) + "\nlog file: " + log;
  auto content = file::read(log, 16u << 20);
  if (content) {
    std::string first = first_log_error(*content);
    if (!first.empty()) text += "\ncriu: " + first;
  } else if (rc == -ECONNREFUSED || rc == -EBADE || rc == -ECOMM) {
    text += "\ncriu: is " + std::string("the criu binary installed and does `criu check` pass?");
  }
  return Error::generic(text);
}

}  // namespace

bool built_with_criu() { return true; }

Result<Outcome> execute(const Request& r, const std::string& criu_binary, const Notify& notify) {
  BERTH_TRY(library_supports(r.lazy_pages, r.status_fd));
  Opts opts;
  if (criu_local_init_opts(&opts.o) < 0) return Error::sys(ENOMEM, "criu: init options");
  BERTH_TRY(check(criu_local_set_service_binary(opts.o, criu_binary.c_str()), "service binary"));
  UniqueFd images, work;
  std::vector<UniqueFd> inherited;
  BERTH_TRY(apply_paths(opts.o, r, images, work));
  apply_flags(opts.o, r);
  BERTH_TRY(apply_lists(opts.o, r, inherited));
  // runc needs CRIU 3.0 at least; libcriu asks the binary for its version over the RPC.
  int version = criu_local_get_version(opts.o);
  if (version < 0) return Error::sys(-version, "criu: cannot run " + criu_binary + " swrk");
  if (version < 30000) return Error::unsupported("CRIU version check failed: need 3.0 or later, have " + std::to_string(version));
  g_notify = &notify;
  g_notify_failed = false;
  criu_local_set_notify_cb(opts.o, on_notify);
  errno = 0;
  int rc = 0;
  switch (r.kind) {
    case Kind::kDump: rc = criu_local_dump(opts.o); break;
    case Kind::kPreDump: rc = criu_local_pre_dump(opts.o); break;
    case Kind::kRestore: rc = criu_local_restore_child(opts.o); break;
  }
  int err = errno;
  g_notify = nullptr;
  if (g_notify_failed) return g_notify_error;
  if (rc < 0) return criu_failure(r, rc, err);
  Outcome out;
  if (r.kind == Kind::kRestore) {
    out.pid = rc;
    int master = criu_get_orphan_pts_master_fd();
    if (master >= 0) out.pts_master.reset(master);
  }
  return out;
}

#endif

}  // namespace berth::container::criu
