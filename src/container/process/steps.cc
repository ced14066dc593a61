// The steps an init and an exec tenant share (see steps.h).
#include "container/process/steps.h"

#include <linux/capability.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/console.h"
#include "linux/rootfs/apply.h"

namespace berth::container::process {

// The payload inherits the mask and dispositions across execve: start it clean, whatever
// the runtime had blocked (a foreground `run` or `exec` blocks everything for its signalfd).
void reset_signals() {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) ::signal(s, SIG_DFL);
}

namespace {

// A notice of the parent's that is due (kSettled, kPlaced): taken, its flag cleared.
bool take_notice(InitConfig& cfg, const Message& m) {
  bool* pending = m.type == Msg::kSettled ? &cfg.settle_pending : m.type == Msg::kPlaced ? &cfg.placement_pending
                                                                                         : nullptr;
  if (!pending || !*pending) return false;
  *pending = false;
  return true;
}

// `m` must be `type` (a kError becomes the error).
Status expect(const Message& m, Msg type) {
  if (m.type == Msg::kError) return to_error(m);
  if (m.type != type) return Error::generic("sync: unexpected message from the runtime");
  return ok();
}

// Until *pending is cleared by its notice (`type`); the other notice may come first.
Status wait_notice(InitConfig& cfg, const bool& pending, Msg type) {
  while (pending) {
    BERTH_ASSIGN(Message m, receive(cfg.sync_fd));
    if (!take_notice(cfg, m)) BERTH_TRY(expect(m, type));
  }
  return ok();
}

}  // namespace

Result<Message> receive_from_runtime(InitConfig& cfg) {
  while (true) {
    BERTH_ASSIGN(Message m, receive(cfg.sync_fd));
    if (!take_notice(cfg, m)) return m;
  }
}

Status wait_for(InitConfig& cfg, Msg type) {
  BERTH_ASSIGN(Message m, receive_from_runtime(cfg));
  return expect(m, type);
}

Status wait_settled(InitConfig& cfg) { return wait_notice(cfg, cfg.settle_pending, Msg::kSettled); }

Status wait_placed(InitConfig& cfg) { return wait_notice(cfg, cfg.placement_pending, Msg::kPlaced); }

namespace {

uint64_t window_needs(const InitConfig& cfg) {
  uint64_t need = 0;
  for (int c : {CAP_SETUID, CAP_SETGID, CAP_SETPCAP, CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_SYS_RESOURCE, CAP_SYS_NICE})
    need |= uint64_t{1} << c;
  bool pty_bind = cfg.launch != Launch::kTenant && cfg.process.terminal && cfg.rootfs;
  if ((cfg.seccomp && !cfg.process.no_new_privileges) || pty_bind) need |= uint64_t{1} << CAP_SYS_ADMIN;
  return need;
}

}  // namespace

Status narrow_caps(linux::Sys& sys, const InitConfig& cfg, uint64_t held) {
  if (!cfg.has_caps || !held) return ok();
  const linux::CapSets& c = cfg.caps;
  linux::CapSets w;
  w.permitted = (c.permitted | c.effective | c.inheritable | c.ambient | window_needs(cfg)) & held;
  w.effective = w.permitted;
  BERTH_TRY(sys.capset(w).context("narrow the capabilities before the pid namespace"));
  return sys.drop_bounding_caps(c.bounding);
}

uint64_t permitted_caps() {
  __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &head, data) < 0) return 0;
  return data[0].permitted | (uint64_t{data[1].permitted} << 32);
}

Status open_console(linux::Sys& sys, InitConfig& cfg, int root_fd, linux::rootfs::Applier* fs) {
  // Opening the pty changes nothing outside this process (openat2 beneath the root, the
  // unlock ioctl on our own pty): only the steps after it go through the seam.
  BERTH_ASSIGN(linux::Pty pty, linux::open_pty(root_fd, "/dev/ptmx", cfg.process.console_size));
  if (fs) BERTH_TRY(fs->console(pty.peer.get()));
  BERTH_TRY(sys.set_controlling_tty(pty.peer.get()));
  return send(cfg.sync_fd, Msg::kConsole, 0, pty.name, pty.master.get());
}

Status join_v1_cgroups(linux::Sys& sys, const InitConfig& cfg) {
  // "0" is the writing thread (v1's tasks takes a thread id; 0 is current in any pid
  // namespace). The fds carry the parent's credentials (the kernel checks the opener's).
  for (const auto& t : cfg.cgroup_tasks)
    BERTH_TRY(sys.write_fd(t.fd, "0").context("join cgroups: write 0 to " + t.path));
  // Closed at once (our fd table is our own: no CLONE_FILES): host cgroup files must not
  // reach the process an exec tenant forks into the container's pid namespace, nor stay
  // with the init while it sets the container up (docs/security.md, "Exec processes").
  for (const auto& t : cfg.cgroup_tasks) ::close(t.fd);
  return ok();
}

Status apply_process_attributes(linux::Sys& sys, const InitConfig& cfg) {
  const spec::Process& p = cfg.process;
  if (!p.rlimits.empty()) BERTH_TRY(sys.set_rlimits(p.rlimits));
  if (p.oom_score_adj) BERTH_TRY(sys.set_oom_score_adj(*p.oom_score_adj));
  if (cfg.new_keyring) BERTH_TRY(sys.join_session_keyring(cfg.container_id));
  if (p.scheduler) BERTH_TRY(sys.set_scheduler(*p.scheduler));
  if (p.io_priority) BERTH_TRY(sys.set_io_priority(*p.io_priority));
  if (cfg.personality) BERTH_TRY(sys.set_personality(*cfg.personality));
  if (cfg.memory_policy) BERTH_TRY(sys.set_memory_policy(*cfg.memory_policy));
  return ok();
}

}  // namespace berth::container::process
