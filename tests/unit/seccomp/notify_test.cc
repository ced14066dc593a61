// SCMP_ACT_NOTIFY end to end (a child loads the filter and sends the listener to a socket
// in the test, the test answers the notifications) and the listener message's format.
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <cstring>

#include "seccomp/seccomp.h"
#include "unit/seccomp/seccomp_test_util.h"
#include "util/json.h"
#include "util/owned_pid.h"
#include "util/unique_fd.h"

namespace berth::seccomp {
namespace {

using namespace testing;

constexpr char kState[] = R"({"ociVersion":"1.3.0","id":"c1","status":"creating","pid":0,"bundle":"/b"})";

UniqueFd listen_on(const std::string& path) {
  UniqueFd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (!s || bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(s.get(), 4) != 0)
    ADD_FAILURE() << "listen on " << path << ": " << strerror(errno);
  return s;
}

bool readable(int fd, int timeout_ms = 10000) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

struct Received {
  std::string payload;
  std::vector<int> fds;  // owned by the caller
};

// Accepts one connection and reads it to EOF, collecting SCM_RIGHTS fds.
Received receive_one(int listener) {
  Received r;
  if (!readable(listener)) {
    ADD_FAILURE() << "no connection on the listener socket";
    return r;
  }
  UniqueFd conn(accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
  if (!conn) {
    ADD_FAILURE() << "accept: " << strerror(errno);
    return r;
  }
  while (readable(conn.get())) {
    char buf[4096];
    char control[CMSG_SPACE(4 * sizeof(int))];
    iovec iov{buf, sizeof buf};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = recvmsg(conn.get(), &msg, MSG_CMSG_CLOEXEC);
    if (n <= 0) break;
    r.payload.append(buf, static_cast<size_t>(n));
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        r.fds.push_back(fd);
      }
    }
  }
  return r;
}

std::string string_at(yajl_val root, std::vector<const char*> path) {
  path.push_back(nullptr);
  yajl_val v = yajl_tree_get(root, path.data(), yajl_t_string);
  return v ? YAJL_GET_STRING(v) : "<missing>";
}

long long integer_at(yajl_val root, std::vector<const char*> path) {
  path.push_back(nullptr);
  yajl_val v = yajl_tree_get(root, path.data(), yajl_t_number);
  return v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : -1;
}

void expect_message(const std::string& payload, pid_t pid, const char* metadata) {
  auto doc = json::Document::parse(payload, "listener message");
  ASSERT_TRUE(doc) << doc.error().message() << "\n" << payload;
  yajl_val root = doc->root();
  ASSERT_TRUE(YAJL_IS_OBJECT(root)) << payload;
  EXPECT_EQ(string_at(root, {"ociVersion"}), "1.3.0");
  const char* fds_path[] = {"fds", nullptr};
  yajl_val fds = yajl_tree_get(root, fds_path, yajl_t_array);
  ASSERT_TRUE(fds && YAJL_GET_ARRAY(fds)->len == 1) << payload;
  EXPECT_STREQ(YAJL_GET_STRING(YAJL_GET_ARRAY(fds)->values[0]), "seccompFd");
  EXPECT_EQ(integer_at(root, {"pid"}), pid);
  if (metadata)
    EXPECT_EQ(string_at(root, {"metadata"}), metadata);
  else
    EXPECT_EQ(payload.find("\"metadata\""), std::string::npos) << "empty metadata is omitted, as runc does";
  EXPECT_EQ(string_at(root, {"state", "id"}), "c1");
  EXPECT_EQ(string_at(root, {"state", "status"}), "creating");
}

TEST(SeccompNotify, AgentAnswersTheChildsSyscalls) {
  TempDir dir;
  std::string sock_path = dir.path() + "/agent.sock";
  UniqueFd listener = listen_on(sock_path);
  spec::Seccomp p = profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_NOTIFY")});
  p.listener_path = sock_path;
  p.listener_metadata = "agent-data";
  auto prog = compile(p);
  ASSERT_TRUE(prog) << prog.error().message();
  std::string target = dir.path() + "/made-by-continue";

  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(kChildSetupFailed);
    auto fd = load(*prog, p);
    if (!fd || !fd->valid()) _exit(kChildLoadFailed);
    if (!send_to_listener(fd->get(), p, kState, getpid())) _exit(203);
    fd->reset();
    // First answer: an error chosen by the agent; second: "continue", the real mkdir.
    if (!(syscall(SYS_mkdir, target.c_str(), 0700) == -1 && errno == EXDEV)) _exit(1);
    if (syscall(SYS_mkdir, target.c_str(), 0700) != 0) _exit(2);
    _exit(0);
  }
  ASSERT_GT(pid, 0);
  OwnedPid child(pid, UniqueFd());

  Received got = receive_one(listener.get());
  ASSERT_EQ(got.fds.size(), 1u) << got.payload;
  UniqueFd notify(got.fds[0]);
  expect_message(got.payload, pid, "agent-data");

  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(readable(notify.get())) << "no notification, round " << round;
    seccomp_notif req;
    std::memset(&req, 0, sizeof req);  // the kernel insists on a zeroed buffer
    ASSERT_EQ(ioctl(notify.get(), SECCOMP_IOCTL_NOTIF_RECV, &req), 0) << strerror(errno);
    EXPECT_EQ(req.pid, static_cast<uint32_t>(pid));
    EXPECT_EQ(req.data.nr, SYS_mkdir);
    seccomp_notif_resp resp;
    std::memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    if (round == 0)
      resp.error = -EXDEV;
    else
      resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ASSERT_EQ(ioctl(notify.get(), SECCOMP_IOCTL_NOTIF_SEND, &resp), 0) << strerror(errno);
  }
  int status = child.wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe_status(status);
  struct stat st {};
  EXPECT_EQ(stat(target.c_str(), &st), 0) << "the continued mkdir did not happen";
}

TEST(SeccompNotify, MessageWithoutMetadata) {
  TempDir dir;
  std::string sock_path = dir.path() + "/agent.sock";
  UniqueFd listener = listen_on(sock_path);
  spec::Seccomp p = profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_NOTIFY")});
  p.listener_path = sock_path;
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  UniqueFd r(pipe_fds[0]), w(pipe_fds[1]);
  // The listen backlog takes the connection, the socket buffer the message.
  auto st = send_to_listener(r.get(), p, kState, 4321);
  ASSERT_TRUE(st) << st.error().message();
  Received got = receive_one(listener.get());
  ASSERT_EQ(got.fds.size(), 1u);
  UniqueFd passed(got.fds[0]);
  expect_message(got.payload, 4321, nullptr);
  // The fd that arrived is the one sent: what goes into the pipe comes out of it.
  ASSERT_EQ(write(w.get(), "k", 1), 1);
  char c = 0;
  EXPECT_EQ(read(passed.get(), &c, 1), 1);
  EXPECT_EQ(c, 'k');
}

TEST(SeccompNotify, SendErrors) {
  TempDir dir;
  spec::Seccomp p = profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_NOTIFY")});
  p.listener_path = dir.path() + "/nobody-listens.sock";
  auto st = send_to_listener(0, p, kState, 1);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().err(), ENOENT);
  EXPECT_NE(st.error().message().find("send seccomp listener fd: failed to connect with seccomp agent: connect to " + p.listener_path), std::string::npos)
      << st.error().message();

  UniqueFd listener = listen_on(p.listener_path);
  st = send_to_listener(0, p, "[1,2]", 1);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("not a JSON object"), std::string::npos) << st.error().message();

  p.listener_path = "/" + std::string(200, 'x');
  st = send_to_listener(0, p, kState, 1);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind(), ErrorKind::kInvalidSpec);
}

TEST(SeccompNotify, LoadReturnsNoFdWithoutNotifyRules) {
  spec::Seccomp p = profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_ERRNO", 42)});
  EXPECT_FALSE(uses_notify(p));
  auto prog = compile(p);
  ASSERT_TRUE(prog);
  int status = run_child([&] {
    auto fd = load(*prog, p);
    if (!fd) return kChildLoadFailed;
    return fd->valid() ? 1 : 0;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe_status(status);
}

TEST(SeccompNotify, ListenerWithTsyncAndWaitKillableRecv) {
  // TSYNC with a listener needs TSYNC_ESRCH, which load() adds; WAIT_KILLABLE_RECV needs
  // the listener it modifies.
  spec::Seccomp p = profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_NOTIFY")});
  p.flags = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"};
  auto prog = compile(p);
  ASSERT_TRUE(prog);
  int status = run_child([&] {
    auto fd = load(*prog, p);
    if (!fd) {
      fprintf(stderr, "%s\n", fd.error().message().c_str());
      return kChildLoadFailed;
    }
    return fd->valid() ? 0 : 1;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe_status(status);
}

}  // namespace
}  // namespace berth::seccomp
