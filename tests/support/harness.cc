// Integration test harness (see harness.h).
#include "support/harness.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace fs = std::filesystem;

namespace berth::test {

std::string file_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string berth_binary() {
  if (const char* b = std::getenv("BERTH_TEST_BINARY")) return b;
  return BERTH_BINARY;
}

std::string source_dir() { return BERTH_SOURCE_DIR; }

std::string runc_binary() {
  const char* env = std::getenv("RUNC");
  if (env && *env && ::access(env, X_OK) == 0) return env;
  for (const char* p : {"/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

bool have_runc() { return !runc_binary().empty(); }

bool have_cgroup_v1(const std::string& controller) {
  struct statfs st {};
  return ::statfs(("/sys/fs/cgroup/" + controller).c_str(), &st) == 0 && st.f_type == 0x27e0eb;  // CGROUP_SUPER_MAGIC
}

CmdResult run_cmd(const std::vector<std::string>& argv, const std::string& input, int timeout_s,
                  const std::vector<std::string>& extra_env) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC)) return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::setpgid(0, 0);
    for (const auto& e : extra_env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  (void)!::write(in[1], input.data(), input.size());
  ::close(in[1]);
  CmdResult r;
  // Wait for the command itself, not for EOF: a container created by it inherits the
  // pipes and may keep them open long after (as with runc).
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  auto drain = [&] {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(out[0], buf, sizeof buf)) > 0) r.out.append(buf, static_cast<size_t>(n));
    while ((n = ::read(err[0], buf, sizeof buf)) > 0) r.err.append(buf, static_cast<size_t>(n));
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool exited = false;
  while (!exited) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) break;
    struct pollfd fds[3] = {{pidfd, POLLIN, 0}, {out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    if (::poll(fds, 3, left) < 0) continue;
    drain();
    exited = fds[0].revents & POLLIN;
  }
  if (!exited) ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  drain();
  ::close(pidfd);
  ::close(out[0]);
  ::close(err[0]);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + ".XXXXXX";
  char* p = ::mkdtemp(tmpl.data());
  path_ = p ? p : "";
  ::chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

namespace {

// Builds the busybox rootfs once per test process and copies it for each bundle.
const std::string& rootfs_template() {
  static std::string dir;
  static std::once_flag once;
  std::call_once(once, [] {
    static TempDir t("berth-rootfs");
    dir = t.path() + "/rootfs";
    std::string script =
        "set -e; d=" + dir + "; mkdir -p $d/bin $d/sbin $d/usr/bin $d/usr/sbin $d/etc $d/proc $d/sys "
        "$d/dev $d/tmp $d/root $d/run $d/var/tmp $d/home; cp /bin/busybox $d/bin/busybox; "
        "printf 'root:x:0:0:root:/root:/bin/sh\\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\\n"
        "user:x:1000:1000:user:/home/user:/bin/sh\\n' > $d/etc/passwd; "
        "printf 'root:x:0:\\nnogroup:x:65534:\\nuser:x:1000:\\nextra:x:2000:user\\n' > $d/etc/group; "
        "chmod 1777 $d/tmp $d/var/tmp";
    auto r = run_cmd({"/bin/sh", "-c", script});
    // The applet links are made here, not by `ln` in the script: every test is a process
    // of its own (gtest_discover_tests), and ~270 forks of ln cost seconds per test on a
    // loaded CI machine.
    auto applets = run_cmd({"/bin/busybox", "--list"});
    std::istringstream names(applets.out);
    std::error_code ec;
    for (std::string a; r.code == 0 && !ec && std::getline(names, a);)
      if (!a.empty() && a != "busybox" && a.find('/') == std::string::npos)
        fs::create_symlink("busybox", dir + "/bin/" + a, ec);
    if (r.code != 0 || applets.code != 0 || ec) dir.clear();
  });
  return dir;
}

}  // namespace

Bundle::Bundle() : dir_("berth-bundle") {
  run_cmd({"cp", "-a", rootfs_template(), dir_.path() + "/rootfs"});
  spec_ = spec::default_spec(false);
  spec_.process->terminal = false;
  spec_.process->args = {"sh", "-c", "true"};
  spec_.root->readonly = false;
  // An explicit cgroup: runc would otherwise nest the container under the caller's own
  // cgroup, which tests must not touch.
  spec_.linux->cgroups_path = "/berth-test/" + dir_.path().substr(dir_.path().rfind('/') + 1);
}

Bundle& Bundle::script(const std::string& s) {
  spec_.process->args = {"sh", "-c", s};
  return *this;
}

void Bundle::write() const {
  std::ofstream f(dir_.path() + "/config.json");
  f << spec::to_json(spec_, true);
}

namespace {
// Like a shim, the test process adopts the containers it starts (their inits outlive the
// `berth run -d` or `create` that made them); on this host PID 1 reaps nothing.
const bool kSubreaper = [] {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  return true;
}();
}  // namespace

Runtime::Runtime(std::string binary) : binary_(std::move(binary)), root_("berth-root") { (void)kSubreaper; }

namespace {
// The pid in `state` output (0 when there is none).
int state_init_pid(const std::string& state) {
  size_t at = state.find("\"pid\": ");
  return at == std::string::npos ? 0 : std::atoi(state.c_str() + at + 7);
}

// Kills a running container's init and reaps until it is gone. The init and the processes
// exec'd into the container are this process's children (the subreaper above); a pid
// namespace's init cannot finish exiting before the namespace's other processes are
// reaped, and both runtimes' `delete --force` then waits about 10 s for it.
void kill_and_reap(const Runtime& rt, const std::string& id) {
  auto st = rt({"state", id});
  int pid = state_init_pid(st.out);
  // Only a running one: a paused init dies when thawed, which `delete --force` does.
  if (st.code != 0 || pid <= 0 || st.out.find("\"status\": \"running\"") == std::string::npos) return;
  if (rt({"kill", id, "KILL"}).code != 0) return;
  for (int waited = 0; waited < 3000 && ::kill(pid, 0) == 0; waited += 10) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    ::usleep(10000);
  }
}
}  // namespace

Runtime::~Runtime() {
  auto ids = (*this)({"list", "-q"});
  std::istringstream in(ids.out);
  std::string id;
  while (std::getline(in, id)) {
    if (id.empty()) continue;
    kill_and_reap(*this, id);
    (*this)({"delete", "--force", id});
  }
  // Reap the adopted inits of this test's containers (the test waited for its own children).
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

CmdResult Runtime::operator()(const std::vector<std::string>& args, const std::string& input, int timeout_s) const {
  std::vector<std::string> argv = {binary_, "--root", root_.path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_cmd(argv, input, timeout_s);
}

std::vector<std::string> mount_lines(const std::string& prefix) {
  std::ifstream f("/proc/self/mountinfo");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string id, parent, dev, root, mountpoint;
    in >> id >> parent >> dev >> root >> mountpoint;
    if (mountpoint.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

namespace {

// Every integration test makes containers, cgroups or mounts on the host: as anyone but
// root they would all fail with EPERM, so the whole run is skipped and says why.
class NeedsRoot : public ::testing::Environment {
 public:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the integration tests need root (they create containers on this host)";
    // The bundles hold /bin/busybox alone: Debian's dynamically linked busybox would not
    // run there (its PT_INTERP path sits in the first page).
    std::string head = file_text("/bin/busybox").substr(0, 4096);
    if (head.empty() || head.find("/ld-linux") != std::string::npos)
      GTEST_SKIP() << "the integration tests need busybox-static (/bin/busybox, statically linked) for their bundles";
  }
};

[[maybe_unused]] ::testing::Environment* const kNeedsRoot = ::testing::AddGlobalTestEnvironment(new NeedsRoot);

}  // namespace

}  // namespace berth::test
