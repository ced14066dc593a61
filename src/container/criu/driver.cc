// Running a CRIU request through CRIU's RPC: `criu swrk <fd>` started by berth, criu_req and
// criu_resp (rpc.h) over a SOCK_SEQPACKET socketpair, notifications answered, CRIU's error
// reporting. The worker gets only its socket, stdio and the request's inherit fds.
#include "container/criu/driver.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "container/criu/config_file.h"
#include "container/criu/rpc.h"
#include "util/fds.h"
#include "util/file.h"
#include "util/owned_pid.h"

namespace berth::container::criu {

Error not_built() {
  return Error::unsupported("berth was built without CRIU support (CRIU's rpc.proto code): checkpoint and restore are unavailable");
}

#ifndef BERTH_HAVE_CRIU

bool built_with_criu() { return false; }

Result<Outcome> execute(const Request&, const std::string&, const Notify&, const Placement&) { return not_built(); }
Status check_lazy_pages(const std::string&) { return not_built(); }

#else

namespace {

// A running `criu swrk`: our end of the socketpair and the worker, killed if still owned.
struct Swrk {
  UniqueFd sock;
  OwnedPid pid;
};

// After fork, before exec: only async-signal-safe calls. The worker waits for its own
// children (a blocked or ignored SIGCHLD would break that) and keeps only `keep` beyond
// stdio: every fd of berth is O_CLOEXEC or closed here.
[[noreturn]] void exec_swrk(const char* binary, const char* fd_arg, const std::vector<int>& keep) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGCHLD, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  for (int fd : keep) ::fcntl(fd, F_SETFD, 0);
  close_fds_except(keep);
  const char* argv[] = {binary, "swrk", fd_arg, nullptr};
  ::execvp(binary, const_cast<char* const*>(argv));
  ::_exit(127);
}

Result<Swrk> start_swrk(const std::string& binary, std::vector<int> keep) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return Error::sys(errno, "criu: socketpair");
  UniqueFd ours(sv[0]), theirs(sv[1]);
  keep.push_back(theirs.get());
  std::string fd_arg = std::to_string(theirs.get());
  pid_t pid = ::fork();
  if (pid < 0) return Error::sys(errno, "criu: fork");
  if (pid == 0) exec_swrk(binary.c_str(), fd_arg.c_str(), keep);
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  return Swrk{std::move(ours), OwnedPid(pid, std::move(pidfd))};
}

Status send_msg(int sock, const std::vector<uint8_t>& msg) {
  ssize_t n;
  do n = ::send(sock, msg.data(), msg.size(), MSG_NOSIGNAL); while (n < 0 && errno == EINTR);
  if (n < 0) return Error::sys(errno, "criu: send the request");
  return ok();
}

struct Message {
  bool eof = false;
  Response resp;
  UniqueFd fd;  // an fd CRIU passed along (the orphan pts master)
};

Result<Message> recv_msg(int sock) {
  std::vector<uint8_t> buf(1 << 16);
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {buf.data(), buf.size()};
  struct msghdr mh = {};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  ssize_t n;
  do n = ::recvmsg(sock, &mh, MSG_CMSG_CLOEXEC); while (n < 0 && errno == EINTR);
  // A worker that exits with our request unread resets the connection: no answer either.
  if (n < 0 && errno != ECONNRESET) return Error::sys(errno, "criu: read the response");
  Message m;
  if (n < 0) {
    m.eof = true;
    return m;
  }
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int fd;
    std::memcpy(&fd, CMSG_DATA(c), sizeof(fd));
    m.fd.reset(fd);
  }
  if (n == 0) {
    m.eof = true;
    return m;
  }
  if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) return Error::generic("criu: response larger than expected");
  BERTH_ASSIGN(m.resp, unpack_response(buf.data(), static_cast<size_t>(n)));
  return m;
}

// The worker ended without answering: it could not be run, or it died.
Error worker_gone(Swrk& w, const std::string& binary) {
  int status = w.pid.wait();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return Error::generic("criu: cannot run " + binary + " swrk");
  return Error::generic("criu: " + binary + " swrk ended without an answer");
}

// One request without options (VERSION, FEATURE_CHECK) to a worker of its own.
Result<Response> ask(const std::string& binary, const std::vector<uint8_t>& req) {
  BERTH_ASSIGN(Swrk w, start_swrk(binary, {}));
  BERTH_TRY(send_msg(w.sock.get(), req));
  BERTH_ASSIGN(Message m, recv_msg(w.sock.get()));
  if (m.eof) return worker_gone(w, binary);
  w.sock.reset();
  w.pid.wait();
  return std::move(m.resp);
}

Error criu_failure(const Request& r, int err, const std::string& errmsg) {
  std::string dir = r.work_dir.empty() ? r.images_dir : r.work_dir;
  std::string log = dir + "/" + r.log_file;
  std::string text = std::string("criu failed: type ") + request_type_name(r.kind) + " errno " + std::to_string(err) +
                     "\nlog file: " + log;
  // In the image (or work) directory, which whoever wrote the image controls: a FIFO or a
  // link planted at the log's name must neither hold us nor be followed.
  auto content = file::read_regular(AT_FDCWD, log, 16u << 20, O_NOFOLLOW);
  std::string first = content ? first_log_error(*content) : "";
  // CRIU quotes what it could not take from its config file: that file may be one it was
  // never meant to read (issue 31 §3), so only the option's key is named.
  if (!first.empty()) {
    text += "\ncriu: " + scrub_config_values(first, r.config_text, r.config_named);
  } else if (!errmsg.empty()) {
    text += "\ncriu: " + scrub_config_values(errmsg, r.config_text, r.config_named);
  } else if (!content) {
    text += "\ncriu: is the criu binary installed and does `criu check` pass?";
  }
  return Error::generic(text);
}

// runc needs CRIU 3.0 at least; the binary says its version over the RPC.
Status check_version(const std::string& binary) {
  BERTH_ASSIGN(auto req, pack_version_request());
  BERTH_ASSIGN(Response resp, ask(binary, req));
  if (!resp.success || resp.version == 0) return Error::generic("criu: " + binary + " did not say its version");
  if (resp.version < 30000)
    return Error::unsupported("CRIU version check failed: need 3.0 or later, have " + std::to_string(resp.version));
  return ok();
}

struct Conversation {
  const Request& r;
  const Notify& notify;
  Outcome out;
  std::optional<Error> notify_error;
};

// CRIU waits for each notification's answer. Ours: the restored terminal's master (sent
// along with "orphan-pts-master") and, for lazy pages, "status-ready" passed on to the
// user's --status-fd as runc does with CRIU 3.15 and later (one \0 byte).
Status on_notify(Conversation& c, const Response& n, UniqueFd fd) {
  if (n.script == "orphan-pts-master") {
    if (!fd) return Error::generic("criu: orphan-pts-master came without a file descriptor");
    c.out.pts_master = std::move(fd);
    return ok();
  }
  if (n.script == "status-ready") {
    if (c.r.status_fd < 0) return ok();
    char zero = 0;
    if (::write(c.r.status_fd, &zero, 1) != 1) return Error::sys(errno, "write to --status-fd " + std::to_string(c.r.status_fd));
    return ok();
  }
  if (!c.notify) return ok();
  return c.notify(n.script, n.pid);
}

Result<Response> converse(Conversation& c, Swrk& w) {
  for (;;) {
    BERTH_ASSIGN(Message m, recv_msg(w.sock.get()));
    if (m.eof) {
      if (c.notify_error) return *c.notify_error;
      // CRIU died without a final answer: its log says why.
      (void)w.pid.wait();
      return criu_failure(c.r, 0, "");
    }
    if (!m.resp.is_notify) return std::move(m.resp);
    Status st = c.notify_error ? ok() : on_notify(c, m.resp, std::move(m.fd));
    if (!st) c.notify_error = std::move(st).error();
    BERTH_ASSIGN(auto ack, pack_notify_ack(!c.notify_error));
    BERTH_TRY(send_msg(w.sock.get(), ack));
  }
}

}  // namespace

bool built_with_criu() { return true; }

Status check_lazy_pages(const std::string& binary) {
  BERTH_ASSIGN(auto req, pack_lazy_pages_check());
  BERTH_ASSIGN(Response resp, ask(binary, req));
  if (!resp.success) return Error::generic("CRIU feature check failed: type FEATURE_CHECK errno " + std::to_string(resp.cr_errno));
  if (!resp.lazy_pages) return Error::unsupported("CRIU is missing features: lazy pages (the kernel has no userfaultfd)");
  return ok();
}

Result<Outcome> execute(const Request& request, const std::string& criu_binary, const Notify& notify,
                        const Placement& place) {
  Request r = request;
  BERTH_TRY(check_version(criu_binary));
  // CRIU opens the image and work directories through /proc/<berth>/fd: close-on-exec is fine.
  UniqueFd images(::open(r.images_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!images) return Error::sys(errno, "open image directory " + r.images_dir);
  UniqueFd work;
  if (!r.work_dir.empty()) {
    work.reset(::open(r.work_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!work) return Error::sys(errno, "open work directory " + r.work_dir);
  }
  // Inherit fds are the worker's own: the same numbers, kept open across its exec.
  RpcFds fds{images.get(), work ? work.get() : -1, {}};
  std::vector<int> keep;
  if (r.config_fd > 2) keep.push_back(r.config_fd);  // config_file is /proc/self/fd/<it>
  for (const auto& i : r.inherit_fds) {
    fds.inherit.push_back(i.fd);
    if (i.fd > 2) keep.push_back(i.fd);
  }
  BERTH_ASSIGN(Swrk w, start_swrk(criu_binary, keep));
  // A failed placement leaves the worker to its OwnedPid (killed and reaped on return).
  if (place) BERTH_TRY(place(w.pid.pid(), r));
  BERTH_ASSIGN(auto req, pack_request(r, fds));
  BERTH_TRY(send_msg(w.sock.get(), req));
  Conversation c{r, notify, {}, std::nullopt};
  BERTH_ASSIGN(Response resp, converse(c, w));
  w.sock.reset();
  (void)w.pid.wait();
  if (c.notify_error) return *c.notify_error;
  if (!resp.success) return criu_failure(r, resp.cr_errno, resp.cr_errmsg);
  if (r.kind == Kind::kRestore) c.out.pid = resp.pid;
  return std::move(c.out);
}

#endif

}  // namespace berth::container::criu
