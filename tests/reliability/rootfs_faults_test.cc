// Syscall failures during the rootfs application: the real Applier runs in a throw-away
// mount namespace (as the container's init does) over FaultySys, which fails its Nth call,
// for every N up to the length of a successful run. Each failure must come back as a clear
// error (the errno's text and what was being done), stop the application there, close
// every fd the engine opened, and leave the host as it was once the namespace is gone: no
// mount, and nothing in the rootfs that a successful run would not have created too.
// umask, which cannot fail, is the one call that is only recorded (and the one made after
// a failure: the devices phase puts back the umask it cleared).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "linux/rootfs/apply.h"
#include "linux/rootfs/plan.h"
#include "reliability/faulty_sys.h"
#include "support/harness.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int calls = 0;
  std::string error;  // empty: the application succeeded
  std::string last_call;
  int leaked_fds = 0;
  std::vector<std::string> names;  // every call made, in order
};

int open_fds() {
  int n = 0;
  for (int fd = 0; fd < 1024; ++fd) n += ::fcntl(fd, F_GETFD) >= 0;
  return n;
}

Status apply_all(linux::rootfs::Applier& a) {
  BERTH_TRY(a.prepare());
  BERTH_TRY(a.mounts());
  BERTH_TRY(a.devices());
  BERTH_TRY(a.create_cwd());
  BERTH_TRY(a.pivot());
  return a.after_pivot();
}

// Applies `plan` in a child with its own mount namespace, failing call `fail_at` (0: none).
Outcome apply_in_child(const linux::rootfs::RootfsPlan& plan, int fail_at) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) < 0) return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    std::ostringstream out;
    if (::unshare(CLONE_NEWNS) < 0) {
      out << "0\nunshare: " << strerror(errno) << "\n\n0\n\n";
    } else {
      int before = open_fds();
      std::string error, last, names;
      int calls;
      {
        FaultySys sys(fail_at);
        linux::rootfs::Applier a(sys, plan);
        Status st = apply_all(a);
        if (!st) error = st.error().message();
        calls = static_cast<int>(sys.calls().size());
        last = sys.calls().empty() ? "" : sys.calls().back();
        for (const auto& c : sys.calls()) names += c + " ";
      }
      out << calls << "\n" << error << "\n" << last << "\n" << open_fds() - before << "\n" << names << "\n";
    }
    std::string s = out.str();
    (void)!::write(p[1], s.data(), s.size());
    ::_exit(0);
  }
  ::close(p[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(p[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(p[0]);
  ::waitpid(pid, nullptr, 0);
  Outcome o;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  o.calls = std::atoi(line.c_str());
  std::getline(in, o.error);
  std::getline(in, o.last_call);
  std::getline(in, line);
  o.leaked_fds = std::atoi(line.c_str());
  std::getline(in, line);
  std::istringstream names(line);
  for (std::string n; names >> n;) o.names.push_back(n);
  return o;
}

std::set<std::string> tree(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec))
    out.insert(it->path().string().substr(dir.size()));
  return out;
}

// The default spec (masked and read-only paths, /dev, proc, sysfs, mqueue, cgroup) plus a
// read-only recursive bind, a tmpfs with propagation, a device node and a cwd to create.
linux::rootfs::RootfsPlan make_plan(const Bundle& b, const std::string& bind_source) {
  spec::Spec s = spec::default_spec(false);
  s.root->readonly = true;
  s.process->cwd = "/work/here";
  spec::Mount bind;
  bind.destination = "/data";
  bind.source = bind_source;
  bind.options = {"rbind", "ro"};
  s.mounts.push_back(bind);
  spec::Mount tmp;
  tmp.destination = "/scratch";
  tmp.type = "tmpfs";
  tmp.source = "tmpfs";
  tmp.options = {"nosuid", "rprivate", "size=1m"};
  s.mounts.push_back(tmp);
  spec::Device fuse;
  fuse.path = "/dev/fuse";
  fuse.type = "c";
  fuse.major = 10;
  fuse.minor = 229;
  fuse.file_mode = 0640;
  fuse.uid = 1000;
  fuse.gid = 1000;
  s.linux->devices.push_back(fuse);
  linux::rootfs::PlanContext ctx;
  ctx.rootfs = b.rootfs();
  auto plan = linux::rootfs::plan_rootfs(s, ctx);
  return plan ? *plan : linux::rootfs::RootfsPlan{};
}

// Puts the rootfs back as it was (what a run created goes), so every run starts alike.
void restore(const std::string& rootfs, const std::set<std::string>& before) {
  auto now = tree(rootfs);
  for (auto it = now.rbegin(); it != now.rend(); ++it)
    if (!before.count(*it)) fs::remove(rootfs + *it);
}

// The calls whose failure the engine deliberately survives; true (after checking that the
// application went on as it should) for those.
bool goes_on(const std::string& name, const Outcome& o, int k, const std::string& where) {
  if (name == "umask") {
    // umask(2) cannot fail (it has no error return): FaultySys records it and makes it.
    EXPECT_EQ(o.error, "") << where;
    return true;
  }
  if (name == "mknodat") {
    // FaultySys fails mknod with EPERM, which is what a device node gets where mknod is
    // refused (a user namespace, a nodev-only host): as runc, the host's node is bound
    // onto an empty file instead, and the application goes on.
    std::vector<std::string> next(o.names.begin() + k, o.names.begin() + std::min<size_t>(o.names.size(), k + 3));
    EXPECT_EQ(next, (std::vector<std::string>{"mknodat", "open_tree", "move_mount"})) << where << ": no bind fallback";
    EXPECT_EQ(o.error, "") << where;
    return true;
  }
  return false;
}

TEST(RootfsSyscallFailures, EachCallFailedInTurnIsReportedAndLeavesNothing) {
  Bundle b;
  TempDir data("berth-relfault");
  auto plan = make_plan(b, data.path());
  ASSERT_FALSE(plan.rootfs.empty()) << "the plan could not be built";
  auto host_mounts = mount_lines(b.path());
  auto before = tree(b.rootfs());

  Outcome full = apply_in_child(plan, 0);
  ASSERT_EQ(full.error, "") << "the unfailed application must succeed";
  ASSERT_GT(full.calls, 20);
  ASSERT_EQ(full.names.size(), static_cast<size_t>(full.calls));
  EXPECT_EQ(full.leaked_fds, 0);
  auto created = tree(b.rootfs());  // what a successful run leaves in the rootfs (the cwd)
  EXPECT_EQ(mount_lines(b.path()), host_mounts) << "the mounts died with the namespace";
  restore(b.rootfs(), before);

  std::map<std::string, int> failed_per_call, survived_per_call;
  std::vector<std::string> without_context;
  for (int k = 1; k <= full.calls; ++k) {
    Outcome o = apply_in_child(plan, k);
    const std::string& name = full.names[static_cast<size_t>(k - 1)];
    std::string where = "call " + std::to_string(k) + " of " + std::to_string(full.calls) + " (" + name + ")";
    if (goes_on(name, o, k, where)) {
      ++survived_per_call[name];
      restore(b.rootfs(), before);
      continue;
    }
    // Stop at the failed call; the devices phase still puts back the umask it cleared.
    ASSERT_GE(o.calls, k) << where;
    ASSERT_EQ(o.names[static_cast<size_t>(k - 1)], name) << where << ": a different call failed";
    for (size_t i = static_cast<size_t>(k); i < o.names.size(); ++i)
      ASSERT_EQ(o.names[i], "umask") << where << ": the application must stop at the failed call, but made call "
                                     << i + 1 << " (" << o.names[i] << "); error: " << o.error;
    ++failed_per_call[name];
    if (std::getenv("BERTH_SHOW_ERRORS")) std::printf("%d %s: %s\n", k, o.last_call.c_str(), o.error.c_str());
    ASSERT_NE(o.error, "") << where << ": a failed call must fail the application";
    // Clear: the errno's text, and what was being done around the bare call.
    EXPECT_TRUE(o.error.find("no such file") != std::string::npos || o.error.find("not permitted") != std::string::npos ||
                o.error.find("no space") != std::string::npos || o.error.find("busy") != std::string::npos ||
                o.error.find("read-only") != std::string::npos || o.error.find("no such device") != std::string::npos ||
                o.error.find("cross-device") != std::string::npos || o.error.find("permission denied") != std::string::npos ||
                o.error.find("input/output") != std::string::npos || o.error.find("invalid argument") != std::string::npos)
        << where << ": " << o.error;
    // Context: what was being done, above the bare call ("mount /dev: mount <fd>: ...").
    size_t parts = 0;
    for (size_t at = 0; (at = o.error.find(": ", at)) != std::string::npos; at += 2) ++parts;
    if (parts < 2) without_context.push_back(std::to_string(k) + " " + o.error);
    EXPECT_EQ(o.leaked_fds, 0) << where;
    EXPECT_EQ(mount_lines(b.path()), host_mounts) << where;
    auto now = tree(b.rootfs());
    for (const auto& e : now) EXPECT_TRUE(created.count(e)) << where << ": left " << e;
    for (const auto& e : before) EXPECT_TRUE(now.count(e)) << where << ": removed " << e;
    restore(b.rootfs(), before);
  }
  // Known gaps (docs/reliability.md, owner: rootfs engine): the pivot steps and the check
  // of /dev/null before masking name only the bare call. The count may only go down.
  constexpr size_t kKnownWithoutContext = 6;
  std::string bare;
  for (const auto& m : without_context) bare += "  " + m + "\n";
  EXPECT_LE(without_context.size(), kKnownWithoutContext) << "errors without context:\n" << bare;
  std::string summary, survived;
  for (const auto& [call, n] : failed_per_call) summary += " " + call + "=" + std::to_string(n);
  for (const auto& [call, n] : survived_per_call) survived += " " + call + "=" + std::to_string(n);
  std::printf("failed each of %d calls in turn:%s; went on past:%s; %zu errors name only the call:\n%s", full.calls,
              summary.c_str(), survived.c_str(), without_context.size(), bare.c_str());
  EXPECT_GE(failed_per_call.count("mount") + failed_per_call.count("move_mount") + failed_per_call.count("open_tree") +
                failed_per_call.count("pivot_root") + failed_per_call.count("mount_setattr"),
            5u);
  EXPECT_EQ(survived_per_call.count("mknodat"), 1u) << "the device nodes' bind fallback was not reached";
}

}  // namespace
}  // namespace berth::test
