// cgroups library on the real host (root): create under an absolute test path, a forked
// child joins, freeze/thaw stop and restart it, stats, OOM notification, device rules
// enforced by v1 devices.* and by the v2 eBPF program, and destroy leaving nothing behind.
// Every case removes what it created, even when it fails.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include "cgroups/manager.h"
#include "cgroups/v2/v2.h"
#include "util/file.h"
#include "util/owned_pid.h"
#include "util/strings.h"

namespace berth::cgroups {
namespace {

using namespace std::chrono_literals;

std::string test_path(const char* name) {
  return "/berth-it-" + std::to_string(::getpid()) + "-" + name;
}

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

// A forked child that waits for go() (so that it can be put in a cgroup first), then runs
// `body` and exits with its return value.
class Child {
 public:
  explicit Child(std::function<int()> body) {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[1]);
      char c;
      if (::read(fds[0], &c, 1) != 1) ::_exit(100);
      ::_exit(body());
    }
    ::close(fds[0]);
    go_ = fds[1];
    pid_ = OwnedPid(pid, UniqueFd());
  }
  ~Child() { ::close(go_); }
  pid_t pid() const { return pid_.pid(); }
  void go() { ASSERT_EQ(::write(go_, "g", 1), 1); }
  int wait() { return pid_.wait(); }
  void kill() { pid_.kill_and_reap(); }

 private:
  OwnedPid pid_;
  int go_ = -1;
};

class CgroupsIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (creates cgroups on the host)";
    const auto& h = host();
    if (!h) GTEST_SKIP() << "no cgroups on this host: " << h.error().message();
  }
  void TearDown() override {
    for (auto& m : managers_) (void)m.destroy();
    for (auto it = extra_dirs_.rbegin(); it != extra_dirs_.rend(); ++it) ::rmdir(it->c_str());
  }
  Manager& create(const char* name, const spec::Resources& r, std::vector<DeviceRule> rules = {}) {
    Config c;
    c.cgroups_path = test_path(name);
    c.id = name;
    c.resources = &r;
    c.device_rules = std::move(rules);
    auto m = Manager::create(c);
    if (!m) ADD_FAILURE() << m.error().message();
    managers_.push_back(std::move(m).value());
    return managers_.back();
  }
  std::vector<Manager> managers_;
  std::vector<std::string> extra_dirs_;
};

TEST_F(CgroupsIntegration, LayoutMatchesStatfs) {
  // runc's own test: cgroup2 on /sys/fs/cgroup is v2, on /sys/fs/cgroup/unified hybrid.
  struct statfs st;
  Layout want = Layout::kV1;
  if (::statfs("/sys/fs/cgroup", &st) == 0 && st.f_type == 0x63677270) want = Layout::kV2;
  else if (::statfs("/sys/fs/cgroup/unified", &st) == 0 && st.f_type == 0x63677270) want = Layout::kHybrid;
  EXPECT_EQ(detect().value(), want);
  std::printf("host layout: %s\n", std::string(to_string(want)).c_str());
}

TEST_F(CgroupsIntegration, CreateJoinFreezeThawKillDestroy) {
  spec::Resources r;
  r.pids = spec::Pids{50};
  r.cpu.emplace();
  r.cpu->shares = 512;
  r.memory.emplace();
  r.memory->limit = 64 << 20;
  Manager& m = create("life", r);
  auto paths = m.paths();
  ASSERT_FALSE(paths.empty());
  if (m.layout() == Layout::kV2) {
    EXPECT_EQ(str::trim(file::read(paths[""] + "/pids.max").value()), "50");
    EXPECT_EQ(str::trim(file::read(paths[""] + "/memory.max").value()), std::to_string(64 << 20));
  } else {
    EXPECT_EQ(str::trim(file::read(paths["pids"] + "/pids.max").value()), "50");
    EXPECT_EQ(str::trim(file::read(paths["cpu"] + "/cpu.shares").value()), "512");
    EXPECT_EQ(str::trim(file::read(paths["memory"] + "/memory.limit_in_bytes").value()), std::to_string(64 << 20));
    EXPECT_NE(str::trim(file::read(paths["cpuset"] + "/cpuset.cpus").value()), "");  // inherited
  }

  auto* counter = static_cast<std::atomic<uint64_t>*>(
      ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(counter, MAP_FAILED);
  Child child([counter] {
    // Memory use to report: what the child had before it joined stays charged to the old
    // cgroup (v1 moves no charges), so it touches fresh pages once inside. Spinning alone
    // left memory.usage_in_bytes at 0 now and then.
    constexpr size_t kTouched = 1 << 20;
    void* raw = ::mmap(nullptr, kTouched, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return 1;
    auto* pages = static_cast<volatile char*>(raw);
    for (size_t i = 0; i < kTouched; i += 4096) pages[i] = 1;
    for (;;) counter->fetch_add(1, std::memory_order_relaxed);
    return 0;
  });
  ASSERT_TRUE(m.add_process(child.pid()));
  child.go();
  for (const auto& [ctrl, dir] : paths) {
    auto procs = file::read(dir + "/cgroup.procs").value();
    EXPECT_NE(procs.find(std::to_string(child.pid())), std::string::npos) << ctrl;
  }
  auto pids = m.pids();
  ASSERT_TRUE(pids);
  EXPECT_EQ(*pids, std::vector<pid_t>{child.pid()});

  while (counter->load() == 0) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(m.freeze());
  EXPECT_TRUE(m.frozen().value());
  uint64_t at_freeze = counter->load();
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(counter->load(), at_freeze) << "a frozen child kept counting";
  ASSERT_TRUE(m.thaw());
  EXPECT_FALSE(m.frozen().value());
  std::this_thread::sleep_for(100ms);
  EXPECT_GT(counter->load(), at_freeze) << "the thawed child did not resume";

  auto s = m.stats();
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_GT(s->cpu.usage.total, 0u);
  EXPECT_EQ(s->pids.current, 1u);
  EXPECT_EQ(s->pids.limit, 50u);
  EXPECT_GT(s->memory.usage.usage, 0u);
  std::string j = to_json(*s);
  EXPECT_NE(j.find("\"pids\":{\"current\":1,\"limit\":50}"), std::string::npos) << j;

  child.kill();
  ::munmap(counter, 4096);
  ASSERT_TRUE(m.destroy()) << "destroy";
  for (const auto& [ctrl, dir] : paths) EXPECT_FALSE(exists(dir)) << dir;
  EXPECT_TRUE(m.destroy());  // idempotent
}

TEST_F(CgroupsIntegration, UpdateRoundTripAndHostRefusals) {
  Manager& m = create("update", spec::Resources{});
  std::string pids_dir = m.layout() == Layout::kV2 ? m.paths()[""] : m.paths()["pids"];
  spec::Resources r;
  r.pids = spec::Pids{10};
  ASSERT_TRUE(m.update(r));
  EXPECT_EQ(str::trim(file::read(pids_dir + "/pids.max").value()), "10");
  r.pids->limit = 0;
  ASSERT_TRUE(m.update(r));
  EXPECT_EQ(str::trim(file::read(pids_dir + "/pids.max").value()), "10");
  spec::Resources net;
  net.network = spec::Network{7, {}};
  auto st = m.update(net);
  if (m.layout() == Layout::kV2 || !host()->find_v1("net_cls")) {
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message().find("linux.resources.network.classID: not supported"), std::string::npos)
        << st.error().message();
  } else {
    EXPECT_TRUE(st);
  }
}

TEST_F(CgroupsIntegration, OomIsNotified) {
  spec::Resources r;
  r.memory.emplace();
  r.memory->limit = 16 << 20;
  if (host()->layout != Layout::kV2) r.memory->swap = 16 << 20;  // no swapping out of the OOM
  Manager& m = create("oom", r);
  auto fd = m.oom_event_fd();
  ASSERT_TRUE(fd) << fd.error().message();
  Child child([] {
    for (size_t i = 0; i < 64; ++i) {
      char* p = static_cast<char*>(::malloc(4 << 20));
      if (p) std::memset(p, 1, 4 << 20);
    }
    return 0;
  });
  ASSERT_TRUE(m.add_process(child.pid()));
  child.go();
  struct pollfd p = {fd->get(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 10000), 1) << "no OOM notification within 10 s";
  int status = child.wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  EXPECT_GE(m.oom_kill_count().value(), 1u);
}

// Runs `open(path, O_RDWR)` in a child placed by `join`; returns 0 or the errno.
int open_errno_in(const std::function<void(pid_t)>& join, const char* path) {
  Child child([path] {
    int fd = ::open(path, O_RDWR | O_CLOEXEC);
    return fd >= 0 ? 0 : errno;
  });
  join(child.pid());
  child.go();
  int status = child.wait();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(CgroupsIntegration, V1DeviceRulesDenyAndAllow) {
  if (!host()->find_v1("devices")) GTEST_SKIP() << "no v1 devices hierarchy on this host";
  std::vector<DeviceRule> rules = {parse_rule("a", false).value(), parse_rule("c 1:3 rwm", true).value()};
  Manager& m = create("devices", spec::Resources{}, rules);
  EXPECT_EQ(str::trim(file::read(m.paths()["devices"] + "/devices.list").value()), "c 1:3 rwm");
  auto join = [&](pid_t pid) { ASSERT_TRUE(m.add_process(pid)); };
  EXPECT_EQ(open_errno_in(join, "/dev/null"), 0);
  EXPECT_EQ(open_errno_in(join, "/dev/zero"), EPERM);
  // Update to a list that also allows /dev/zero: written as a difference.
  rules.push_back(parse_rule("c 1:5 rw", true).value());
  ASSERT_TRUE(m.update(spec::Resources{}, &rules));
  EXPECT_EQ(open_errno_in(join, "/dev/zero"), 0);
  EXPECT_EQ(open_errno_in(join, "/dev/null"), 0);
}

TEST_F(CgroupsIntegration, V2DeviceProgramDeniesInACgroup2Directory) {
  const auto& h = *host();
  if (!h.unified) GTEST_SKIP() << "no cgroup2 hierarchy on this host";
  std::string dir = h.unified->mountpoint + test_path("bpf");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << std::strerror(errno);
  extra_dirs_.push_back(dir);
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  Dir d(fd.get(), dir);
  std::vector<DeviceRule> rules = {parse_rule("a", false).value(), parse_rule("c 1:3 rwm", true).value()};
  auto st = v2::set_device_rules(d, rules);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(v2::attached_device_programs(fd.get()).value().size(), 1u);
  auto join = [&](pid_t pid) { ASSERT_TRUE(d.write("cgroup.procs", std::to_string(pid))); };
  EXPECT_EQ(open_errno_in(join, "/dev/null"), 0);
  EXPECT_EQ(open_errno_in(join, "/dev/zero"), EPERM);
  EXPECT_EQ(open_errno_in(join, "/dev/full"), EPERM);
  // Replace: still one program attached, and it now allows /dev/zero.
  rules.push_back(parse_rule("c 1:5 rw", true).value());
  st = v2::set_device_rules(d, rules);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(v2::attached_device_programs(fd.get()).value().size(), 1u);
  EXPECT_EQ(open_errno_in(join, "/dev/zero"), 0);
  EXPECT_EQ(open_errno_in(join, "/dev/full"), EPERM);
}

}  // namespace
}  // namespace berth::cgroups
