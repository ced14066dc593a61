// Running lifecycle hooks (see hooks.h). Which hooks run when, and in which namespaces, is
// decided by create/start/delete; this file only runs one.
#include "container/hooks.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "container/process/spawn.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "util/strings.h"

namespace berth::container {
namespace {

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct Pipes {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  ~Pipes() {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
      if (fd >= 0) ::close(fd);
  }
};

int exec_hook(const spec::Hook& hook, Pipes& p, const std::string& cwd, const std::vector<std::string>* inherit,
              const std::function<Status()>* last_step) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(p.in[0], 0);
  ::dup2(p.out[1], 1);
  ::dup2(p.err[1], 2);
  // berth's own fds are O_CLOEXEC; what the caller left open without it (an engine's
  // stray descriptors) must not reach the hook either: runc's hooks see only stdio.
  // CLOEXEC rather than closed, so a failed execve can still report on fd 2.
  ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
  if (!cwd.empty() && ::chdir(cwd.c_str()) < 0) {
    (void)file::write_all(2, "chdir " + cwd + ": " + Error::sys(errno, "").message() + "\n");
    return 127;
  }
  std::vector<std::string> args = hook.args.empty() ? std::vector<std::string>{hook.path} : hook.args;
  auto argv = c_strings(args);
  // Without `env`, runc's hook inherits (Go's exec with a nil Env): runc's environment, or
  // the process's for the hooks its init runs. Hooks like nvidia's read PATH from it.
  std::vector<std::string> env = hook.env ? *hook.env : inherit ? *inherit : std::vector<std::string>{};
  auto envp = c_strings(env);
  if (last_step) {
    if (auto st = (*last_step)(); !st) {
      (void)file::write_all(2, "berth: " + st.error().message() + "\n");
      return 127;
    }
  }
  ::execve(hook.path.c_str(), argv.data(), hook.env || inherit ? envp.data() : ::environ);
  std::string msg = "exec " + hook.path + ": " + Error::sys(errno, "").message() + "\n";
  (void)file::write_all(2, msg);
  return 127;
}

// A hook that exits without reading stdin closes the pipe under us: that must come back
// as EPIPE, not as a SIGPIPE that kills berth. The signal is blocked for the write and a
// pending one drained; the disposition stays default, so nothing we exec inherits SIG_IGN.
void write_state(int fd, const std::string& state_json) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  bool broken = ::write(fd, state_json.data(), state_json.size()) < 0 && errno == EPIPE;
  if (broken && !sigismember(&old, SIGPIPE)) {
    struct timespec now = {0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &now) == SIGPIPE) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

Status run_hook(const spec::Hook& hook, const std::string& state_json, const std::string& cwd,
                const std::vector<std::string>* inherit, const std::function<Status()>* last_step) {
  Pipes p;
  if (::pipe2(p.in, O_CLOEXEC) < 0 || ::pipe2(p.out, O_CLOEXEC) < 0 || ::pipe2(p.err, O_CLOEXEC) < 0)
    return Error::sys(errno, "pipe");
  BERTH_ASSIGN(OwnedPid child, process::fork_child([&] { return exec_hook(hook, p, cwd, inherit, last_step); }));
  ::close(p.in[0]), p.in[0] = -1;
  ::close(p.out[1]), p.out[1] = -1;
  ::close(p.err[1]), p.err[1] = -1;
  // The state may exceed the pipe buffer only for huge annotations; a hook that does not
  // read stdin must not block us, so write without blocking forever.
  ::fcntl(p.in[1], F_SETFL, O_NONBLOCK);
  write_state(p.in[1], state_json);
  ::close(p.in[1]), p.in[1] = -1;

  std::string out, err;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(hook.timeout.value_or(0));
  bool open_out = true, open_err = true;
  while (open_out || open_err) {
    // A foreground run's SIGTERM ends a hook that never ends (util/interrupt.h).
    struct pollfd fds[3] = {{p.out[0], POLLIN, 0}, {p.err[0], POLLIN, 0}, {interrupt::fd(), POLLIN, 0}};
    int wait_ms = -1;
    if (hook.timeout) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      wait_ms = static_cast<int>(left.count());
    }
    int n = ::poll(fds, 3, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (fds[2].revents & POLLIN) {
      child.kill_and_reap();
      return interrupt::interrupted();
    }
    char buf[4096];
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      if (r <= 0) (i == 0 ? open_out : open_err) = false;
      else (i == 0 ? out : err).append(buf, static_cast<size_t>(r));
    }
  }
  if (open_out || open_err) {
    child.kill_and_reap();
    return Error::generic("hook ran past specified timeout of " + std::to_string(*hook.timeout) + ".0s");
  }
  int status = child.wait();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ok();
  // Go's wording, as runc prints it: "signal: bad system call" (glibc capitalizes). runc
  // 1.1 puts "error running hook: " in front, 1.2 names the hook's kind outside it
  // (run_hooks): berth says both, and tests written for either find their words.
  std::string why = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                      : "signal: " + str::to_lower(strsignal(WTERMSIG(status)));
  return Error::generic("error running hook: " + why + ", stdout: " + out + ", stderr: " + err);
}

Status run_hooks(const char* kind, const std::vector<spec::Hook>& hooks, const std::string& state_json,
                 const std::string& cwd, const std::vector<std::string>* inherit,
                 const std::function<Status()>* last_step) {
  for (size_t i = 0; i < hooks.size(); ++i)
    BERTH_TRY(run_hook(hooks[i], state_json, cwd, inherit, last_step).with_context([&] {
      return std::string("error running ") + kind + " hook #" + std::to_string(i);
    }));
  return ok();
}

}  // namespace berth::container
