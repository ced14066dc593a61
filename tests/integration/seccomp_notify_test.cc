// SCMP_ACT_NOTIFY end to end: create hands the listener to linux.seccomp.listenerPath with
// the container state, exec hands over its own, and the agent (tests/support/
// seccomp_listener.cc) answers the container's mkdir by faking success. An absent agent
// fails create cleanly. runc runs the same container where installed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "support/exec_helpers.h"

namespace berth::test {
namespace {

spec::Seccomp notify_profile(const std::string& socket) {
  spec::Seccomp s;
  s.default_action = "SCMP_ACT_ALLOW";
  s.architectures = {"SCMP_ARCH_X86_64"};
  s.listener_path = socket;
  s.listener_metadata = "meta-berth-test";
  spec::Syscall r;
  r.names = {"mkdir", "mkdirat"};
  r.action = "SCMP_ACT_NOTIFY";
  s.syscalls = {r};
  return s;
}

struct Agent {
  TempDir dir{"berth-agent"};
  std::string socket = dir.path() + "/agent.sock";
  std::string log = dir.path() + "/agent.log";
  std::unique_ptr<Background> process;
  // Waits for the agent's socket; the agent exits once `connections` listeners are gone.
  bool start(int connections) {
    process = std::make_unique<Background>(
        std::vector<std::string>{BERTH_SECCOMP_LISTENER, socket, log, std::to_string(connections), "30"}, 40);
    struct stat st;
    return eventually([&] { return ::stat(socket.c_str(), &st) == 0; });
  }
};

// The faked mkdir "succeeds" without a directory appearing: only the agent answered it.
const char* kProbe = "mkdir /tmp/n && echo made; test -d /tmp/n || echo faked";

void expect_notify_end_to_end(const Runtime& rt, const std::string& id, bool nnp) {
  Agent agent;
  ASSERT_TRUE(agent.start(2));
  Container c(rt, id, [&](spec::Spec& s) {
    s.linux->seccomp = notify_profile(agent.socket);
    s.process->no_new_privileges = nnp;
  });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  int init = c.pid();
  auto r = c.exec({}, {"sh", "-c", kProbe});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "made\nfaked\n") << rt.binary();
  EXPECT_EQ(rt({"delete", "--force", id}).code, 0);
  EXPECT_EQ(agent.process->wait().code, 0) << "the agent got two listeners: " << agent.process->wait().err;
  std::string log = read_text(agent.log);
  EXPECT_NE(log.find("\"fds\":[\"seccompFd\"]"), std::string::npos) << log;
  EXPECT_NE(log.find("\"metadata\":\"meta-berth-test\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"pid\":" + std::to_string(init) + ","), std::string::npos) << "the init's own message: " << log;
  EXPECT_NE(log.find("\"id\":\"" + id + "\""), std::string::npos) << log;
  EXPECT_NE(log.find("nr=83\n"), std::string::npos) << "the agent answered mkdir (x86_64 nr 83): " << log;
}

TEST(SeccompNotify, ListenerReachesTheAgentFromCreateAndExec) {
  Runtime berth;
  expect_notify_end_to_end(berth, "b-notify-nnp", true);
  expect_notify_end_to_end(berth, "b-notify-caps", false);
  if (have_runc()) expect_notify_end_to_end(Runtime(runc_binary()), "r-notify", true);
}

TEST(SeccompNotify, StateMessagesNameTheStatus) {
  Runtime berth;
  Agent agent;
  ASSERT_TRUE(agent.start(2));
  Container c(berth, "b-notify-state", [&](spec::Spec& s) { s.linux->seccomp = notify_profile(agent.socket); });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  EXPECT_EQ(c.exec({}, {"true"}).code, 0);
  EXPECT_EQ(berth({"delete", "--force", "b-notify-state"}).code, 0);
  agent.process->wait();
  std::string log = read_text(agent.log);
  size_t creating = log.find("\"status\":\"creating\"");
  size_t running = log.find("\"status\":\"running\"");
  EXPECT_NE(creating, std::string::npos) << log;
  EXPECT_NE(running, std::string::npos) << log;
  EXPECT_LT(creating, running) << "create's message first, then exec's";
}

TEST(SeccompNotify, AbsentAgentFailsCreate) {
  Runtime berth;
  TempDir d;
  Bundle b;
  b.spec().linux->seccomp = notify_profile(d.path() + "/nobody.sock");
  b.spec().linux->cgroups_path = "/berth-test/b-notify-absent";
  b.write();
  auto r = berth({"create", "--bundle", b.path(), "b-notify-absent"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("send seccomp listener fd: failed to connect with seccomp agent: connect to " + d.path() + "/nobody.sock: no such file or directory"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(berth({"list", "-q"}).out, "") << "nothing left of the failed create";
  for (const auto& line : mount_lines()) EXPECT_EQ(line.find(b.path()), std::string::npos) << "left mounted: " << line;
  struct stat st;
  EXPECT_NE(::stat("/sys/fs/cgroup/pids/berth-test/b-notify-absent", &st), 0) << "its cgroup is removed";
}

}  // namespace
}  // namespace berth::test
