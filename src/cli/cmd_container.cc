// create, run, start, kill, delete: flags → libberth calls (and LISTEN_FDS/LISTEN_PID).
#include <unistd.h>

#include <cstdlib>

#include "berth/container.h"
#include "berth/container_ops.h"
#include "cli/commands.h"
#include "container/run.h"
#include "util/strings.h"

namespace berth::cli {
namespace {

// systemd socket activation (sd_listen_fds): LISTEN_FDS fds follow stdio, before
// --preserve-fds, and are ours only when LISTEN_PID names this process; otherwise they were
// meant for whoever exec'd us and fds 3.. may be anything. runc does the same.
int listen_fds() {
  const char* fds = std::getenv("LISTEN_FDS");
  const char* pid = std::getenv("LISTEN_PID");
  if (!fds || !pid) return 0;
  auto p = str::parse_u64(pid);
  auto n = str::parse_u64(fds);
  if (!p || *p != static_cast<uint64_t>(::getpid()) || !n || *n > 1024) return 0;
  return static_cast<int>(*n);
}

Result<CreateOptions> create_options(const Context& ctx) {
  CreateOptions o;
  o.root = ctx.global.root;
  o.id = ctx.flags.args.at(0);
  o.bundle = ctx.flags.get_string("bundle");
  o.pid_file = ctx.flags.get_string("pid-file");
  o.console_socket = ctx.flags.get_string("console-socket");
  o.pidfd_socket = ctx.flags.get_string("pidfd-socket");
  o.no_pivot = ctx.flags.get_bool("no-pivot");
  o.no_new_keyring = ctx.flags.get_bool("no-new-keyring");
  o.systemd_cgroup = ctx.global.systemd_cgroup;
  o.rootless = ctx.global.rootless;
  uint64_t preserve = ctx.flags.get_uint("preserve-fds");
  o.listen_fds = listen_fds();
  preserve += static_cast<uint64_t>(o.listen_fds);
  if (preserve > 1024) return Error::invalid_argument("--preserve-fds: too many file descriptors");
  o.preserve_fds = static_cast<int>(preserve);
  return o;
}

}  // namespace

Result<int> cmd_create(Context& ctx) {
  BERTH_ASSIGN(CreateOptions o, create_options(ctx));
  BERTH_TRY(create_container(o).context("berth create failed"));
  return 0;
}

Result<int> cmd_run(Context& ctx) {
  BERTH_ASSIGN(CreateOptions o, create_options(ctx));
  RunOptions r;
  r.detach = ctx.flags.get_bool("detach");
  r.keep = ctx.flags.get_bool("keep");
  r.no_subreaper = ctx.flags.get_bool("no-subreaper");
  auto code = run_container(o, r);
  if (!code) return std::move(code).error().context("berth run failed");
  return *code;
}

Result<int> cmd_start(Context& ctx) {
  BERTH_TRY(start_container(ctx.global.root, ctx.flags.args.at(0)));
  return 0;
}

Result<int> cmd_kill(Context& ctx) {
  const auto& a = ctx.flags.args;
  if (a.size() > 2) return Error::usage("berth: \"kill\" requires a maximum of 2 argument(s)");
  std::string sig = a.size() > 1 ? a[1] : "";
  if (ctx.flags.get_bool("all")) {
    int s = parse_signal(sig);
    if (s < 0) return Error::invalid_argument("unknown signal " + str::go_quote(sig));
    BERTH_TRY(kill_all(ctx.global.root, a[0], s));
    return 0;
  }
  BERTH_TRY(kill_container(ctx.global.root, a[0], sig, false));
  return 0;
}

Result<int> cmd_delete(Context& ctx) {
  BERTH_TRY(delete_container(ctx.global.root, ctx.flags.args.at(0), ctx.flags.get_bool("force")));
  return 0;
}

}  // namespace berth::cli
