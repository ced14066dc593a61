/* contrib/bench/floor.c: what the kernel itself costs to start a container, with no
 * runtime: the floor under berth, runc and crun in contrib/bench/run.sh. Each level adds
 * to the one before and is timed from fork/clone to the reaped exit of the payload:
 *   exec    fork + exec of ROOTFS/bin/true (busybox-static) + wait
 *   ns      clone with mount, uts, ipc and pid namespaces; "/" made rprivate, a recursive
 *           bind of ROOTFS, pivot_root(".", ".") and the old root detached, procfs on /proc,
 *           then exec /bin/true
 *   net     the same plus a network namespace with lo brought up
 *   cgroup  the same plus a cgroup in every v1 hierarchy (and cgroup2 if mounted): mkdir,
 *           memory and pids limits, the child's pid written to each cgroup.procs, rmdir
 *           after the exit. Each cgroup sample starts 50 ms after the previous one (not
 *           timed): a cgroup v1 attach takes the cgroup_threadgroup_rwsem for writing,
 *           whose rcu_sync waits a full RCU grace period unless a writer passed less
 *           than a grace period ago, and a runtime call is not that lucky either.
 *           "cgroup-mkdir" (with the limits), "cgroup-attach" (the
 *           cgroup.procs writes) and "cgroup-rmdir" are those steps alone
 * Usage: floor -r ROOTFS [-n samples] [-w warm-up] [-g CGROUP-NAME] LEVEL...
 * Output, one line a sample: floor LEVEL wall MS */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *rootfs;
static const char *cg_name = "berth-bench/floor";

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("floor: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, ": %s\n", strerror(errno));
  _exit(1);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void wait_child(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) die("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    errno = 0;
    die("payload failed (status %d)", status);
  }
}

/* ---- level exec ---- */
static void level_exec(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/bin/true", rootfs);
  pid_t p = fork();
  if (p < 0) die("fork");
  if (p == 0) {
    char *argv[] = {"true", NULL};
    execv(path, argv);
    _exit(127);
  }
  wait_child(p);
}

/* ---- levels ns, net, cgroup: the child ---- */
struct child_args {
  int net;
  int gate; /* read end: the parent writes a byte once the child is in its cgroups */
};

static void child_fail(const char *what) {
  fprintf(stderr, "floor: child: %s: %s\n", what, strerror(errno));
  _exit(126);
}

static void lo_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) child_fail("socket");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) child_fail("SIOCGIFFLAGS lo");
  ifr.ifr_flags |= IFF_UP;
  if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) child_fail("SIOCSIFFLAGS lo");
  close(s);
}

static int child_main(void *arg) {
  struct child_args *a = arg;
  if (a->gate >= 0) {
    char b;
    if (read(a->gate, &b, 1) != 1) child_fail("gate");
  }
  if (a->net) lo_up();
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) child_fail("make / rprivate");
  if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0) child_fail("bind rootfs");
  if (chdir(rootfs) < 0) child_fail("chdir rootfs");
  if (syscall(SYS_pivot_root, ".", ".") < 0) child_fail("pivot_root");
  if (umount2(".", MNT_DETACH) < 0) child_fail("detach old root");
  if (chdir("/") < 0) child_fail("chdir /");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) child_fail("mount proc");
  char *argv[] = {"true", NULL};
  execv("/bin/true", argv);
  child_fail("exec /bin/true");
  return 127;
}

static char stack[256 * 1024];

static pid_t clone_child(struct child_args *a) {
  int flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | SIGCHLD;
  if (a->net) flags |= CLONE_NEWNET;
  pid_t p = clone(child_main, stack + sizeof stack, flags, a);
  if (p < 0) die("clone");
  return p;
}

/* ---- cgroups ---- */
#define MAX_CG 16
#define CG_PATH 512 /* a cgroup directory */
static char cg_dirs[MAX_CG][256];
static int ncg;

static int write_file(const char *dir, const char *file, const char *text) {
  char path[CG_PATH + 64];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  int saved = errno;
  close(fd);
  errno = saved;
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

static void copy_file(const char *from_dir, const char *to_dir, const char *file) {
  char path[CG_PATH + 64], buf[4096];
  snprintf(path, sizeof path, "%s/%s", from_dir, file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = 0;
  if (write_file(to_dir, file, buf) < 0) die("write %s/%s", to_dir, file);
}

/* Every mounted hierarchy under /sys/fs/cgroup (v1 controllers, name=systemd, and the
 * cgroup2 one of a hybrid layout when it is mounted). */
static void find_hierarchies(void) {
  const char *base = "/sys/fs/cgroup";
  DIR *d = opendir(base);
  if (!d) die("opendir /sys/fs/cgroup");
  struct dirent *e;
  while ((e = readdir(d)) && ncg < MAX_CG) {
    if (e->d_name[0] == '.') continue;
    char probe[512];
    snprintf(probe, sizeof probe, "%s/%.200s/cgroup.procs", base, e->d_name);
    struct stat st;
    if (lstat(probe, &st) != 0) continue;
    snprintf(cg_dirs[ncg++], sizeof cg_dirs[0], "%s/%.200s", base, e->d_name);
  }
  closedir(d);
}

static void mkdir_p(const char *path) {
  char tmp[CG_PATH];
  snprintf(tmp, sizeof tmp, "%.*s", CG_PATH - 1, path);
  for (char *p = tmp + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(tmp, 0755) < 0 && errno != EEXIST) die("mkdir %s", tmp);
    *p = '/';
  }
  if (mkdir(tmp, 0755) < 0 && errno != EEXIST) die("mkdir %s", tmp);
}

static double mkdir_ms, attach_ms, rmdir_ms;

static void cgroups_create(char paths[][CG_PATH]) {
  double t0 = now_ms();
  for (int i = 0; i < ncg; ++i) {
    snprintf(paths[i], CG_PATH, "%s/%.200s", cg_dirs[i], cg_name);
    mkdir_p(paths[i]);
    if (strstr(cg_dirs[i], "/cpuset")) {
      /* A v1 cpuset cgroup takes no task until cpus and mems are set. */
      char parent[CG_PATH];
      snprintf(parent, sizeof parent, "%.*s", CG_PATH - 1, paths[i]);
      *strrchr(parent, '/') = 0;
      copy_file(cg_dirs[i], parent, "cpuset.cpus");
      copy_file(cg_dirs[i], parent, "cpuset.mems");
      copy_file(cg_dirs[i], paths[i], "cpuset.cpus");
      copy_file(cg_dirs[i], paths[i], "cpuset.mems");
    }
    if (strstr(cg_dirs[i], "/memory")) write_file(paths[i], "memory.limit_in_bytes", "67108864");
    if (strstr(cg_dirs[i], "/pids")) write_file(paths[i], "pids.max", "100");
  }
  mkdir_ms = now_ms() - t0;
}

static void cgroups_attach(char paths[][CG_PATH], pid_t pid) {
  char text[32];
  snprintf(text, sizeof text, "%d", (int)pid);
  double t0 = now_ms();
  for (int i = 0; i < ncg; ++i)
    if (write_file(paths[i], "cgroup.procs", text) < 0) die("attach to %s", paths[i]);
  attach_ms = now_ms() - t0;
}

static void cgroups_remove(char paths[][CG_PATH]) {
  double t0 = now_ms();
  for (int i = 0; i < ncg; ++i) {
    for (int tries = 0; rmdir(paths[i]) < 0; ++tries) {
      if (errno != EBUSY || tries > 1000) die("rmdir %s", paths[i]);
      usleep(100);
    }
  }
  rmdir_ms = now_ms() - t0;
}

static void level_ns(int net, int cgroups) {
  struct child_args a = {net, -1};
  int gate[2] = {-1, -1};
  char paths[MAX_CG][CG_PATH];
  if (cgroups) {
    if (pipe2(gate, O_CLOEXEC) < 0) die("pipe");
    a.gate = gate[0];
    cgroups_create(paths);
  }
  pid_t p = clone_child(&a);
  if (cgroups) {
    cgroups_attach(paths, p);
    if (write(gate[1], "x", 1) != 1) die("gate");
    close(gate[0]);
    close(gate[1]);
  }
  wait_child(p);
  if (cgroups) cgroups_remove(paths);
}

int main(int argc, char **argv) {
  int samples = 30, warmup = 3, opt;
  while ((opt = getopt(argc, argv, "r:n:w:g:")) != -1) {
    switch (opt) {
      case 'r': rootfs = optarg; break;
      case 'n': samples = atoi(optarg); break;
      case 'w': warmup = atoi(optarg); break;
      case 'g': cg_name = optarg; break;
      default: return 2;
    }
  }
  if (!rootfs || optind == argc) {
    fprintf(stderr, "usage: floor -r ROOTFS [-n N] [-w W] [-g CGROUP] exec|ns|net|cgroup...\n");
    return 2;
  }
  find_hierarchies();
  /* Levels interleaved sample by sample, so that other load hits them alike. */
  for (int i = 0; i < warmup + samples; ++i) {
    for (int l = optind; l < argc; ++l) {
      const char *level = argv[l];
      mkdir_ms = attach_ms = rmdir_ms = 0;
      if (strcmp(level, "cgroup") == 0) usleep(50000);
      double t0 = now_ms();
      if (strcmp(level, "exec") == 0) level_exec();
      else if (strcmp(level, "ns") == 0) level_ns(0, 0);
      else if (strcmp(level, "net") == 0) level_ns(1, 0);
      else if (strcmp(level, "cgroup") == 0) level_ns(1, 1);
      else {
        errno = EINVAL;
        die("unknown level %s", level);
      }
      double ms = now_ms() - t0;
      if (i < warmup) continue;
      printf("floor %s wall %.3f\n", level, ms);
      if (strcmp(level, "cgroup") == 0)
        printf("floor cgroup-mkdir wall %.3f\nfloor cgroup-attach wall %.3f\nfloor cgroup-rmdir wall %.3f\n", mkdir_ms,
               attach_ms, rmdir_ms);
    }
  }
  return 0;
}
