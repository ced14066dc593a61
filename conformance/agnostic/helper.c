// Host-side helper of conformance/agnostic.sh, for what a shell cannot do itself:
//   reap CMD [ARG...]     run CMD as the child of a child subreaper: the inits of
//                         detached containers are adopted (and reaped) here, since PID 1
//                         may reap nothing. When CMD exits, any process still left under
//                         us is named, killed and counted as a failure (exit 1).
//   console SOCKET [-t SECONDS] [-w TEXT | -s TEXT | -e]...
//                         listen on SOCKET (the runtime's --console-socket), take the one
//                         fd the runtime sends with SCM_RIGHTS, check it is a pty master,
//                         then run the steps in order: -w waits until TEXT has appeared in
//                         the pty output, -s writes TEXT (\n, \r, \\ escapes), -e waits for
//                         the end of output (EOF or EIO once every slave fd is closed).
//                         Everything read is copied to stdout; notes go to stderr.
//                         Exit: 0 all steps done, 3 no connection, 4 no fd / not one fd,
//                         5 not a pty master, 6 a step timed out or the output ended early,
//                         2 usage or system error.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static pid_t main_child;

static void forward(int sig) {
  if (main_child > 0) kill(main_child, sig);
}

// Pids of our live children (adopted or not), from /proc/self/task/*/children.
static int children(pid_t* out, int max) {
  int n = 0;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  int pid;
  while (n < max && fscanf(f, "%d", &pid) == 1) out[n++] = pid;
  fclose(f);
  return n;
}

static int do_reap(char** argv) {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    perror("helper reap: PR_SET_CHILD_SUBREAPER");
    return 2;
  }
  main_child = fork();
  if (main_child < 0) {
    perror("helper reap: fork");
    return 2;
  }
  if (main_child == 0) {
    execvp(argv[0], argv);
    fprintf(stderr, "helper reap: exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  int code = 2;
  for (;;) {
    int st;
    pid_t p = waitpid(-1, &st, 0);
    if (p < 0 && errno == EINTR) continue;
    if (p < 0) break;
    if (p == main_child) {
      code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      break;
    }
  }
  // Whatever is left was started by the run and outlived it: a leak. Name it, end it.
  pid_t left[256];
  int n = children(left, 256);
  for (int i = 0; i < n; i++) {
    char path[64], comm[64] = "?";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)left[i]);
    FILE* f = fopen(path, "r");
    if (f) {
      if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
      fclose(f);
    }
    fprintf(stderr, "helper reap: process %d (%s) outlived the run; killing it\n", (int)left[i], comm);
    kill(left[i], SIGKILL);
  }
  while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
  }
  if (n > 0 && code == 0) code = 1;
  return code;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// Waits for fd to become readable until the deadline; 1 ready, 0 timed out.
static int wait_in(int fd, double deadline) {
  for (;;) {
    double left = deadline - now();
    if (left <= 0) return 0;
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, (int)(left * 1000) + 1);
    if (r > 0) return 1;
    if (r < 0 && errno != EINTR) return 0;
  }
}

static void unescape(const char* in, char* out) {
  for (; *in; in++) {
    if (*in == '\\' && in[1]) {
      in++;
      *out++ = *in == 'n' ? '\n' : *in == 'r' ? '\r' : *in == 't' ? '\t' : *in;
    } else {
      *out++ = *in;
    }
  }
  *out = 0;
}

static int do_console(int argc, char** argv) {
  if (argc < 1) return 2;
  const char* sock_path = argv[0];
  double timeout = 10;
  int first_step = 1;
  if (argc > 2 && strcmp(argv[1], "-t") == 0) {
    timeout = atof(argv[2]);
    first_step = 3;
  }
  // Bind under a temporary name and rename once listening: the caller waits for SOCKET
  // to exist, and a runtime connecting then can never see ECONNREFUSED.
  int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  char tmp[sizeof a.sun_path];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", sock_path) >= (int)sizeof tmp) {
    fprintf(stderr, "helper console: socket path too long\n");
    return 2;
  }
  strcpy(a.sun_path, tmp);
  unlink(tmp);
  if (ls < 0 || bind(ls, (struct sockaddr*)&a, sizeof a) != 0 || listen(ls, 1) != 0 || rename(tmp, sock_path) != 0) {
    perror("helper console: socket");
    return 2;
  }
  double deadline = now() + timeout;
  if (!wait_in(ls, deadline)) {
    fprintf(stderr, "helper console: no connection within %.0f s\n", timeout);
    return 3;
  }
  int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
  close(ls);
  unlink(sock_path);
  if (c < 0) {
    perror("helper console: accept");
    return 3;
  }
  char name[256] = {0};
  struct iovec iov = {name, sizeof name - 1};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(4 * sizeof(int))];
  } control;
  struct msghdr m;
  memset(&m, 0, sizeof m);
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control.buf;
  m.msg_controllen = sizeof control.buf;
  if (!wait_in(c, deadline) || recvmsg(c, &m, MSG_CMSG_CLOEXEC) < 0) {
    fprintf(stderr, "helper console: no message on the connection\n");
    return 4;
  }
  close(c);
  struct cmsghdr* h = CMSG_FIRSTHDR(&m);
  if (!h || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS || h->cmsg_len != CMSG_LEN(sizeof(int))) {
    fprintf(stderr, "helper console: the message does not carry exactly one fd (SCM_RIGHTS)\n");
    return 4;
  }
  int fd;
  memcpy(&fd, CMSG_DATA(h), sizeof fd);
  // A pty master answers TIOCGPTN (its slave's number); a slave or another file does not.
  unsigned int ptn;
  if (ioctl(fd, TIOCGPTN, &ptn) != 0) {
    fprintf(stderr, "helper console: the fd is not a pty master (TIOCGPTN: %s)\n", strerror(errno));
    return 5;
  }
  fprintf(stderr, "helper console: got a pty master (host slave /dev/pts/%u, message \"%s\")\n", ptn, name);
  static char seen[1 << 16];
  size_t len = 0;
  size_t mark = 0;  // a -w looks only at output after the previous -w's match
  int ended = 0;
  for (int i = first_step; i < argc; i++) {
    const char* op = argv[i];
    if (strcmp(op, "-s") == 0 && i + 1 < argc) {
      char text[4096];
      unescape(argv[++i], text);
      if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        perror("helper console: write");
        return 6;
      }
      continue;
    }
    const char* want = NULL;
    if (strcmp(op, "-w") == 0 && i + 1 < argc) {
      want = argv[++i];
    } else if (strcmp(op, "-e") != 0) {
      fprintf(stderr, "helper console: unknown step %s\n", op);
      return 2;
    }
    for (;;) {
      char* hit = want ? memmem(seen + mark, len - mark, want, strlen(want)) : NULL;
      if (hit) {
        mark = (size_t)(hit - seen) + strlen(want);
        break;
      }
      if (ended) {
        if (!want) break;
        fprintf(stderr, "helper console: output ended before \"%s\"\n", want);
        return 6;
      }
      if (!wait_in(fd, deadline)) {
        fprintf(stderr, "helper console: timed out waiting for %s%s%s\n", want ? "\"" : "the end of output",
                want ? want : "", want ? "\"" : "");
        return 6;
      }
      char buf[4096];
      ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        ended = 1;  // EIO: no slave fd left open
        continue;
      }
      fwrite(buf, 1, (size_t)n, stdout);
      fflush(stdout);
      if (len + (size_t)n > sizeof seen) {  // keep the tail
        size_t drop = len + (size_t)n - sizeof seen;
        memmove(seen, seen + drop, len - drop);
        len -= drop;
        mark = mark > drop ? mark - drop : 0;
      }
      memcpy(seen + len, buf, (size_t)n);
      len += (size_t)n;
    }
  }
  close(fd);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[1], "reap") == 0) return do_reap(argv + 2);
  if (argc >= 3 && strcmp(argv[1], "console") == 0) return do_console(argc - 2, argv + 2);
  fprintf(stderr, "usage: %s reap CMD [ARG...] | console SOCKET [-t SECONDS] [-w TEXT|-s TEXT|-e]...\n", argv[0]);
  return 2;
}
