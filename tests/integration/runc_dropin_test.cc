// runc drop-in behaviours, each run the same way under runc (when installed) and berth with
// the same outcome asserted: relative bind sources (bundle-relative), stdio and the pty
// handed to process.user, `events` streaming to a pipe, the hooks' working directories,
// socket activation (LISTEN_FDS/LISTEN_PID), and `exec` into a stopped or stopping container.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "support/exec_helpers.h"

namespace berth::test {
namespace {

// `rt <args>` started with `cwd` as its working directory.
CmdResult run_in(const std::string& cwd, const Runtime& rt, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", cwd, rt.binary(), "--root", rt.root()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_cmd(argv);
}

// runtime-spec: a bind's source may be relative to the bundle. runc resolves it against the
// bundle; neither takes berth's own working directory (a decoy with the same names here).
TEST(RuncDropIn, RelativeBindSourceIsInTheBundle) {
  TempDir decoy("berth-decoy");
  std::filesystem::create_directories(decoy.path() + "/data");
  write_text(decoy.path() + "/data/f", "from-the-cwd\n");
  write_text(decoy.path() + "/file", "from-the-cwd\n");
  std::map<std::string, CmdResult> seen;
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    Bundle b;
    std::filesystem::create_directories(b.path() + "/data");
    write_text(b.path() + "/data/f", "dir-from-the-bundle\n");
    write_text(b.path() + "/file", "file-from-the-bundle\n");
    b.spec().mounts.push_back({"/mnt", "bind", "data", {"rbind", "ro"}, {}, {}});
    b.spec().mounts.push_back({"/etc/single", "bind", "./file", {"bind", "ro"}, {}, {}});
    b.script("cat /mnt/f /etc/single");
    b.write();
    seen[name] = run_in(decoy.path(), rt, {"run", "--bundle", b.path(), "relbind-" + name});
  });
  EXPECT_EQ(seen["berth"].code, 0) << seen["berth"].err;
  EXPECT_EQ(seen["berth"].out, "dir-from-the-bundle\nfile-from-the-bundle\n");
  if (seen.count("runc")) {
    EXPECT_EQ(seen["runc"].code, seen["berth"].code) << seen["runc"].err;
    EXPECT_EQ(seen["runc"].out, seen["berth"].out);
  }
}

// Kills the container's init and reaps it (the test process is the subreaper its init was
// handed to), so that `delete` finds an empty cgroup instead of waiting for the zombie.
void stop_and_reap(const Runtime& rt, const std::string& id) {
  rt({"kill", id, "KILL"});
  eventually([&] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    return rt({"state", id}).out.find("\"status\": \"stopped\"") != std::string::npos;
  });
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  rt({"delete", id});
}

// runc gives the process's stdio to process.user (the uid; the gid stays): its pty, and the
// pipes of a foreground exec, which a non-root process can then reopen (/dev/stdout).
TEST(RuncDropIn, StdioBelongsToTheProcessUser) {
  const std::string owner = "stat -L -c %u:%g /proc/self/fd/0 /proc/self/fd/1";
  std::map<std::string, std::string> run_tty, exec_tty, exec_pipe;
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    Bundle b;
    b.spec().process->args = {"sh", "-c", owner + "; exec sleep 1000"};
    b.spec().process->terminal = true;
    b.spec().process->user.uid = 1000;
    b.spec().process->user.gid = 1000;
    b.write();
    std::string id = "stdio-" + name;
    FdSocket sock;
    auto r = rt({"run", "-d", "--console-socket", sock.path(), "--bundle", b.path(), id});
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    int master = sock.receive(nullptr);
    ASSERT_GE(master, 0) << name;
    run_tty[name] = drain(master, 2000);
    ::close(master);
    FdSocket esock;
    auto e = rt({"exec", "-d", "-t", "-u", "1000", "--console-socket", esock.path(), id, "sh", "-c", owner});
    ASSERT_EQ(e.code, 0) << name << ": " << e.err;
    int emaster = esock.receive(nullptr);
    ASSERT_GE(emaster, 0) << name;
    exec_tty[name] = drain(emaster);
    ::close(emaster);
    auto p = rt({"exec", "-u", "1000", id, "sh", "-c", "stat -L -c %u /proc/self/fd/1; echo via-path > /dev/stdout"});
    EXPECT_EQ(p.code, 0) << name << ": " << p.err;
    exec_pipe[name] = p.out;
    stop_and_reap(rt, id);
  });
  // The pty: the user's, group tty (devpts' gid=5 in the default spec).
  EXPECT_EQ(run_tty["berth"], "1000:5\r\n1000:5\r\n");
  EXPECT_EQ(exec_tty["berth"], "1000:5\r\n1000:5\r\n");
  EXPECT_EQ(exec_pipe["berth"], "1000\nvia-path\n");
  if (have_runc()) {
    EXPECT_EQ(run_tty["runc"], run_tty["berth"]);
    EXPECT_EQ(exec_tty["runc"], exec_tty["berth"]);
    EXPECT_EQ(exec_pipe["runc"], exec_pipe["berth"]);
  }
}

// The first line `argv` writes to a pipe within `ms`, and whether it was still running then
// (it is killed and reaped before returning).
std::pair<std::string, bool> first_line_while_running(const std::vector<std::string>& argv, int ms) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) < 0) return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (text.find('\n') == std::string::npos && std::chrono::steady_clock::now() < end) {
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  bool running = ::waitpid(pid, &status, WNOHANG) == 0;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  ::close(out[0]);
  return {text.substr(0, text.find('\n')), running};
}

// Streaming `events` is read by engines through a pipe: every event must reach it when it
// happens, not when the runtime exits (runc writes each one straight to its stdout).
TEST(RuncDropIn, EventsReachAPipeAsTheyHappen) {
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    Container c(rt, "events-" + name);
    ASSERT_EQ(c.started().code, 0) << c.started().err;
    for (const std::vector<std::string>& flags : {std::vector<std::string>{"--interval", "1s"}, {}}) {
      std::vector<std::string> argv = {rt.binary(), "--root", rt.root(), "events"};
      argv.insert(argv.end(), flags.begin(), flags.end());
      argv.push_back(c.id());
      // runc's first event comes after one interval (default 5s), berth's at once.
      auto [line, running] = first_line_while_running(argv, flags.empty() ? 8000 : 4000);
      EXPECT_TRUE(running) << name << " events " << flags.size();
      EXPECT_EQ(line.rfind("{\"type\":\"stats\",\"id\":\"" + c.id() + "\"", 0), 0u) << name << ": " << line;
    }
  });
}

// runc runs prestart, createRuntime and poststart (all at create in runc 1.1) and a `run`'s
// poststop from the bundle directory, createContainer from the rootfs (before pivot_root),
// startContainer in the container's cwd. Hooks with relative paths depend on it.
TEST(RuncDropIn, HookWorkingDirectories) {
  std::map<std::string, std::map<std::string, std::string>> seen;
  std::map<std::string, std::string> bundles;
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    Bundle b;
    TempDir logs("berth-hook-cwd");
    auto hook = [&](const std::string& kind) {
      spec::Hook h;
      h.path = "/bin/sh";
      h.args = {"sh", "-c", "pwd -P > " + logs.path() + "/" + kind + "; cat > /dev/null"};
      return h;
    };
    spec::Hooks h;
    h.prestart = {hook("prestart")};
    h.create_runtime = {hook("createRuntime")};
    h.create_container = {hook("createContainer")};
    h.poststart = {hook("poststart")};
    h.poststop = {hook("poststop")};
    spec::Hook start;
    start.path = "/bin/sh";
    start.args = {"sh", "-c", "pwd -P > /start-cwd"};
    h.start_container = {start};
    b.spec().hooks = h;
    b.spec().process->cwd = "/tmp";
    b.write();
    auto r = run_in("/", rt, {"run", "--bundle", b.path(), "hookcwd-" + name});
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    for (const char* kind : {"prestart", "createRuntime", "createContainer", "poststart", "poststop"})
      seen[name][kind] = read_text(logs.path() + "/" + kind);
    seen[name]["startContainer"] = read_text(b.rootfs() + "/start-cwd");
    bundles[name] = b.path();
  });
  const std::string& bundle = bundles["berth"];
  EXPECT_EQ(seen["berth"]["prestart"], bundle + "\n");
  EXPECT_EQ(seen["berth"]["createRuntime"], bundle + "\n");
  EXPECT_EQ(seen["berth"]["createContainer"], bundle + "/rootfs\n");
  EXPECT_EQ(seen["berth"]["poststart"], bundle + "\n");
  EXPECT_EQ(seen["berth"]["poststop"], bundle + "\n");
  EXPECT_EQ(seen["berth"]["startContainer"], "/tmp\n");
  if (have_runc()) {
    for (auto& [kind, cwd] : seen["runc"]) {
      std::string relative = cwd.rfind(bundles["runc"], 0) == 0 ? "<bundle>" + cwd.substr(bundles["runc"].size()) : cwd;
      std::string ours = seen["berth"][kind];
      if (ours.rfind(bundle, 0) == 0) ours = "<bundle>" + ours.substr(bundle.size());
      EXPECT_EQ(relative, ours) << kind;
    }
  }
}

// systemd socket activation: fds 3.. are passed when LISTEN_PID is the runtime's own pid,
// and the container sees LISTEN_FDS=<n> and LISTEN_PID=1 (itself); meant for another
// process, they are neither passed nor announced.
TEST(RuncDropIn, SocketActivation) {
  TempDir dir("berth-listen");
  std::string socket_file = dir.path() + "/listener";
  write_text(socket_file, "socket-data\n");
  std::map<std::string, CmdResult> ours, theirs;
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    Bundle b;
    b.script("echo \"fds=$LISTEN_FDS pid=$LISTEN_PID\"; { cat <&3; } 2>/dev/null || echo no-fd-3");
    b.spec().process->env.push_back("LISTEN_FDS=7");  // replaced, as runc appends its own
    b.write();
    auto with = [&](const std::string& listen_pid, const std::string& id) {
      return run_with_fd3({"/bin/sh", "-c", "export LISTEN_PID=" + listen_pid + " LISTEN_FDS=1; exec \"$0\" \"$@\"",
                           rt.binary(), "--root", rt.root(), "run", "--bundle", b.path(), id},
                          socket_file);
    };
    ours[name] = with("$$", "listen-" + name);
    theirs[name] = with("1", "listen2-" + name);
  });
  EXPECT_EQ(ours["berth"].code, 0);
  EXPECT_EQ(ours["berth"].out, "fds=1 pid=1\nsocket-data\n");
  EXPECT_EQ(theirs["berth"].code, 0);
  EXPECT_EQ(theirs["berth"].out, "fds=7 pid=\nno-fd-3\n");
  if (have_runc()) {
    EXPECT_EQ(ours["runc"].out, ours["berth"].out);
    EXPECT_EQ(theirs["runc"].out, theirs["berth"].out);
  }
}

bool stopped(const Runtime& rt, const std::string& id) {
  return rt({"state", id}).out.find("\"status\": \"stopped\"") != std::string::npos;
}

TEST(RuncDropIn, ExecInAStoppedContainer) {
  std::map<std::string, CmdResult> seen;
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    Bundle b;
    b.script("true");
    b.write();
    std::string id = "stopped-" + name;
    auto r = rt({"run", "-d", "--bundle", b.path(), id});
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    ASSERT_TRUE(eventually([&] { return stopped(rt, id); })) << name;
    seen[name] = rt({"exec", id, "true"});
  });
  EXPECT_EQ(seen["berth"].code, 255);
  EXPECT_NE(seen["berth"].err.find("exec failed: cannot exec in a stopped container"), std::string::npos)
      << seen["berth"].err;
  if (have_runc()) {
    EXPECT_EQ(seen["runc"].code, seen["berth"].code);
    EXPECT_NE(seen["runc"].err.find("exec failed: cannot exec in a stopped container"), std::string::npos)
        << seen["runc"].err;
  }
}

// The init exits while execs are joining it: whichever step notices (setns, the clone into
// the dying pid namespace, the sync socket), the answer is the stopped container's text.
// berth only: runc prints its nsexec internals in this race ("failed to open
// /proc/N/ns/ipc", "error executing setns process").
TEST(RuncDropIn, ExecRacingAnExitingInitSaysStopped) {
  Runtime rt;
  std::mutex m;
  std::map<std::string, int> texts;
  int attempts = 0;
  for (int round = 0; round < 8; ++round) {
    Bundle b;
    // From 0.15 s to 0.85 s: a slow build (ASan) must still get some execs in before the
    // exit, or the race is never run (attempts would stay at one per thread).
    b.script("usleep " + std::to_string(150000 + 100000 * round));
    b.write();
    std::string id = "race-" + std::to_string(round);
    auto created = rt({"create", "--bundle", b.path(), id});
    ASSERT_EQ(created.code, 0) << created.err;
    std::atomic<bool> started{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
      threads.emplace_back([&] {
        while (!started) ::usleep(1000);
        for (int i = 0; i < 100; ++i) {
          auto r = rt({"exec", id, "true"});
          std::lock_guard<std::mutex> lock(m);
          ++attempts;
          EXPECT_TRUE(r.code == 0 || r.code == 255 || r.code == 137) << r.code << ": " << r.err;
          if (!r.err.empty()) ++texts[r.err];
          if (r.err.find("cannot exec in a stopped container") != std::string::npos) break;
        }
      });
    EXPECT_EQ(rt({"start", id}).code, 0);
    started = true;
    for (auto& t : threads) t.join();
    rt({"delete", "--force", id});
  }
  for (const auto& [text, n] : texts)
    EXPECT_NE(text.find("exec failed: cannot exec in a stopped container"), std::string::npos)
        << n << " x " << text;
  EXPECT_GT(attempts, 24);
}

}  // namespace
}  // namespace berth::test
