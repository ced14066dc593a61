// A hostile watcher for the pre-execve window (ptrace_window_test.cc): a container's
// process holding CAP_SYS_PTRACE (without a user namespace, so in the host's user
// namespace) scans /proc in a tight loop for processes of the runtime (comm RUNTIME_COMM)
// that appear in the container's pid namespace. Each one it can PTRACE_SEIZE it stops
// (PTRACE_INTERRUPT) and, while it cannot move, looks at everything an attacker would:
// /proc/<pid>/environ and every writable mapping of its memory (/proc/<pid>/mem) for
// the marker (a value the test put in the runtime caller's environment, read from
// OUT_DIR/marker: as an argument it would be in the container's config, which berth
// holds), its fds, cwd and
// root, and that it holds none of the capabilities only the host's root has.
// OUT_DIR/observations gets one line per finding, OUT_DIR/caught one line per
// stopped process (its fds, cwd, root), OUT_DIR/summary the counts when OUT_DIR/stop
// appears; OUT_DIR/ready is created once the first scan is done.
//
//   berth_ptrace_window_watcher OUT_DIR RUNTIME_COMM [marker-only]
//
// marker-only: the processes belong to another container that shares our pid namespace
// (create), whose mounts are not ours: only the marker and the capabilities are looked at
// (its view is cve_visibility_test.cc's).
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
#include <vector>

#include "watcher_proc.h"

namespace {

using watcher::link_of;
using watcher::mount_id;
using watcher::mount_ids;
using watcher::read_file;

std::string g_out, g_comm, g_marker;
bool g_marker_only = false;
std::set<unsigned long long> g_mounts;  // mount ids of our mount namespace
struct stat g_root;
long g_observations = 0;

void append(const char* file, const std::string& line) {
  FILE* f = std::fopen((g_out + "/" + file).c_str(), "a");
  if (!f) return;
  std::fprintf(f, "%s\n", line.c_str());
  std::fclose(f);
}

void observe(int pid, const std::string& what) {
  ++g_observations;
  append("observations", "pid " + std::to_string(pid) + ": " + what);
}

void load_own_view() {
  g_mounts = mount_ids(read_file("/proc/self/mountinfo"));
  ::stat("/", &g_root);
}

// Every writable mapping (stack, heap, data: where an environment or a copy of it lives),
// read through /proc/<pid>/mem in chunks that overlap by the marker's length.
constexpr unsigned long long kLargestMapping = 1ull << 30;

bool memory_holds_marker(const std::string& p, std::string* where) {
  std::string maps = read_file(p + "/maps");
  int mem = ::open((p + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (mem < 0) return false;
  std::vector<char> buf(1 << 20);
  bool found = false;
  for (size_t at = 0; at < maps.size() && !found;) {
    size_t nl = maps.find('\n', at);
    std::string line = maps.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? maps.size() : nl + 1;
    unsigned long long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s", &lo, &hi, perms) != 3 || perms[1] != 'w') continue;
    // A sanitizer build reserves terabytes of shadow and allocator space: read for ever,
    // the process stays stopped past the test's deadline. berth's own stack, heap and data
    // are far below this; larger mappings are left out.
    if (hi - lo > kLargestMapping) continue;
    for (unsigned long long off = lo; off < hi && !found;) {
      size_t want = static_cast<size_t>(std::min<unsigned long long>(buf.size(), hi - off));
      ssize_t n = ::pread(mem, buf.data(), want, static_cast<off_t>(off));
      if (n <= 0) break;
      found = memmem(buf.data(), static_cast<size_t>(n), g_marker.data(), g_marker.size()) != nullptr;
      if (found) *where = line;
      off += static_cast<size_t>(n) > g_marker.size() ? static_cast<size_t>(n) - g_marker.size() : static_cast<size_t>(n);
    }
  }
  ::close(mem);
  return found;
}

// fds, cwd and root: a file or directory on a mount the container does not have, or a
// root that is not ours, is a host view. Returns the process's fd table as text.
std::string check_view(int pid, const std::string& p) {
  std::string table = "cwd " + link_of(p + "/cwd") + " root " + link_of(p + "/root") + " fds";
  struct stat st;
  if (::stat((p + "/root/").c_str(), &st) == 0 && (st.st_dev != g_root.st_dev || st.st_ino != g_root.st_ino))
    observe(pid, "root is not the container's (" + link_of(p + "/root") + ")");
  unsigned long long cwd = mount_id(p + "/cwd", nullptr);
  if (cwd && !g_mounts.count(cwd)) observe(pid, "cwd on a mount outside the container (" + link_of(p + "/cwd") + ")");
  DIR* d = ::opendir((p + "/fd").c_str());
  if (!d) return table;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string fd = p + "/fd/" + e->d_name;
    table += std::string(" ") + e->d_name + "=" + link_of(fd);
    mode_t mode = 0;
    unsigned long long m = mount_id(fd, &mode);
    if (m && (S_ISDIR(mode) || S_ISREG(mode)) && !g_mounts.count(m))
      observe(pid, std::string("fd ") + e->d_name + " is a host file (" + link_of(fd) + ")");
  }
  ::closedir(d);
  return table;
}

// Capabilities a seized process could use for the container that no container here has:
// CAP_DAC_READ_SEARCH (open_by_handle_at reaches host files), CAP_SYS_MODULE (a module is
// kernel code), CAP_SYS_RAWIO, CAP_SYS_BOOT.
void check_caps(int pid, const std::string& p) {
  std::string status = read_file(p + "/status");
  size_t at = status.find("CapPrm:");
  if (at == std::string::npos) return;
  unsigned long long prm = std::strtoull(status.c_str() + at + 7, nullptr, 16);
  unsigned long long host = (1ull << 2) | (1ull << 16) | (1ull << 17) | (1ull << 22);
  if (prm & host) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%016llx", prm);
    observe(pid, std::string("holds host capabilities before its execve (CapPrm ") + buf + ")");
  }
}

struct Counts {
  long runtime = 0, caught = 0, environ_read = 0, in_environ = 0, in_memory = 0;
};

// environ needs only read access (CAP_SYS_PTRACE passes it on a non-dumpable process);
// the rest is looked at while the process is stopped under our PTRACE_SEIZE.
void inspect(int pid, Counts& c) {
  std::string p = "/proc/" + std::to_string(pid);
  std::string env = read_file(p + "/environ");
  if (!env.empty() || ::access((p + "/environ").c_str(), R_OK) == 0) ++c.environ_read;
  if (env.find(g_marker) != std::string::npos) {
    ++c.in_environ;
    observe(pid, "/proc/<pid>/environ holds the caller's marker");
  }
  if (::ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) < 0) return;
  ::ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr);
  int status = 0;
  if (::waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status)) return;
  // Still the runtime (not yet past its execve) while it cannot move.
  if (read_file(p + "/comm") == g_comm + "\n") {
    ++c.caught;
    std::string where;
    if (memory_holds_marker(p, &where)) {
      ++c.in_memory;
      observe(pid, "memory holds the caller's marker (" + where + ")");
    }
    std::string table = g_marker_only ? "" : check_view(pid, p);
    check_caps(pid, p);
    if (c.caught <= 5) append("caught", "pid " + std::to_string(pid) + ": " + table);
  }
  ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR RUNTIME_COMM [marker-only]\n", argv[0]);
    return 2;
  }
  g_out = argv[1];
  g_comm = argv[2];
  g_marker = read_file(g_out + "/marker");
  if (g_marker.size() < 16) return 2;
  g_marker_only = argc > 3 && std::string(argv[3]) == "marker-only";
  load_own_view();
  Counts c;
  bool listed = watcher::scan_proc_until_stopped(g_out, [&](int pid) {
    std::string comm = read_file("/proc/" + std::to_string(pid) + "/comm");
    if (comm.empty()) return false;                 // gone, or not readable yet
    if (comm != g_comm + "\n") return true;         // a payload: not the runtime any more
    ++c.runtime;
    inspect(pid, c);
    return true;
  });
  if (!listed) return 1;
  FILE* f = std::fopen((g_out + "/summary").c_str(), "w");
  if (!f) return 1;
  std::fprintf(f, "runtime=%ld caught=%ld environ_read=%ld marker_in_environ=%ld marker_in_memory=%ld observations=%ld\n",
               c.runtime, c.caught, c.environ_read, c.in_environ, c.in_memory, g_observations);
  std::fclose(f);
  return 0;
}
