// Hooks (order, namespace, stdin state, failure handling), the console socket hand-off with
// a working pty, pidfd socket, preserve-fds, and create failures that leave nothing behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/harness.h"

namespace berth::test {
namespace {

spec::Hook logging_hook(const std::string& log, const std::string& name) {
  // Appends "<name> <status from stdin>" to the log; runs on the host (or in the container's
  // mount namespace before pivot for createContainer, where host paths are still visible).
  spec::Hook h;
  h.path = "/bin/sh";
  h.args = {"sh", "-c", "read -r s; st=$(echo \"$s\" | sed -n 's/.*\"status\":\"\\([a-z]*\\)\".*/\\1/p'); echo \"" +
                            name + " $st\" >> " + log};
  return h;
}

// Every hook that runs before the process is reaped gets the same pid: the init's, as the
// host sees it (createContainer runs inside the container's pid namespace, where it is 1).
TEST(Hooks, CreateContainerGetsTheHostPid) {
  Runtime rt;
  Bundle b;
  std::string log = b.path() + "/pids.log";
  auto pid_hook = [&](const std::string& name) {
    spec::Hook h;
    h.path = "/bin/sh";
    h.args = {"sh", "-c", "read -r s; p=$(echo \"$s\" | sed -n 's/.*\"pid\":\\([0-9]*\\).*/\\1/p'); echo \"" + name +
                              " $p\" >> " + log};
    return h;
  };
  spec::Hooks h;
  h.create_runtime = {pid_hook("createRuntime")};
  h.create_container = {pid_hook("createContainer")};
  b.spec().hooks = h;
  b.script("true");
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "h-pid"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream in(file_text(log));
  std::string n1, p1, n2, p2;
  in >> n1 >> p1 >> n2 >> p2;
  EXPECT_EQ(n1 + " " + n2, "createRuntime createContainer");
  EXPECT_NE(p1, "1");
  EXPECT_EQ(p1, p2) << file_text(log);
}

TEST(Hooks, RunInOrderWithStateOnStdin) {
  Runtime rt;
  Bundle b;
  std::string log = b.path() + "/hooks.log";
  spec::Hooks h;
  h.prestart = {logging_hook(log, "prestart")};
  h.create_runtime = {logging_hook(log, "createRuntime")};
  h.create_container = {logging_hook(log, "createContainer")};
  h.poststart = {logging_hook(log, "poststart")};
  h.poststop = {logging_hook(log, "poststop")};
  // startContainer runs inside the container after pivot: its binary is the container's.
  spec::Hook sc;
  sc.path = "/bin/sh";
  sc.args = {"sh", "-c", "cat > /started-state"};
  h.start_container = {sc};
  b.spec().hooks = h;
  b.script("sleep 0.2; cat /started-state");
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "h1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"status\":\"created\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"id\":\"h1\""), std::string::npos) << r.out;
  EXPECT_EQ(file_text(log), "prestart created\ncreateRuntime created\ncreateContainer created\npoststart running\npoststop stopped\n");
}

TEST(Hooks, FailingCreateRuntimeHookFailsCreateAndLeavesNothing) {
  Runtime rt;
  Bundle b;
  spec::Hooks h;
  spec::Hook bad;
  bad.path = "/bin/sh";
  bad.args = {"sh", "-c", "echo nope >&2; exit 3"};
  h.create_runtime = {bad};
  b.spec().hooks = h;
  b.write();
  auto mounts = mount_lines();
  auto r = rt({"create", "--bundle", b.path(), "h2"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("error running createRuntime hook #0: error running hook: exit status 3, stdout: , stderr: nope"), std::string::npos) << r.err;
  EXPECT_EQ(rt({"list", "-q"}).out, "");
  EXPECT_EQ(mount_lines(), mounts);
  EXPECT_FALSE(std::filesystem::exists("/sys/fs/cgroup/memory" + b.spec().linux->cgroups_path));
}

TEST(Hooks, FailingPoststartIsOnlyAWarning) {
  Runtime rt;
  Bundle b;
  spec::Hooks h;
  spec::Hook bad;
  bad.path = "/bin/false";
  h.poststart = {bad};
  b.spec().hooks = h;
  b.script("echo ran");
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "h3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_NE(r.err.find("level=warning"), std::string::npos) << r.err;
}

class ConsoleSocket {
 public:
  explicit ConsoleSocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 1);
  }
  ~ConsoleSocket() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  // Accepts the runtime's connection and takes the one fd it sends.
  int receive(std::string* name) {
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    char buf[256] = {};
    iovec iov = {buf, sizeof buf - 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(c, &m, 0);
    ::close(c);
    int fd = -1;
    if (n > 0 && CMSG_FIRSTHDR(&m)) std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    if (name) *name = std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
    return fd;
  }

 private:
  std::string path_;
  int fd_;
};

std::string read_until(int fd, const std::string& marker, int ms = 5000) {
  std::string out;
  while (out.find(marker) == std::string::npos) {
    pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) break;
    char buf[512];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

TEST(Console, SocketReceivesAWorkingPty) {
  Runtime rt;
  Bundle b;
  b.spec().process->terminal = true;
  b.spec().process->console_size = spec::Box{30, 100};
  b.script("stty size; tty; read line; echo got:$line");
  b.write();
  ConsoleSocket sock(b.path() + "/console.sock");
  auto c = rt({"create", "--bundle", b.path(), "--console-socket", b.path() + "/console.sock", "t1"});
  ASSERT_EQ(c.code, 0) << c.err;
  std::string name;
  int master = sock.receive(&name);
  ASSERT_GE(master, 0);
  EXPECT_EQ(name.rfind("/dev/pts/", 0), 0u) << name;
  ASSERT_EQ(rt({"start", "t1"}).code, 0);
  std::string out = read_until(master, "\n/dev/");
  EXPECT_NE(out.find("30 100"), std::string::npos) << out;
  ASSERT_EQ(::write(master, "hello\n", 6), 6);
  out = read_until(master, "got:hello");
  EXPECT_NE(out.find("got:hello"), std::string::npos) << out;
  ::close(master);
}

TEST(Console, TerminalWithoutSocketOnDetachIsRefused) {
  Runtime rt;
  Bundle b;
  b.spec().process->terminal = true;
  b.write();
  auto r = rt({"create", "--bundle", b.path(), "t2"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot allocate tty if berth will detach without setting console socket"), std::string::npos) << r.err;
}

TEST(Fds, PreserveFdsAndNoLeaks) {
  Runtime rt;
  Bundle b;
  b.script("ls /proc/self/fd | sort -n | tr '\\n' ' '; cat <&3");
  b.write();
  std::string data = b.path() + "/data";
  { std::ofstream(data) << "from-fd-3"; }
  // fd 3 of berth becomes fd 3 of the container; nothing else past stdio leaks in.
  auto r = run_cmd({"/bin/sh", "-c", "exec 3<" + data + "; exec " + rt.binary() + " --root " + rt.root() +
                                         " run --preserve-fds 1 --bundle " + b.path() + " f1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0 1 2 3 4 from-fd-3") << "fd 4 is ls's own directory fd";
}

TEST(Failure, BadConfigsLeaveNothingBehind) {
  struct Case {
    const char* what;
    std::function<void(Bundle&)> edit;
    const char* error;
  };
  std::vector<Case> cases = {
      {"missing rootfs", [](Bundle& b) { b.spec().root->path = "/nonexistent-rootfs"; }, "nonexistent-rootfs"},
      {"unknown namespace path",
       [](Bundle& b) {
         for (auto& n : b.spec().linux->namespaces)
           if (n.type == "network") n.path = "/var/run/netns/berth-does-not-exist";
       },
       "berth-does-not-exist"},
      {"namespace path of the wrong type",
       [](Bundle& b) {
         for (auto& n : b.spec().linux->namespaces)
           if (n.type == "network") n.path = "/proc/self/ns/ipc";
       },
       "is not a network namespace"},
      {"missing executable", [](Bundle& b) { b.spec().process->args = {"/no/such/binary"}; },
       "exec: \\\"/no/such/binary\\\": stat /no/such/binary: no such file or directory"},
      {"not executable", [](Bundle& b) { b.spec().process->args = {"/etc/passwd"}; },
       "exec: \\\"/etc/passwd\\\": permission denied"},
      {"bad rlimit (hard raise without CAP_SYS_RESOURCE is fine as root; an unknown one is not)",
       [](Bundle& b) { b.spec().process->rlimits = {{"RLIMIT_BOGUS", 1, 1}}; }, "process.rlimits[0].type"},
      {"bad sysctl", [](Bundle& b) { b.spec().linux->sysctl["kernel.pid_max"] = "1"; },
       "is not in a separate kernel namespace"},
  };
  for (const auto& c : cases) {
    Runtime rt;
    Bundle b;
    c.edit(b);
    b.write();
    auto mounts = mount_lines();
    auto r = rt({"create", "--bundle", b.path(), "bad"});
    EXPECT_EQ(r.code, 1) << c.what;
    EXPECT_NE(r.err.find(c.error), std::string::npos) << c.what << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_EQ(rt({"list", "-q"}).out, "") << c.what;
    EXPECT_TRUE(std::filesystem::is_empty(rt.root())) << c.what;
    EXPECT_EQ(mount_lines(), mounts) << c.what;
    EXPECT_FALSE(std::filesystem::exists("/sys/fs/cgroup/memory" + b.spec().linux->cgroups_path)) << c.what;
  }
}

}  // namespace
}  // namespace berth::test
