// checkpoint, restore: flags → libberth's CRIU operations (runc's flag names and defaults).
#include "berth/checkpoint.h"
#include "cli/commands.h"

namespace berth::cli {
namespace {

void common(const Context& ctx, CriuCommonOptions& o) {
  const auto& f = ctx.flags;
  o.root = ctx.global.root;
  o.id = f.args.at(0);
  o.criu_binary = ctx.global.criu;
  o.image_path = f.get_string("image-path");
  o.work_path = f.get_string("work-path");
  o.tcp_established = f.get_bool("tcp-established");
  o.ext_unix_sk = f.get_bool("ext-unix-sk");
  o.shell_job = f.get_bool("shell-job");
  o.file_locks = f.get_bool("file-locks");
  o.lazy_pages = f.get_bool("lazy-pages");
  o.auto_dedup = f.get_bool("auto-dedup");
  o.manage_cgroups_mode = f.get_string("manage-cgroups-mode");
  o.empty_ns = f.get_strings("empty-ns");
}

}  // namespace

Result<int> cmd_checkpoint(Context& ctx) {
  CheckpointOptions o;
  common(ctx, o);
  const auto& f = ctx.flags;
  o.parent_path = f.get_string("parent-path");
  o.leave_running = f.get_bool("leave-running");
  o.pre_dump = f.get_bool("pre-dump");
  o.status_fd = static_cast<int>(f.get_int("status-fd", -1));
  o.page_server = f.get_string("page-server");
  BERTH_TRY(checkpoint_container(o));
  return 0;
}

Result<int> cmd_restore(Context& ctx) {
  RestoreOptions o;
  common(ctx, o);
  const auto& f = ctx.flags;
  o.bundle = f.get_string("bundle");
  o.pid_file = f.get_string("pid-file");
  o.console_socket = f.get_string("console-socket");
  o.detach = f.get_bool("detach");
  o.no_subreaper = f.get_bool("no-subreaper");
  o.no_pivot = f.get_bool("no-pivot");
  o.lsm_profile = f.get_string("lsm-profile");
  o.lsm_mount_context = f.get_string("lsm-mount-context");
  o.systemd_cgroup = ctx.global.systemd_cgroup;
  o.rootless = ctx.global.rootless;
  return restore_container(o);
}

}  // namespace berth::cli
