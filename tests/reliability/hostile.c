// hostile: the payload of the hostile-container tests, built static so that it runs in the
// busybox rootfs. It watches the container's /proc for processes named "berth" (the exec
// tenant of `berth exec`, visible in the container's pid namespace until it execs the
// command) and attacks each one it sees, once:
//   ptrace  PTRACE_ATTACH
//   read    /proc/<pid>/environ, and where /proc/<pid>/fd/* lead (readlink, open)
//   exe     /proc/<pid>/exe opened O_PATH, then reopened for writing (CVE-2019-5736) until
//           the stop file appears; a write puts back the byte that is there
// First it makes the same attack on a process of its own (the control: the attack works on
// an ordinary process here), then writes "ready". One line per result goes to OUT:
//   control <mode> ok|failed <errno>
//   seen <pid>
//   denied <pid> <what> <errno>
//   leaked <pid> <what> [canary]   the attack worked while the target was still berth
//   late <pid> <what>              it worked, but the target had become the command
// Runs until STOP exists or SECONDS have passed. Usage: hostile MODE OUT STOP SECONDS
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SEEN 4096
#define MAX_EXE 64

static FILE* out;
static const char* mode;
static pid_t seen[MAX_SEEN];
static int nseen;
static int exe_fds[MAX_EXE];
static pid_t exe_pids[MAX_EXE];
static int nexe;

static void comm_of(pid_t pid, char* buf, size_t len) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/comm", pid);
  buf[0] = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, len - 1);
  close(fd);
  buf[n > 0 ? n : 0] = 0;
  char* nl = strchr(buf, '\n');
  if (nl) *nl = 0;
}

static int is_berth(pid_t pid) {
  char c[64];
  comm_of(pid, c, sizeof c);
  return strcmp(c, "berth") == 0;
}

// An attack worked: was the target still berth when it did?
static void worked(pid_t pid, const char* what, int still_berth, int canary) {
  fprintf(out, "%s %d %s%s\n", still_berth ? "leaked" : "late", pid, what, canary ? " canary" : "");
}

static int attack_ptrace(pid_t pid, int report) {
  if (ptrace(PTRACE_ATTACH, pid, 0, 0) < 0) {
    if (report) fprintf(out, "denied %d ptrace %d\n", pid, errno);
    return -errno;
  }
  int st;
  waitpid(pid, &st, __WALL);
  if (report) worked(pid, "ptrace", is_berth(pid), 0);  // stopped: its name cannot change
  ptrace(PTRACE_DETACH, pid, 0, 0);
  return 0;
}

static int read_environ(pid_t pid, int report) {
  char path[64], buf[65536];
  snprintf(path, sizeof path, "/proc/%d/environ", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
  int err = errno;
  if (fd >= 0) close(fd);
  if (n < 0) {
    if (report) fprintf(out, "denied %d environ %d\n", pid, err);
    return -err;
  }
  int canary = 0;
  buf[n] = 0;
  for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1) {
    if (strncmp(buf + i, "BERTH_HOSTILE_CANARY=", 21) == 0) canary = 1;
  }
  if (report && n > 0) worked(pid, "environ", is_berth(pid), canary);
  return (int)n;
}

// The fd numbers themselves may be listed (the directory belongs to root, as we are): what
// must stay out of reach is where they lead, through readlink or an open of the magic link.
static int follow_fds(pid_t pid, int report) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd", pid);
  DIR* d = opendir(path);
  if (!d) {
    if (report) fprintf(out, "denied %d fd-list %d\n", pid, errno);
    return -errno;
  }
  int followed = 0, err = ENOENT;
  for (struct dirent* e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char link[384], target[256];
    snprintf(link, sizeof link, "%s/%s", path, e->d_name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0) err = errno;
    int fd = open(link, O_PATH | O_CLOEXEC);
    if (fd < 0) err = errno;
    else close(fd);
    followed += n >= 0 || fd >= 0;
  }
  closedir(d);
  if (!report) return followed > 0 ? followed : -err;
  if (followed) worked(pid, "fd-link", is_berth(pid), 0);
  else fprintf(out, "denied %d fd-link %d\n", pid, err);
  return followed > 0 ? followed : -err;
}

static int open_exe(pid_t pid, int report) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/exe", pid);
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (report) fprintf(out, "denied %d exe %d\n", pid, errno);
    return -errno;
  }
  int still = is_berth(pid);
  if (!report) {
    close(fd);
    return 0;
  }
  worked(pid, "exe-open", still, 0);
  if (still && nexe < MAX_EXE) exe_pids[nexe] = pid, exe_fds[nexe++] = fd;
  else close(fd);
  return 0;
}

// CVE-2019-5736's second step: once the runtime has exited, its binary is no longer busy.
static void try_write_exes(void) {
  for (int i = 0; i < nexe; ++i) {
    if (exe_fds[i] < 0) continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", exe_fds[i]);
    int w = open(path, O_WRONLY | O_CLOEXEC);
    if (w < 0) continue;
    char b;
    if (pread(w, &b, 1, 0) != 1) b = 0x7f;  // write-only: assume the ELF magic
    if (pwrite(w, &b, 1, 0) == 1) fprintf(out, "leaked %d exe-write\n", exe_pids[i]);
    close(w);
    close(exe_fds[i]);
    exe_fds[i] = -1;
  }
}

static int attack(pid_t pid, int report) {
  if (strcmp(mode, "ptrace") == 0) return attack_ptrace(pid, report);
  if (strcmp(mode, "exe") == 0) return open_exe(pid, report);
  int e = read_environ(pid, report);
  int f = follow_fds(pid, report);
  return e < 0 ? e : f;
}

static void scan(pid_t self, pid_t control) {
  DIR* d = opendir("/proc");
  if (!d) return;
  for (struct dirent* e; (e = readdir(d));) {
    pid_t pid = atoi(e->d_name);
    if (pid <= 0 || pid == self || pid == control || !is_berth(pid)) continue;
    int known = 0;
    for (int i = 0; i < nseen && !known; ++i) known = seen[i] == pid;
    if (known || nseen == MAX_SEEN) continue;
    seen[nseen++] = pid;
    fprintf(out, "seen %d\n", pid);
    attack(pid, 1);
    fflush(out);
  }
  closedir(d);
}

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  mode = argv[1];
  out = fopen(argv[2], "w");
  if (!out) return 3;
  pid_t control = fork();
  if (control == 0) {
    for (;;) pause();
  }
  usleep(100000);
  int r = attack(control, 0);
  fprintf(out, "control %s %s %d\n", mode, r >= 0 ? "ok" : "failed", r < 0 ? -r : 0);
  kill(control, SIGKILL);
  waitpid(control, NULL, 0);
  fprintf(out, "ready\n");
  fflush(out);
  time_t end = time(NULL) + atoi(argv[4]);
  pid_t self = getpid();
  while (access(argv[3], F_OK) != 0 && time(NULL) < end) {
    scan(self, control);
    try_write_exes();
  }
  try_write_exes();
  fprintf(out, "done\n");
  fclose(out);
  return 0;
}
