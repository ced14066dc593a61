// vfork_child (exec's tenant and run's direct init in our memory): the child writes where
// we read, we sleep until it has exited, and its fd table is its own copy; given a cgroup v2
// directory it is born there (clone3, CLONE_INTO_CGROUP), or told to join where the kernel
// refuses that cgroup. Under a filter that refuses clone3 (ENOSYS, EPERM) vfork_child
// fails and spawn() falls back to a clone(2) copy, which its caller places.
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>

#include <gtest/gtest.h>

#include "container/process/spawn.h"
#include "util/file.h"
#include "util/scope_exit.h"
#include "support/cgroup2_root.h"

namespace berth::container::process {
namespace {

using berth::test::cgroup2_root;

// Not built into the sanitizer build (spawn.h): there exec clones a copy as before.
#define SKIP_WITHOUT_SHARED_MEMORY()                                                      \
  if (!kCanShareMemory) GTEST_SKIP() << "AddressSanitizer build: exec's tenant is a copy, " \
                                        "vfork_child is not used"

TEST(VforkChild, RunsInOurMemoryAndWeSleepUntilItExits) {
  SKIP_WITHOUT_SHARED_MEMORY();
  int seen = 0;
  auto child = vfork_child(0, [&] {
    ::usleep(50 * 1000);  // were we not asleep, we would read 0 below
    seen = 42;
    return 7;
  });
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(seen, 42);
  EXPECT_GE(child->pidfd(), 0);
  int status = child->wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

// The tenant closes everything but its sync socket (close_fds_except): our fds stay open.
TEST(VforkChild, ItsFdTableIsItsOwn) {
  SKIP_WITHOUT_SHARED_MEMORY();
  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  int closed = -2;
  auto child = vfork_child(0, [&] {
    closed = ::close(fd);
    return 0;
  });
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(closed, 0);
  EXPECT_GE(::fcntl(fd, F_GETFD), 0) << "the child's close reached our fd table";
  EXPECT_EQ(child->wait(), 0);
  ::close(fd);
}

// A process the tenant forks is a copy as ever: what it writes stays its own.
TEST(VforkChild, AForkOfTheChildIsACopy) {
  SKIP_WITHOUT_SHARED_MEMORY();
  int value = 1;
  int grandchild_status = -1;
  auto child = vfork_child(0, [&] {
    auto g = fork_child([&] {
      value = 2;
      return value == 2 ? 0 : 1;
    });
    if (!g) return 1;
    grandchild_status = g->wait();
    return 0;
  });
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(child->wait(), 0);
  EXPECT_EQ(grandchild_status, 0);
  EXPECT_EQ(value, 1);
}

// A cgroup2 directory of the test's own, removed at the end (after the children are reaped).
class TestCgroup {
 public:
  explicit TestCgroup(const std::string& name) : rel_("/" + name + "-" + std::to_string(::getpid())) {
    root_ = cgroup2_root();
    if (root_.empty() || ::geteuid() != 0) return;
    if (::mkdir(dir().c_str(), 0755) == 0) made_ = true;
  }
  ~TestCgroup() {
    if (made_) ::rmdir(dir().c_str());
  }
  // Why the test cannot run here ("" when it can).
  std::string unusable() const {
    if (::geteuid() != 0) return "needs root to make a cgroup";
    if (root_.empty()) return "no cgroup2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified";
    return made_ ? "" : "cannot make " + dir();
  }
  std::string dir() const { return root_ + rel_; }
  const std::string& rel() const { return rel_; }

 private:
  std::string root_, rel_;
  bool made_ = false;
};

#define SKIP_WITHOUT_CGROUP_CLONE(cg)                                                                 \
  SKIP_WITHOUT_SHARED_MEMORY();                                                                       \
  if (!kCanShareMemoryIntoCgroup) GTEST_SKIP() << "no clone3 trampoline for this architecture";     \
  if (auto why = (cg).unusable(); !why.empty()) GTEST_SKIP() << why

// Where run's direct init and exec's tenant are on pure cgroup v2: born in the cgroup, so
// no write to cgroup.procs, by them or by us.
TEST(VforkChild, BornInTheCgroupV2DirectoryItIsGiven) {
  TestCgroup cg("berth-unit-vfork");
  SKIP_WITHOUT_CGROUP_CLONE(cg);
  int fd = ::open(cg.dir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ScopeExit close_fd([fd] { ::close(fd); });
  bool in_cgroup = false, child_saw = false;
  std::string seen;
  auto child = vfork_child(0, [&] {
    child_saw = in_cgroup;
    auto text = file::read("/proc/self/cgroup");
    if (text) seen = *text;
    ::usleep(20 * 1000);  // were we not asleep, we would read "" below
    return 3;
  }, fd, &in_cgroup);
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_TRUE(in_cgroup);
  EXPECT_TRUE(child_saw) << "the child reads whether it was placed before it runs";
  EXPECT_NE(seen.find("0::" + cg.rel() + "\n"), std::string::npos) << seen;
  int status = child->wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  auto procs = file::read(cg.dir() + "/cgroup.procs");
  EXPECT_TRUE(procs && procs->empty()) << "reaped, it is gone from the cgroup";
}

// A "domain invalid" cgroup (the sibling of a threaded one) takes no process (EOPNOTSUPP):
// the child is cloned without CLONE_INTO_CGROUP, in our cgroup, and told so, to join by
// itself (spawn.cc does the same for a copy, with its caller joining).
TEST(VforkChild, WhereTheKernelRefusesTheCgroupTheChildIsToldToJoinItself) {
  TestCgroup cg("berth-unit-vfork-invalid");
  SKIP_WITHOUT_CGROUP_CLONE(cg);
  std::string threaded = cg.dir() + "/t", leaf = cg.dir() + "/d";
  ASSERT_EQ(::mkdir(threaded.c_str(), 0755), 0);
  ScopeExit rm_threaded([&] { ::rmdir(threaded.c_str()); });
  ASSERT_EQ(::mkdir(leaf.c_str(), 0755), 0);
  ScopeExit rm_leaf([&] { ::rmdir(leaf.c_str()); });
  if (!file::write_existing(AT_FDCWD, threaded + "/cgroup.type", "threaded")) GTEST_SKIP() << "cannot make a threaded cgroup here";
  auto type = file::read(leaf + "/cgroup.type");
  ASSERT_TRUE(type);
  ASSERT_EQ(*type, "domain invalid\n");
  int fd = ::open(leaf.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ScopeExit close_fd([fd] { ::close(fd); });
  auto ours = file::read("/proc/self/cgroup");
  ASSERT_TRUE(ours);
  bool in_cgroup = true, child_saw = true;
  std::string seen;
  auto child = vfork_child(0, [&] {
    child_saw = in_cgroup;
    if (auto text = file::read("/proc/self/cgroup")) seen = *text;
    return 0;
  }, fd, &in_cgroup);
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_FALSE(in_cgroup);
  EXPECT_FALSE(child_saw);
  EXPECT_EQ(seen, *ours);
  EXPECT_EQ(child->wait(), 0);
}

// A seccomp filter that answers every clone3 with `err`, loaded in the calling process.
bool refuse_clone3(int err) {
  struct sock_filter code[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<unsigned>(err) & SECCOMP_RET_DATA)),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// In a forked process (a filter cannot be unloaded): what goes wrong, as its exit code.
int clone3_refused_then_copy(int err, int cgroup_fd) {
  if (!refuse_clone3(err)) return 10;
  bool in_cgroup = true;
  if (kCanShareMemoryIntoCgroup) {
    auto shared = vfork_child(0, [] { return 0; }, cgroup_fd, &in_cgroup);
    if (shared) return 11;  // the filter did not bite
    if (shared.error().err() != err) return 12;
    if (in_cgroup) return 13;
  }
  // The caller's fallback: the copy, which the filter lets through clone(2) unplaced.
  int value = 1;
  auto copy = spawn(0, cgroup_fd, [&] {
    value = 2;
    return 5;
  }, &in_cgroup);
  if (!copy) return 14;
  if (in_cgroup) return 15;
  int status = copy->wait();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 5) return 16;
  if (value != 1) return 17;  // a copy, not our memory
  auto forked = fork_child([] { return 6; });
  if (!forked) return 18;
  status = forked->wait();
  return WIFEXITED(status) && WEXITSTATUS(status) == 6 ? 0 : 19;
}

// A filter around berth that refuses clone3 (ENOSYS: Docker's profile for a while, or an
// old kernel; EPERM: a stricter profile): the shared clone fails, and the usual copy is
// made by clone(2) instead, for the caller to place (create's and exec's fallback). The
// copy's part runs in the sanitizer build too, where every child is a copy.
TEST(VforkChild, UnderAFilterRefusingClone3TheCopyIsMadeByClone) {
  // Any directory: the filter answers before the kernel reads the clone's arguments.
  int fd = ::open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ScopeExit close_fd([fd] { ::close(fd); });
  for (int err : {ENOSYS, EPERM}) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(clone3_refused_then_copy(err, fd));
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "errno " << err << ": wait status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "errno " << err << ": step " << WEXITSTATUS(status)
                                      << " of clone3_refused_then_copy failed";
  }
}

}  // namespace
}  // namespace berth::container::process
