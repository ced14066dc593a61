// Helpers for the exec and seccomp integration tests: a running busybox container under a
// given runtime (its own cgroup /berth-test/<id>), a console socket that receives a pty
// master, running a runtime with an extra fd 3, freezing a cgroup, /proc readers.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/harness.h"
#include "support/recv_fd.h"

namespace berth::test {

inline std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

inline std::string link_of(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The value of "Name:" in a /proc/<pid>/status text ("" when absent).
inline std::string status_field(const std::string& status, const std::string& name) {
  std::istringstream in(status);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + ":", 0) == 0) {
      std::string v = line.substr(name.size() + 1);
      return v.substr(v.find_first_not_of(" \t"));
    }
  return "";
}

inline int state_pid(const Runtime& rt, const std::string& id) {
  std::string out = rt({"state", id}).out;
  size_t at = out.find("\"pid\": ");
  return at == std::string::npos ? -1 : std::atoi(out.c_str() + at + 7);
}

// Polls `done` every 20 ms for up to `ms` milliseconds.
// berth always, runc when installed: each gets its own Runtime (state root).
inline void for_each_runtime(const std::function<void(const Runtime&, const std::string& name)>& f) {
  Runtime berth;
  f(berth, "berth");
  if (have_runc()) {
    Runtime runc(runc_binary());
    f(runc, "runc");
  }
}

inline bool eventually(const std::function<bool()>& done, int ms = 5000) {
  for (int waited = 0; waited < ms; waited += 20) {
    if (done()) return true;
    ::usleep(20000);
  }
  return done();
}

// A container running `sleep 1000` (or the bundle's edited process), detached, with
// linux.cgroupsPath /berth-test/<id>. Deleted (force) by the Runtime's destructor.
class Container {
 public:
  Container(const Runtime& rt, const std::string& id, const std::function<void(spec::Spec&)>& edit = {},
            const std::function<void(Bundle&)>& prepare = {})
      : rt_(rt), id_(id) {
    bundle_.spec().process->args = {"sleep", "1000"};
    bundle_.spec().linux->cgroups_path = "/berth-test/" + id;
    if (edit) edit(bundle_.spec());
    if (prepare) prepare(bundle_);
    bundle_.write();
    started_ = rt({"run", "-d", "--bundle", bundle_.path(), id});
    // `run -d` may return before the payload's execve is done; freezing a runtime's init
    // in the middle of it wedges it (runc's threads), so wait for the payload itself.
    std::string comm = bundle_.spec().process->args[0];
    comm = comm.substr(comm.rfind('/') + 1) + "\n";
    if (started_.code == 0 && bundle_.spec().process->args[0] == "sleep")
      eventually([&] { return read_text("/proc/" + std::to_string(pid()) + "/comm") == comm; });
  }
  const CmdResult& started() const { return started_; }
  const std::string& id() const { return id_; }
  Bundle& bundle() { return bundle_; }
  int pid() const { return state_pid(rt_, id_); }
  // `exec <flags> <id> <command>`
  CmdResult exec(const std::vector<std::string>& flags, const std::vector<std::string>& command,
                 const std::string& input = "") const {
    std::vector<std::string> args = {"exec"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back(id_);
    args.insert(args.end(), command.begin(), command.end());
    return rt_(args, input);
  }

 private:
  const Runtime& rt_;
  std::string id_;
  Bundle bundle_;
  CmdResult started_;
};

// An AF_UNIX listener for --console-socket / --pidfd-socket: one connection, one fd.
class FdSocket {
 public:
  FdSocket() : dir_("berth-sock") {
    path_ = dir_.path() + "/s.sock";
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path_.c_str());
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 1);
  }
  ~FdSocket() { ::close(fd_); }
  const std::string& path() const { return path_; }
  // The received fd (-1 on timeout) and the message's payload.
  int receive(std::string* payload, int timeout_ms = 5000) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return -1;
    int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    int fd = recv_one_fd(conn, payload, 511);
    ::close(conn);
    return fd;
  }

 private:
  TempDir dir_;
  std::string path_;
  int fd_ = -1;
};

// Everything readable from fd until EOF/EIO (a pty whose last user left) or the timeout.
inline std::string drain(int fd, int timeout_ms = 5000) {
  std::string out;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Runs argv with `file` opened read-only as fd 3 (for --preserve-fds); stdout and status.
inline CmdResult run_with_fd3(const std::vector<std::string>& argv, const std::string& file) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) < 0) return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(file.c_str(), O_RDONLY);
    ::dup2(fd, 3);
    ::dup2(out[1], 1);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  CmdResult r;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) r.out.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// Runs argv, waits until its stdout shows `ready`, sends it `sig`, and returns what it
// printed and its exit status: how a foreground runtime's signal forwarding is observed.
inline CmdResult run_and_signal(const std::vector<std::string>& argv, const std::string& ready, int sig) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) < 0) return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  CmdResult r;
  bool sent = false;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) {
    r.out.append(buf, static_cast<size_t>(n));
    if (!sent && r.out.find(ready) != std::string::npos) sent = ::kill(pid, sig) == 0;
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// Freezes or thaws the container's cgroup /berth-test/<id> (the v1 freezer when the host
// has one, else cgroup v2's cgroup.freeze), as `pause` / `resume` would.
inline bool set_frozen(const std::string& id, bool frozen) {
  std::string v1 = "/sys/fs/cgroup/freezer/berth-test/" + id + "/freezer.state";
  struct stat st;
  if (::stat(v1.c_str(), &st) == 0) {
    write_text(v1, frozen ? "FROZEN" : "THAWED");
    return eventually([&] { return read_text(v1).rfind(frozen ? "FROZEN" : "THAWED", 0) == 0; });
  }
  for (const char* root : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
    std::string v2 = std::string(root) + "/berth-test/" + id + "/cgroup.freeze";
    if (::stat(v2.c_str(), &st) == 0) {
      write_text(v2, frozen ? "1" : "0");
      return true;
    }
  }
  return false;
}

// A helper program started in the background and waited for on destruction.
class Background {
 public:
  explicit Background(std::vector<std::string> argv, int timeout_s = 30)
      : thread_([this, argv = std::move(argv), timeout_s] { result_ = run_cmd(argv, "", timeout_s); }) {}
  ~Background() {
    if (thread_.joinable()) thread_.join();
  }
  const CmdResult& wait() {
    if (thread_.joinable()) thread_.join();
    return result_;
  }

 private:
  CmdResult result_;
  std::thread thread_;
};

}  // namespace berth::test
