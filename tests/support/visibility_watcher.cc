// A hostile watcher for the visibility tests (cve_visibility_test.cc): runs as a
// container's process, with CAP_SYS_PTRACE, and scans /proc in a tight loop for processes
// that appear in the container's pid namespace. For each one, while it still runs the
// runtime binary (comm RUNTIME_COMM) and once more otherwise, it tries what an attacker
// would: stat /proc/<pid>/root and cwd, read /proc/<pid>/mountinfo and ns/mnt, open every
// /proc/<pid>/fd entry, PTRACE_SEIZE. Each host view seen that way is one line in
// OUT_DIR/observations; OUT_DIR/summary gets "seen=N runtime=N observations=N" when
// OUT_DIR/stop appears. OUT_DIR/ready is created once the first scan is done.
//
//   berth_visibility_watcher OUT_DIR RUNTIME_COMM HOST_MNTNS [HOST_PREFIX]
//
// HOST_MNTNS is the host's "mnt:[N]": a process in it is always a host view. Without
// HOST_PREFIX the processes join our own container (exec): any root, cwd, mount namespace,
// mount table or file not ours is a host view. With it they are another container's
// sharing our pid namespace and rootfs directory (create): their root must still be ours,
// and a mount point or fd path under HOST_PREFIX (where the host keeps the bundles) is a
// host view.
//
// Built static: it runs inside a busybox rootfs.
#include <dirent.h>
#include <fcntl.h>
#include <linux/stat.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <unordered_map>

#include "watcher_proc.h"

namespace {

using watcher::link_of;
using watcher::mount_id;
using watcher::mount_ids;
using watcher::read_file;

std::string g_out;
std::string g_comm;
std::string g_mountinfo;         // our own: what every process of the container must see
std::set<unsigned long long> g_mounts;  // mount ids of our mount namespace
struct stat g_root;
std::string g_mntns;
std::string g_host_mntns;
std::string g_prefix;  // empty: exec mode
long g_observations = 0;

void observe(int pid, const std::string& what) {
  ++g_observations;
  FILE* f = std::fopen((g_out + "/observations").c_str(), "a");
  if (!f) return;
  std::fprintf(f, "pid %d: %s\n", pid, what.c_str());
  std::fclose(f);
}

// The mount id of what `path` leads to; 0 when it cannot be reached (gone, denied).
void load_own_view() {
  g_mountinfo = read_file("/proc/self/mountinfo");
  g_mounts = mount_ids(g_mountinfo);
  ::stat("/", &g_root);
  g_mntns = link_of("/proc/self/ns/mnt");
}

// root, cwd, mount namespace: what needs ptrace access (CAP_SYS_PTRACE here).
bool host_root_or_ns(int pid, const std::string& p, std::string* why) {
  struct stat st;
  if (::stat((p + "/root/").c_str(), &st) == 0 && (st.st_dev != g_root.st_dev || st.st_ino != g_root.st_ino)) {
    *why = "root is not the container's (" + link_of(p + "/root") + ")";
    return true;
  }
  std::string ns = link_of(p + "/ns/mnt");
  if (!ns.empty() && ns == g_host_mntns) {
    *why = "in the host's mount namespace " + ns;
    return true;
  }
  if (!g_prefix.empty()) return false;
  unsigned long long m = mount_id(p + "/cwd", nullptr);
  if (m && !g_mounts.count(m)) {
    *why = "cwd on a mount outside the container (" + link_of(p + "/cwd") + ")";
    return true;
  }
  if (!ns.empty() && ns != g_mntns) {
    *why = "mount namespace " + ns + " is not the container's " + g_mntns;
    return true;
  }
  (void)pid;
  return false;
}

// Another container's mount table (create mode): a mount point under the host's prefix is
// the host's table, seen before the pivot.
bool host_mount_points(const std::string& mi) {
  size_t at = 0;
  while (at < mi.size()) {
    size_t nl = mi.find('\n', at);
    std::string line = mi.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    size_t f = 0;
    for (int i = 0; i < 4 && f != std::string::npos; ++i) f = line.find(' ', f + 1);
    if (f != std::string::npos && line.compare(f + 1, g_prefix.size(), g_prefix) == 0) return true;
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return false;
}

void check_fds(int pid, const std::string& p) {
  DIR* d = ::opendir((p + "/fd").c_str());
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string fd = p + "/fd/" + e->d_name;
    if (!g_prefix.empty()) {
      // exec.fifo, which the waiting init holds until `start`, is a channel: no data, no
      // path to climb.
      struct stat st;
      std::string target = link_of(fd);
      if (::stat(fd.c_str(), &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) &&
          target.compare(0, g_prefix.size(), g_prefix) == 0)
        observe(pid, std::string("fd ") + e->d_name + " is a host file (" + target + ")");
      continue;
    }
    mode_t mode = 0;
    unsigned long long m = mount_id(fd, &mode);
    // Pipes, sockets and anonymous inodes live on internal mounts; a file or directory on a
    // mount the container does not have is a host view (CVE-2024-21626's leaked fd).
    if (m && (S_ISDIR(mode) || S_ISREG(mode)) && !g_mounts.count(m))
      observe(pid, std::string("fd ") + e->d_name + " is a host file (" + link_of(fd) + ")");
  }
  ::closedir(d);
}

// Seized, then stopped (PTRACE_INTERRUPT: a running tracee cannot be detached), looked at
// while it cannot move, and let go. An exit while stopped is reaped here first; the kernel
// then hands it to the real parent.
void try_ptrace(int pid, const std::string& p) {
  if (::ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) < 0) return;
  ::ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr);
  int status = 0;
  if (::waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status)) return;
  std::string why;
  if (host_root_or_ns(pid, p, &why)) observe(pid, "PTRACE_SEIZE succeeded while " + why);
  ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
}

// One look at a process; true when it is done with (no longer the runtime, or gone).
bool inspect(int pid) {
  std::string p = "/proc/" + std::to_string(pid);
  std::string comm = read_file(p + "/comm");
  if (comm.empty()) return true;
  bool runtime = comm == g_comm + "\n";
  std::string mi = read_file(p + "/mountinfo");
  if (g_prefix.empty() && !mi.empty() && mi != g_mountinfo) observe(pid, "mountinfo is not the container's");
  if (!g_prefix.empty() && host_mount_points(mi)) observe(pid, "mountinfo is the host's (mount points under " + g_prefix + ")");
  std::string why;
  if (host_root_or_ns(pid, p, &why)) observe(pid, why);
  check_fds(pid, p);
  try_ptrace(pid, p);
  return !runtime;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s OUT_DIR RUNTIME_COMM HOST_MNTNS [HOST_PREFIX]\n", argv[0]);
    return 2;
  }
  g_out = argv[1];
  g_comm = argv[2];
  g_host_mntns = argv[3];
  if (argc > 4) g_prefix = argv[4];
  load_own_view();
  long seen = 0, runtime = 0;
  std::unordered_map<int, bool> was_runtime;
  bool listed = watcher::scan_proc_until_stopped(g_out, [&](int pid) {
    if (!was_runtime.count(pid)) {
      ++seen;
      was_runtime[pid] = false;
    }
    if (read_file("/proc/" + std::to_string(pid) + "/comm") == g_comm + "\n" && !was_runtime[pid]) {
      was_runtime[pid] = true;
      ++runtime;
    }
    return inspect(pid);
  });
  if (!listed) return 1;
  FILE* f = std::fopen((g_out + "/summary").c_str(), "w");
  if (!f) return 1;
  std::fprintf(f, "seen=%ld runtime=%ld observations=%ld\n", seen, runtime, g_observations);
  std::fclose(f);
  return 0;
}
