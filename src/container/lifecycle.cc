// start, kill, delete, state and list (runc's semantics and texts for each status).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <thread>

#include "berth/container.h"
#include "cgroups/manager.h"
#include "container/cgroup_setup.h"
#include "container/hooks.h"
#include "container/record.h"
#include "container/state_store.h"
#include "container/status.h"
#include "linux/proc.h"
#include "linux/users.h"
#include "util/file.h"
#include "util/log.h"
#include "util/strings.h"

namespace berth {
namespace {

using container::ContainerDir;

struct Loaded {
  ContainerDir dir;
  ContainerRecord record;
  ContainerStatus status;
};

Result<Loaded> load(const std::string& root, const std::string& id, bool lock) {
  BERTH_ASSIGN(auto store, container::StateStore::open_existing(root));
  BERTH_ASSIGN(auto dir, store.open_container(id));
  if (lock) BERTH_TRY(dir.lock());
  BERTH_ASSIGN(auto record, dir.read_record());
  ContainerStatus s = container::derive_status(dir, record);
  return Loaded{std::move(dir), std::move(record), s};
}

Status signal_init(const ContainerRecord& r, int sig) {
  // A pidfd pins the process we checked: a pid reused between the check and the signal
  // cannot be hit.
  UniqueFd pidfd = linux::pin_process(r.pid, r.pid_start_time);
  if (!pidfd) return Error(errno, ErrorKind::kNotRunning, "container not running");
  if (::syscall(SYS_pidfd_send_signal, pidfd.get(), sig, nullptr, 0) < 0) return Error::sys(errno, "kill container init");
  return ok();
}

UniqueFd open_pidfd(pid_t pid) { return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))); }

// Waits up to `ms` for every pidfd to turn readable. The kernel marks a pidfd readable when
// its whole thread group has exited (a zombie, or reaped): the moment process_alive turns
// false, and after the exit has left the process's cgroups (cgroup_exit runs before the
// exit notification), so no sleep-and-recheck loop is needed. False on a timeout.
bool wait_exited(std::vector<UniqueFd>& pidfds, int ms) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  std::vector<struct pollfd> fds;
  for (const auto& fd : pidfds) fds.push_back({fd.get(), POLLIN, 0});
  for (size_t done = 0; done < fds.size();) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    if (left.count() < 0) return false;
    int n = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()) + 1);
    if (n < 0 && errno != EINTR) return false;
    for (auto& f : fds)
      if (f.fd >= 0 && f.revents) f.fd = -1, ++done;  // poll skips negative fds
  }
  return true;
}

void wait_gone(const ContainerRecord& r) {
  // runc waits up to 10 s for a killed init to disappear.
  std::vector<UniqueFd> pidfd;
  pidfd.push_back(linux::pin_process(r.pid, r.pid_start_time));
  if (!pidfd[0]) return;  // gone, or the pid is reused
  (void)wait_exited(pidfd, 10000);
}

// A SIGKILL to a process of a frozen cgroup v1 waits for the thaw: after killing a paused
// container's init, thaw it, as runc does (else `kill KILL` left it paused and
// `delete --force` waited its 10 s for the init in vain).
void thaw_after_kill(const ContainerRecord& r) {
  if (r.cgroup_paths.empty()) return;
  auto m = cgroups::Manager::load(r.cgroup_paths);
  if (m) (void)m->thaw();
}

// Processes left in the container's cgroup (a container without its own pid namespace, or
// a paused one) are killed before the cgroup goes: frozen, killed, thawed, awaited.
void kill_leftovers(const ContainerRecord& r) {
  if (r.cgroup_paths.empty()) return;
  auto m = cgroups::Manager::load(r.cgroup_paths);
  if (!m) return;
  auto pids = m->pids();
  if (!pids || pids->empty()) return;
  (void)m->freeze();
  // Killed through pidfds (a pid the cgroup listed cannot be reused under us), and awaited
  // through them: readable once each has exited and left the cgroup (wait_exited).
  std::vector<UniqueFd> pidfds;
  for (pid_t p : *pids) {
    UniqueFd fd = open_pidfd(p);
    if (!fd) {
      if (errno != ESRCH) ::kill(p, SIGKILL);
      continue;
    }
    if (::syscall(SYS_pidfd_send_signal, fd.get(), SIGKILL, nullptr, 0) == 0) pidfds.push_back(std::move(fd));
  }
  (void)m->thaw();
  (void)wait_exited(pidfds, 5000);
  // Only what the pidfds could not cover is polled for (a process that joined the cgroup
  // after the listing, one whose pidfd could not be opened): normally empty at once.
  for (int i = 0; i < 500; ++i) {
    auto left = m->pids();
    if (!left || left->empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// poststart and poststop hooks: a failing hook is a warning and the ones after it still run
// (runtime-spec lifecycle: "the runtime MUST log a warning, but the remaining hooks and
// lifecycle continue as if the hook had succeeded"); run_hooks stops at the first failure.
// They run from the bundle directory, as runc's `run` and containerd's shim (whose cwd it
// is) run them; from ours when the bundle is gone already (a poststop after its removal).
void run_hooks_warning(const char* kind, const std::vector<spec::Hook>& hooks, const std::string& state,
                       const std::string& bundle) {
  struct stat dir;
  std::string cwd = !bundle.empty() && ::stat(bundle.c_str(), &dir) == 0 && S_ISDIR(dir.st_mode) ? bundle : "";
  for (size_t i = 0; i < hooks.size(); ++i) {
    auto st = container::run_hook(hooks[i], state, cwd);
    if (!st) log::warn(st.error().context(std::string("error running ") + kind + " hook #" + std::to_string(i)).message());
  }
}

// Removes everything the container set up; poststop hook failures are warnings.
Status destroy(Loaded& c, const std::string& root) {
  // Usually nothing of the container runs any more (its pid namespace died with its init):
  // its cgroups are empty leaves and go with one rmdir each. Listing every hierarchy's
  // processes and sub-cgroups first cost a walk of every hierarchy (docs/performance.md). A
  // cgroup still busy (a leftover process of a shared pid namespace, a sub-cgroup) fails
  // the rmdir and takes the long way: listed, frozen, killed, removed.
  if (c.record.systemd_cgroup || !container::remove_empty_cgroups(c.record.cgroup_paths)) {
    kill_leftovers(c.record);
    BERTH_TRY(container::remove_cgroups(c.record.cgroup_paths, c.record.systemd_cgroup).context("remove cgroups"));
  }
  auto poststop = c.dir.read_hooks("poststop", &spec::Hooks::poststop);
  BERTH_ASSIGN(auto store, container::StateStore::open_existing(root));
  BERTH_TRY(store.remove(c.record.id));
  if (poststop && !poststop->empty()) {
    OciState s = container::to_oci_state(c.record, ContainerStatus::kStopped);
    run_hooks_warning("poststop", *poststop, oci_state_json(s, false), c.record.bundle);
  }
  return ok();
}

std::string owner_name(int dirfd) {
  struct stat st;
  if (::fstat(dirfd, &st) < 0) return "";
  auto text = file::read("/etc/passwd");
  if (text)
    for (const auto& e : linux::parse_passwd(*text))
      if (e.uid == st.st_uid) return e.name;
  return "#" + std::to_string(st.st_uid);
}

}  // namespace

// As runc: a number goes as it is (0 only checks that the init lives), a name in any case,
// with or without "SIG" ("kill ID usr1").
int parse_signal(const std::string& s) {
  if (s.empty()) return SIGTERM;
  if (auto n = str::parse_i64(s); n) return *n >= 0 && *n < NSIG ? static_cast<int>(*n) : -1;
  std::string name = s;
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (str::starts_with(name, "SIG")) name = name.substr(3);
  for (int sig = 1; sig < NSIG; ++sig) {
    const char* abbrev = sigabbrev_np(sig);
    if (abbrev && name == abbrev) return sig;
  }
  if (name == "IOT") return SIGABRT;
  if (name == "CLD") return SIGCHLD;
  if (name == "POLL") return SIGIO;
  return -1;
}

namespace {

// The byte sits in the fifo even when the init dies between our open and its read (killed
// by an engine, OOM): report the start only once the init has taken it. Then, as runc's
// start does, return only once the init has gone on to execve: the init keeps its end of
// the fifo (O_CLOEXEC) through the startContainer hooks, so that poststart hooks run after
// the user's process is executed, as the runtime spec orders them. The kernel reports
// POLLERR on our write end when the last reader goes (pipe_poll: no readers) — at that
// execve or at the init's death — so one poll waits for either; FIONREAD then tells a
// taken byte from a death.
Status wait_until_taken(int fifo, const ContainerRecord& r) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    int left = 0;
    if (::ioctl(fifo, FIONREAD, &left) < 0) return Error::sys(errno, "exec.fifo");
    // Taken: the startContainer hooks run, without a time limit (runc has none either); the
    // one-second wakeups only look at the init, which cannot die and keep the fifo open.
    auto wait = left == 0 ? std::chrono::milliseconds(1000)
                          : std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    struct pollfd p = {fifo, 0, 0};  // POLLERR and POLLHUP need no request
    if (wait.count() >= 0 && ::poll(&p, 1, static_cast<int>(wait.count()) + 1) < 0 && errno != EINTR)
      return Error::sys(errno, "exec.fifo");
    if (p.revents) {
      if (::ioctl(fifo, FIONREAD, &left) < 0) return Error::sys(errno, "exec.fifo");
      if (left == 0) return ok();
      return Error::generic("cannot start a container that has stopped");
    }
    if (!linux::process_alive(r.pid, r.pid_start_time)) {
      if (left == 0) return ok();  // it took the byte, then ended: started, as runc says
      return Error::generic("cannot start a container that has stopped");
    }
    if (left != 0 && std::chrono::steady_clock::now() > give_up)
      return Error::generic("the container's init did not take the start signal within 10s");
  }
}

}  // namespace

Status start_container(const std::string& root, const std::string& id) {
  BERTH_ASSIGN(Loaded c, load(root, id, true));
  switch (c.status) {
    case ContainerStatus::kCreated: break;
    case ContainerStatus::kStopped: return Error::generic("cannot start a container that has stopped");
    case ContainerStatus::kRunning: return Error::generic("cannot start an already running container");
    default: return Error::generic(std::string("cannot start a container in the ") + status_name(c.status) + " state");
  }
  // The init reads the fifo; no reader (ENXIO) means it is gone.
  UniqueFd fifo(::openat(c.dir.fd(), "exec.fifo", O_WRONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fifo) {
    if (errno == ENXIO) return Error::generic("cannot start a container that has stopped");
    return Error::sys(errno, "open exec.fifo");
  }
  BERTH_TRY(file::write_all(fifo.get(), "0").context("write exec.fifo"));
  BERTH_TRY(wait_until_taken(fifo.get(), c.record));
  ::unlinkat(c.dir.fd(), "exec.fifo", 0);
  auto poststart = c.dir.read_hooks("poststart", &spec::Hooks::poststart);
  if (poststart && !poststart->empty()) {
    OciState s = container::to_oci_state(c.record, ContainerStatus::kRunning);
    run_hooks_warning("poststart", *poststart, oci_state_json(s, false), c.record.bundle);
  }
  return ok();
}

Status kill_container(const std::string& root, const std::string& id, const std::string& signal, bool all) {
  int sig = parse_signal(signal);
  if (sig < 0) return Error::invalid_argument("unknown signal " + str::go_quote(signal));
  BERTH_ASSIGN(Loaded c, load(root, id, false));
  if (c.status == ContainerStatus::kStopped && !all) return Error(0, ErrorKind::kNotRunning, "container not running");
  BERTH_TRY(signal_init(c.record, sig));
  if (c.status == ContainerStatus::kPaused && sig == SIGKILL) thaw_after_kill(c.record);
  return ok();
}

namespace {

// `delete --force` of a container whose state.json cannot be read (truncated by a full
// disk, a crash, a hand): runc gives up and leaks the init, its cgroups and the state
// directory. berth still has the config copy, so it knows the cgroups (linux.cgroupsPath,
// placed as create placed them), kills whatever runs in them (the init among them),
// removes them and the state directory, and warns about what it could not read.
Status delete_unreadable(container::StateStore& store, const std::string& id, const Error& why) {
  BERTH_ASSIGN(auto dir, store.open_container(id));
  BERTH_TRY(dir.lock());
  std::string unread = "state.json: " + why.message();
  ContainerRecord r;
  r.id = id;
  auto spec = dir.read_config();
  if (!spec) {
    unread += "; config.json: " + spec.error().message() + " (its cgroups and processes are not known)";
  } else {
    auto paths = container::planned_cgroup_paths(*spec, id, false);
    if (paths) r.cgroup_paths = std::move(*paths);
    else unread += "; cgroups: " + paths.error().message();
    // Without cgroupsPath create nested the container under its caller's cgroup, which
    // need not be ours: then only a container found below our own cgroup goes.
    if (paths && (!spec->linux || spec->linux->cgroups_path.empty()))
      unread += " (no linux.cgroupsPath: cgroups looked for below this process's own)";
  }
  log::warn("container " + id + ": could not read " + unread + "; removing what is known");
  kill_leftovers(r);
  auto removed = container::remove_cgroups(r.cgroup_paths, r.systemd_cgroup);
  if (!removed) log::warn(removed.error().context("remove cgroups").message());
  // No poststop hooks: they are given the container's state, which is what is lost.
  return store.remove(id);
}

}  // namespace

Status delete_container(const std::string& root, const std::string& id, bool force) {
  auto loaded = load(root, id, true);
  if (!loaded) {
    if (!force) return std::move(loaded).error();
    auto store = container::StateStore::open_existing(root);
    if (!store) return std::move(loaded).error();
    if (loaded.error().kind() == ErrorKind::kNotExist) {
      // No directory (nothing to do), or one left by a create killed before its state was
      // written (its cgroups, if any, are recorded only later).
      (void)store->remove(id);
      return ok();
    }
    return delete_unreadable(*store, id, loaded.error());
  }
  Loaded& c = *loaded;
  switch (c.status) {
    case ContainerStatus::kStopped: break;
    case ContainerStatus::kCreated:
    case ContainerStatus::kCreating:
      if (c.record.pid > 0) (void)signal_init(c.record, SIGKILL), wait_gone(c.record);
      break;
    default:
      if (!force)
        return Error(0, ErrorKind::kNotStopped,
                     "cannot delete container " + id + " that is not stopped: " + status_name(c.status));
      (void)signal_init(c.record, SIGKILL);
      if (c.status == ContainerStatus::kPaused) thaw_after_kill(c.record);
      wait_gone(c.record);
  }
  return destroy(c, root);
}

Result<OciState> container_state(const std::string& root, const std::string& id) {
  BERTH_ASSIGN(Loaded c, load(root, id, false));
  return container::to_oci_state(c.record, c.status);
}

Result<std::vector<OciState>> list_containers(const std::string& root) {
  BERTH_ASSIGN(auto store, container::StateStore::open_existing(root));
  BERTH_ASSIGN(auto ids, store.list_ids());
  std::vector<OciState> out;
  for (const auto& id : ids) {
    auto dir = store.open_container(id);
    if (!dir) continue;
    auto record = dir->read_record();
    if (!record) continue;  // being created or deleted right now
    OciState s = container::to_oci_state(*record, container::derive_status(*dir, *record));
    s.owner = owner_name(dir->fd());
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace berth
