// Golden order of the process engine's system calls (src/container/process/*), run against
// RecordingSys: the identity and privilege drop of the payload (groups < gid < uid <
// capabilities < no_new_privs < close_range < seccomp < execve: the container's filter
// is followed by execve alone; without noNewPrivileges, where loading it needs
// CAP_SYS_ADMIN, the capability sets keep that until the filter is in and one capset
// follows it), the namespace joins of an exec tenant and of an init joining namespaces,
// the init's stages, and what each sequence tells the runtime over the sync socket.
#include <gtest/gtest.h>
#include <sched.h>


#include "container/process/steps.h"
#include "linux/namespaces.h"
#include "unit/container/process_fixture.h"

namespace berth::container::process::testing {
namespace {

// The payload of an exec tenant for each identity (the sync socket is fd 100: it stays
// open, close-on-exec, until execve).
const char* const kTenantPayloads[][2] = {
    {"root_defaults", R"(chdir("/srv/app")
prctl(PR_SET_KEEPCAPS, 1)
drop_bounding_caps(keep 0x20000420)
set_groups([])
setresgid(0)
setresuid(0)
prctl(PR_SET_KEEPCAPS, 0)
capset(effective 0x20000420, permitted 0x20000420, inheritable 0)
set_ambient_caps(0x400)
umask(022) = 022
prctl(PR_SET_PDEATHSIG, 0)
close_range(3, 99)
close_range(101, ~0)
execve("/bin/sh", ["/bin/sh", "-c", "true"], ["PATH=/usr/bin:/bin", "HOME=/root"])
)"},
    {"user_nnp_seccomp_groups", R"(chdir("/srv/app")
prctl(PR_SET_KEEPCAPS, 1)
drop_bounding_caps(keep 0x20000420)
set_groups([10, 29])
setresgid(1000)
setresuid(1000)
prctl(PR_SET_KEEPCAPS, 0)
capset(effective 0x20000420, permitted 0x20000420, inheritable 0)
set_ambient_caps(0x400)
prctl(PR_SET_NO_NEW_PRIVS, 1)
umask(022) = 022
prctl(PR_SET_PDEATHSIG, 0)
close_range(3, 99)
close_range(101, ~0)
seccomp_set_filter(0 insns, 0)
execve("/bin/sh", ["/bin/sh", "-c", "true"], ["PATH=/usr/bin:/bin", "HOME=/home/u"])
)"},
    // Without noNewPrivileges the filter is loaded while CAP_SYS_ADMIN (0x200000) is still
    // held: the sets keep it past the uid switch, and the container's follow the filter.
    {"user_seccomp_without_nnp", R"(chdir("/srv/app")
prctl(PR_SET_KEEPCAPS, 1)
drop_bounding_caps(keep 0x20000420)
set_groups([])
setresgid(1000)
setresuid(1000)
prctl(PR_SET_KEEPCAPS, 0)
capset(effective 0x20200420, permitted 0x20200420, inheritable 0)
set_ambient_caps(0x400)
umask(022) = 022
prctl(PR_SET_PDEATHSIG, 0)
close_range(3, 99)
close_range(101, ~0)
seccomp_set_filter(0 insns, 0)
capset(effective 0x20000420, permitted 0x20000420, inheritable 0)
execve("/bin/sh", ["/bin/sh", "-c", "true"], ["PATH=/usr/bin:/bin", "HOME=/home/u"])
)"},
    // Without process.capabilities a non-root user ends with none; a filter to load
    // without noNewPrivileges needs CAP_SYS_ADMIN past the switch: every capability is
    // kept across it, CAP_SYS_ADMIN alone stays, and the empty sets follow the filter.
    {"user_seccomp_no_caps_without_nnp", R"(chdir("/srv/app")
prctl(PR_SET_KEEPCAPS, 1)
drop_bounding_caps(keep 0xffffffffffffffff)
set_groups([]) = -EPERM
setresgid(1000)
setresuid(1000)
prctl(PR_SET_KEEPCAPS, 0)
capset(effective 0x200000, permitted 0x200000, inheritable 0)
set_ambient_caps(0)
umask(022) = 022
prctl(PR_SET_PDEATHSIG, 0)
close_range(3, 99)
close_range(101, ~0)
seccomp_set_filter(0 insns, 0)
capset(effective 0, permitted 0, inheritable 0)
execve("/bin/sh", ["/bin/sh", "-c", "true"], ["PATH=/usr/bin:/bin", "HOME=/home/u"])
)"},
    // A user namespace whose maps' writer could not map groups: setgroups is denied
    // (EPERM) and, with no additionalGids, that is no error.
    {"rootless_no_caps", R"(chdir("/srv/app")
set_groups([]) = -EPERM
setresgid(0)
setresuid(0)
prctl(PR_SET_NO_NEW_PRIVS, 1)
umask(022) = 022
prctl(PR_SET_PDEATHSIG, 0)
close_range(3, 99)
close_range(101, ~0)
execve("/bin/sh", ["/bin/sh", "-c", "true"], ["PATH=/usr/bin:/bin", "HOME=/root"])
)"},
};

std::string tenant_payload(const std::string& identity) {
  for (const auto& [name, log] : kTenantPayloads)
    if (identity == name) return log;
  return "(no golden log)";
}

// Index of the first log line starting with `prefix` (-1: none).
int at(const test::RecordingSys& sys, const std::string& prefix) {
  const auto& log = sys.log();
  for (size_t i = 0; i < log.size(); ++i)
    if (log[i].rfind(prefix, 0) == 0) return static_cast<int>(i);
  return -1;
}

// The invariant the golden logs spell out, checked on its own.
void expect_privilege_order(const test::RecordingSys& sys, const Identity& id) {
  std::vector<std::string> chain = {"set_groups(", "setresgid(", "setresuid("};
  if (id.caps) chain.push_back("capset(");
  if (id.no_new_privileges) chain.push_back("prctl(PR_SET_NO_NEW_PRIVS");
  chain.push_back("close_range(");
  if (id.seccomp) chain.push_back("seccomp_set_filter(");
  chain.push_back("execve(");
  for (size_t i = 1; i < chain.size(); ++i) {
    EXPECT_GE(at(sys, chain[i - 1]), 0) << chain[i - 1];
    EXPECT_LT(at(sys, chain[i - 1]), at(sys, chain[i])) << chain[i - 1] << " before " << chain[i];
  }
  if (id.caps) {
    EXPECT_LT(at(sys, "drop_bounding_caps("), at(sys, "set_groups("));
  }
}

// Nothing of ours runs under the container's filter: with noNewPrivileges its load is
// followed by execve alone; without, by the one capset that gives up CAP_SYS_ADMIN.
void expect_filter_then_exec(const test::RecordingSys& sys, const Identity& id) {
  if (!id.seccomp) return;
  int load = at(sys, "seccomp_set_filter(");
  ASSERT_GE(load, 0);
  std::vector<std::string> after(sys.log().begin() + load + 1, sys.log().end());
  ASSERT_FALSE(after.empty());
  EXPECT_EQ(after.back().rfind("execve(", 0), 0u) << after.back();
  after.pop_back();
  if (id.no_new_privileges) {
    EXPECT_TRUE(after.empty()) << after.front();
  } else {
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0].rfind("capset(", 0), 0u) << after[0];
  }
}

// The init keeps exec.fifo (here at fd kFifoFd) open until execve: `start` returns once it
// is gone. Its golden log is the tenant's with that fd kept instead of the sync socket
// (closed after `start` came).

std::string init_payload(const std::string& identity) {
  std::string log = tenant_payload(identity);
  const std::string tenant_close = "close_range(3, 99)\nclose_range(101, ~0)\n";
  auto pos = log.find(tenant_close);
  if (pos == std::string::npos) return "(no close_range in the golden log)";
  return log.replace(pos, tenant_close.size(), "close_range(3, 101)\nclose_range(103, ~0)\n");
}

class PayloadOrder : public ::testing::TestWithParam<Identity> {};

// An exec tenant (either way it was cloned: in our memory, or the fork that is the
// fallback, run the same payload) and a direct init (a `run` whose parent sleeps until
// the execve) drop privileges the same way and exec at once: no exec.fifo, no wait for
// `start`, the sync socket kept (close-on-exec) for an execve failure. The direct init
// reports kReady before its filter and execve (its parent tells an init that died from
// one whose payload runs); a tenant's parent hears the socket close at execve.
TEST_P(PayloadOrder, TenantAndDirectInitDropPrivilegesInOrderAndExecAtOnce) {
  const Identity& id = GetParam();
  for (bool direct : {false, true}) {
    SCOPED_TRACE(direct ? "direct init" : "exec tenant");
    test::RecordingSys sys;
    add_user_files(sys);
    sys.add_dir("/srv/app");
    Channel ch;
    InitConfig cfg = payload_config(id, ch.child(), !direct);
    if (direct) cfg.launch = Launch::kDirect;  // its fifo_fd stays -1: a wait for `start` would fail, not block
    if (!id.caps) sys.fail("set_groups", 1, EPERM);
    EXPECT_EQ(run_payload(sys, cfg), 0) << ch.error();
    EXPECT_EQ(changes(sys), tenant_payload(id.name));
    expect_privilege_order(sys, id);
    expect_filter_then_exec(sys, id);
    EXPECT_LT(at(sys, "prctl(PR_SET_PDEATHSIG, 0)"), at(sys, "close_range("));
    auto sent = ch.sent();
    ASSERT_EQ(sent.size(), direct ? 1u : 0u);
    if (direct) {
      EXPECT_EQ(sent[0].type, Msg::kReady);
    }
  }
}

// The init's payload: `create`'s kSettled (the pid recorded after the go, while the init
// set up), the same drop, then kReady, the wait for `start` on exec.fifo, and only then
// the fds, the filter and execve (its sync socket is closed by then, exec.fifo kept).
TEST_P(PayloadOrder, InitReportsReadyWaitsForStartThenExecs) {
  const Identity& id = GetParam();
  test::RecordingSys sys;
  add_user_files(sys);
  sys.add_dir("/srv/app");
  Channel ch;
  int fifo[2];
  ASSERT_EQ(::pipe2(fifo, O_CLOEXEC), 0);
  ASSERT_EQ(::write(fifo[1], "0", 1), 1);  // `berth start`
  ASSERT_EQ(::dup3(fifo[0], kFifoFd, O_CLOEXEC), kFifoFd);
  InitConfig cfg = payload_config(id, ch.child(), false);
  cfg.fifo_fd = kFifoFd;
  cfg.settle_pending = true;
  ch.queue(Msg::kSettled);
  if (!id.caps) sys.fail("set_groups", 1, EPERM);
  EXPECT_EQ(run_payload(sys, cfg), 0);
  ch.child_was_closed();
  for (int fd : {fifo[0], fifo[1], kFifoFd}) ::close(fd);
  EXPECT_FALSE(cfg.settle_pending);
  EXPECT_EQ(changes(sys), init_payload(id.name));
  expect_privilege_order(sys, id);
  expect_filter_then_exec(sys, id);
  auto sent = ch.sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].type, Msg::kReady);
}

// Its stage one waits for no go either: it joined its cgroups and recorded its pid itself.
TEST(InitStageOne, DirectInitWaitsForNoGo) {
  test::RecordingSys sys;
  Channel ch;
  ch.runtime_gone();
  auto plan = linux::plan_namespaces({{"mount", ""}, {"cgroup", ""}});
  ASSERT_TRUE(plan) << plan.error().message();
  InitConfig cfg;
  cfg.sync_fd = ch.child();
  cfg.ns = &*plan;
  cfg.launch = Launch::kDirect;
  cfg.parent_death_kill = true;
  cfg.clone_flags = CLONE_NEWNS;
  cfg.unshare_flags = CLONE_NEWCGROUP;
  auto st = init_stage_one(sys, cfg);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
prctl(PR_SET_DUMPABLE, 0)
unshare(CLONE_NEWCGROUP)
)");
}

// Killed before it sent kSettled, `create` leaves no init behind: the init stops before it
// clears its parent death signal, reports nothing ready and runs nothing.
TEST(PayloadOrder, InitWithoutThePidRecordNeverClearsItsDeathSignal) {
  test::RecordingSys sys;
  add_user_files(sys);
  sys.add_dir("/srv/app");
  Channel ch;
  InitConfig cfg = payload_config(identities()[0], ch.child(), false);
  cfg.settle_pending = true;
  ch.runtime_gone();
  EXPECT_EQ(run_payload(sys, cfg), 1);
  EXPECT_EQ(changes(sys), "");
}

// On v1 the init moves itself into each hierarchy (tasks ← "0" on the parent's fds) while
// it is one thread in the host's namespaces: after the death signal and non-dumpable, before
// the go (its first message to the parent comes later) and before any join or unshare.
TEST(InitStageOne, MovesItselfIntoTheV1CgroupsBeforeTheGoAndAnyJoin) {
  test::RecordingSys sys;
  Channel ch;
  ch.queue(Msg::kGo);
  linux::NamespacePlan plan;
  plan.joins.push_back({"network", CLONE_NEWNET, UniqueFd(sys.fake_fd("/ns/net"))});
  InitConfig cfg;
  cfg.sync_fd = ch.child();
  cfg.ns = &plan;
  cfg.unshare_flags = CLONE_NEWNS | CLONE_NEWPID;
  for (const char* h : {"cpu,cpuacct", "memory"}) {
    std::string path = std::string("/sys/fs/cgroup/") + h + "/c1/tasks";
    cfg.cgroup_tasks.push_back({sys.fake_fd(path), path});
  }
  auto st = init_stage_one(sys, cfg);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
prctl(PR_SET_DUMPABLE, 0)
write_fd(4, "0")
write_fd(5, "0")
setns(fd, CLONE_NEWNET)
unshare(CLONE_NEWNS|CLONE_NEWPID)
)");
  EXPECT_TRUE(ch.sent().empty());
}

// A hierarchy that refuses the move (ENOSPC: a v1 cpuset without cpus or mems): the
// error names the file and goes to the parent; nothing after it runs.
TEST(InitStageOne, AFailedCgroupMoveStopsBeforeAnyJoin) {
  test::RecordingSys sys;
  sys.fail("write_fd", 2, ENOSPC);
  Channel ch;
  ch.queue(Msg::kGo);
  linux::NamespacePlan plan;
  InitConfig cfg;
  cfg.sync_fd = ch.child();
  cfg.ns = &plan;
  cfg.unshare_flags = CLONE_NEWNS;
  for (const char* h : {"cpu,cpuacct", "pids"}) {
    std::string path = std::string("/sys/fs/cgroup/") + h + "/c1/tasks";
    cfg.cgroup_tasks.push_back({sys.fake_fd(path), path});
  }
  auto st = init_stage_one(sys, cfg);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("join cgroups: write 0 to /sys/fs/cgroup/pids/c1/tasks"), std::string::npos)
      << st.error().message();
  EXPECT_EQ(sys.log().back(), R"(write_fd(4, "0") = -ENOSPC)");
}

// A kSettled that arrives ahead of an answer the init waits for (the parent sends it right
// after its go, before it reads anything) is taken on the way.
TEST(InitStageOne, TakesThePidRecordAheadOfTheIdMapsGo) {
  test::RecordingSys sys;
  Channel ch;
  ch.queue(Msg::kGo);
  ch.queue(Msg::kSettled);
  ch.queue(Msg::kGo);
  auto plan = linux::plan_namespaces({{"user", ""}, {"mount", ""}});
  ASSERT_TRUE(plan) << plan.error().message();
  InitConfig cfg;
  cfg.sync_fd = ch.child();
  cfg.ns = &*plan;
  cfg.unshare_flags = CLONE_NEWUSER | CLONE_NEWNS;
  cfg.settle_pending = true;
  auto st = init_stage_one(sys, cfg);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_FALSE(cfg.settle_pending);
  auto sent = ch.sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].type, Msg::kMapIds);
}

INSTANTIATE_TEST_SUITE_P(Identities, PayloadOrder, ::testing::ValuesIn(identities()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(PayloadOrder, PreservedFdsCrossExecveAndNothingElse) {
  test::RecordingSys sys;
  add_user_files(sys);
  sys.add_dir("/srv/app");
  Channel ch;
  InitConfig cfg = payload_config(identities()[0], ch.child(), true);
  cfg.preserve_fds = 2;
  ASSERT_EQ(run_payload(sys, cfg), 0);
  std::string log = changes(sys);
  EXPECT_NE(log.find("close_range(5, 99)\nclose_range(101, ~0)\nclear_cloexec(3)\nclear_cloexec(4)\nexecve("),
            std::string::npos)
      << log;
}

// An init joining namespaces by path: user first (every other join is checked against
// it), mount last; then the unshares, and root in the joined user namespace.
TEST(InitStageOne, JoinsUserFirstMountLastThenBecomesNamespaceRoot) {
  test::RecordingSys sys;
  Channel ch;
  ch.queue(Msg::kGo);
  auto plan = linux::plan_namespaces({{"mount", "/proc/self/ns/mnt"},
                                      {"network", "/proc/self/ns/net"},
                                      {"pid", ""},
                                      {"ipc", "/proc/self/ns/ipc"},
                                      {"user", "/proc/self/ns/user"},
                                      {"uts", "/proc/self/ns/uts"}});
  ASSERT_TRUE(plan) << plan.error().message();
  InitConfig cfg;
  cfg.sync_fd = ch.child();
  cfg.ns = &*plan;
  cfg.unshare_flags = CLONE_NEWPID;
  auto st = init_stage_one(sys, cfg);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
prctl(PR_SET_DUMPABLE, 0)
setns(fd, CLONE_NEWUSER)
setns(fd, CLONE_NEWIPC)
setns(fd, CLONE_NEWUTS)
setns(fd, CLONE_NEWNET)
setns(fd, CLONE_NEWNS)
unshare(CLONE_NEWPID)
clear_groups()
setresgid(0)
setresuid(0)
)");
  EXPECT_TRUE(ch.sent().empty());
}

// Rootless: the user namespace is unshared after the start, the runtime maps it
// (kMapIds ... kGo), and only then does the init turn non-dumpable and create the rest.
TEST(InitStageOne, LateUserNamespaceIsMappedBeforeAnythingElse) {
  test::RecordingSys sys;
  Channel ch;
  ch.queue(Msg::kGo, 2);
  linux::NamespacePlan plan;
  plan.new_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID;
  InitConfig cfg;
  cfg.sync_fd = ch.child();
  cfg.ns = &plan;
  cfg.dumpable_until_mapped = true;
  cfg.unshare_flags = plan.new_flags;
  cfg.time_offsets["monotonic"] = {5, 0};
  sys.add_dir("/proc/self");
  sys.add_file("/proc/self/timens_offsets");
  auto st = init_stage_one(sys, cfg);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
unshare(CLONE_NEWUSER)
prctl(PR_SET_DUMPABLE, 0)
unshare(CLONE_NEWNS|CLONE_NEWPID)
clear_groups()
setresgid(0)
setresuid(0)
openat(AT_FDCWD, "/proc/self/timens_offsets", O_WRONLY|O_NOFOLLOW) = 3
write_fd(3, "monotonic 5 0\n")
)");
  auto sent = ch.sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].type, Msg::kMapIds);
}

// Stage two without a mount namespace: session, names, chroot, then the attributes, in
// the order the runtime-spec lists them.
TEST(InitStageTwo, SessionNamesRootThenProcessAttributes) {
  test::RecordingSys sys;
  sys.add_dir("/rootfs");
  Channel ch;
  linux::NamespacePlan plan;
  InitConfig cfg = stage_two_config(ch.child(), &plan);
  ASSERT_TRUE(init_stage_two(sys, cfg));
  EXPECT_EQ(changes(sys), R"(setsid()
sethostname("box")
setdomainname("example")
chroot("/rootfs")
chdir("/")
set_rlimits([RLIMIT_NOFILE=512:1024])
set_oom_score_adj(100)
join_session_keyring("c1")
set_scheduler(SCHED_BATCH, nice 5)
set_io_priority(IOPRIO_CLASS_BE, 4)
set_personality(LINUX)
set_memory_policy(MPOL_BIND, "0")
)");
}

// --systemd-cgroup: systemd places the init while it sets up. Its cgroup namespace would
// take the cgroup of then as its root, so stage one holds it back; stage two makes it only
// once `create` said kPlaced, after its names and root and before the attributes.
TEST(InitPlacement, CgroupNamespaceWaitsForThePlacement) {
  test::RecordingSys sys;
  sys.add_dir("/rootfs");
  Channel ch;
  ch.queue(Msg::kGo);
  ch.queue(Msg::kSettled);
  ch.queue(Msg::kPlaced);
  linux::NamespacePlan plan;
  InitConfig cfg = stage_two_config(ch.child(), &plan);
  cfg.unshare_flags = CLONE_NEWCGROUP;
  cfg.placement_pending = cfg.settle_pending = true;
  ASSERT_TRUE(init_stage_one(sys, cfg));
  EXPECT_EQ(cfg.deferred_unshare, CLONE_NEWCGROUP);
  EXPECT_EQ(changes(sys).find("unshare"), std::string::npos) << changes(sys);
  ASSERT_TRUE(init_stage_two(sys, cfg));
  EXPECT_FALSE(cfg.placement_pending);
  EXPECT_FALSE(cfg.settle_pending);  // the pid record's notice, taken on the way
  EXPECT_EQ(cfg.deferred_unshare, 0);
  std::string log = changes(sys);
  EXPECT_NE(log.find("chdir(\"/\")\nunshare(CLONE_NEWCGROUP)\nset_rlimits("), std::string::npos) << log;
  EXPECT_TRUE(ch.sent().empty());
}

// Without the placement the init goes no further than its setup: the parent's error (or
// its end) stops it before the cgroup namespace and anything of the process's.
TEST(InitPlacement, NoPlacementNoNamespaceNoAttributes) {
  test::RecordingSys sys;
  sys.add_dir("/rootfs");
  Channel ch;
  ch.queue(Msg::kGo);
  linux::NamespacePlan plan;
  InitConfig cfg = stage_two_config(ch.child(), &plan);
  cfg.unshare_flags = CLONE_NEWCGROUP;
  cfg.placement_pending = true;
  ASSERT_TRUE(init_stage_one(sys, cfg));
  ch.runtime_gone();
  ASSERT_FALSE(init_stage_two(sys, cfg));
  std::string log = changes(sys);
  EXPECT_EQ(log.find("unshare"), std::string::npos) << log;
  EXPECT_EQ(log.find("set_rlimits"), std::string::npos) << log;
}

// kPlaced comes when systemd's job ends, whatever the init waits for then: ahead of the
// id maps' go it is taken on the way, and the cgroup namespace, made after the maps, is
// then made at once with the others (the init is in its cgroup already).
TEST(InitPlacement, TakesThePlacementAheadOfTheIdMapsGo) {
  test::RecordingSys sys;
  Channel ch;
  ch.queue(Msg::kGo);
  ch.queue(Msg::kPlaced);
  ch.queue(Msg::kGo);
  linux::NamespacePlan plan;
  plan.new_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWCGROUP;
  InitConfig cfg;
  cfg.sync_fd = ch.child();
  cfg.ns = &plan;
  cfg.unshare_flags = plan.new_flags;
  cfg.placement_pending = true;
  ASSERT_TRUE(init_stage_one(sys, cfg));
  EXPECT_FALSE(cfg.placement_pending);
  EXPECT_EQ(cfg.deferred_unshare, 0);
  std::string log = changes(sys);
  EXPECT_NE(log.find("unshare(CLONE_NEWNS|CLONE_NEWCGROUP)\n"), std::string::npos) << log;
  auto sent = ch.sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].type, Msg::kMapIds);
}

// The payload reports ready only once placed: a kPlaced still due is awaited before kReady.
TEST(InitPlacement, PayloadWaitsForThePlacementBeforeReady) {
  Channel ch;
  InitConfig cfg;
  cfg.sync_fd = ch.child();
  cfg.placement_pending = true;
  ch.queue(Msg::kHooksDone);
  auto st = wait_placed(cfg);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "sync: unexpected message from the runtime");
  ch.queue(Msg::kSettled);
  ch.queue(Msg::kPlaced);
  cfg.settle_pending = true;
  ASSERT_TRUE(wait_placed(cfg));
  EXPECT_FALSE(cfg.placement_pending);
  EXPECT_FALSE(cfg.settle_pending);
}

// exec: oomScoreAdj through the host's /proc before any join, then one setns on the
// init's pidfd with every namespace at once.
TEST(TenantEnter, OomScoreBeforeOneAtomicJoin) {
  test::RecordingSys sys;
  Channel ch;
  ch.queue(Msg::kGo);
  TenantConfig t;
  t.payload.new_keyring = false;  // UserAndInheritedAttributesBeforeTheFork
  t.payload.sync_fd = ch.child();
  t.payload.process.oom_score_adj = -500;
  t.init_pidfd = sys.fake_fd("/[pidfd]");
  t.join_types = {"user", "ipc", "uts", "network", "pid", "cgroup", "mount"};
  ASSERT_TRUE(tenant_enter(sys, t));
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
set_oom_score_adj(-500)
setns(fd, CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWNET|CLONE_NEWIPC|CLONE_NEWUTS|CLONE_NEWCGROUP)
)");
  EXPECT_EQ(t.init_pidfd, -1);  // it does not go with the process
}

// exec's tenant in the parent's memory (vfork_child): the parent sleeps until it exits and
// sends no kGo; waiting for one would read the closed socket and fail.
TEST(TenantEnter, WithTheParentAsleepNoGoIsAwaited) {
  test::RecordingSys sys;
  Channel ch;
  ch.runtime_gone();
  TenantConfig t;
  t.payload.new_keyring = false;  // UserAndInheritedAttributesBeforeTheFork
  t.parent_asleep = true;
  t.payload.sync_fd = ch.child();
  t.init_pidfd = sys.fake_fd("/[pidfd]");
  t.join_types = {"ipc", "network", "pid", "mount"};
  auto st = tenant_enter(sys, t);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
setns(fd, CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWNET|CLONE_NEWIPC)
)");
}

// The tenant in our memory moves itself into the v1 hierarchies first, then its hook runs
// (execCPUAffinity.final, after the cpuset join that resets it), then the joins, then what
// a fork inherits (the session keyring here) before the fork into the pid namespace.
TEST(TenantEnter, WithTheParentAsleepItMovesItselfThenTheAffinityThenJoins) {
  test::RecordingSys sys;
  Channel ch;
  ch.runtime_gone();
  TenantConfig t;
  t.parent_asleep = true;
  t.payload.sync_fd = ch.child();
  t.init_pidfd = sys.fake_fd("/[pidfd]");
  t.join_types = {"pid", "mount"};
  for (const char* h : {"cpuset", "pids"}) {
    std::string path = std::string("/sys/fs/cgroup/") + h + "/c1/tasks";
    t.payload.cgroup_tasks.push_back({sys.fake_fd(path), path});
  }
  size_t calls_before_hook = 0;
  t.after_v1_join = [&] {
    calls_before_hook = sys.log().size();
    return ok();
  };
  auto st = tenant_enter(sys, t);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
write_fd(4, "0")
write_fd(5, "0")
setns(fd, CLONE_NEWNS|CLONE_NEWPID)
join_session_keyring("")
)");
  EXPECT_EQ(calls_before_hook, 3u);
}

// A kernel without setns on a pidfd (EINVAL): one namespace file at a time, user first,
// mount last.
TEST(TenantEnter, OlderKernelsJoinOneByOneUserFirstMountLast) {
  test::RecordingSys sys;
  Channel ch;
  ch.queue(Msg::kGo);
  sys.fail("setns", 1, EINVAL);
  TenantConfig t;
  t.payload.new_keyring = false;  // UserAndInheritedAttributesBeforeTheFork
  t.payload.sync_fd = ch.child();
  t.init_pid = ::getpid();
  t.init_pidfd = sys.fake_fd("/[pidfd]");
  t.join_types = {"mount", "pid", "network", "user", "ipc"};
  ASSERT_TRUE(tenant_enter(sys, t));
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
setns(fd, CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWNET|CLONE_NEWIPC) = -EINVAL
setns(fd, CLONE_NEWUSER)
setns(fd, CLONE_NEWIPC)
setns(fd, CLONE_NEWNET)
setns(fd, CLONE_NEWPID)
setns(fd, CLONE_NEWNS)
)");
}

// `--user NAME` from the container's passwd and group files (the implicit groups of runc's
// lookup) and the attributes a fork inherits: in the intermediate, after the joins and
// before the process exists in the container's pid namespace.
TEST(TenantEnter, UserAndInheritedAttributesBeforeTheFork) {
  test::RecordingSys sys;
  add_user_files(sys);
  Channel ch;
  ch.queue(Msg::kGo);
  TenantConfig t;
  t.payload.sync_fd = ch.child();
  t.payload.container_id = "c1";
  t.payload.process.io_priority = spec::IoPriority{"IOPRIO_CLASS_BE", 4};
  t.init_pidfd = sys.fake_fd("/[pidfd]");
  t.join_types = {"pid", "mount"};
  t.user_name = "u";
  ASSERT_TRUE(tenant_enter(sys, t));
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
setns(fd, CLONE_NEWNS|CLONE_NEWPID)
join_session_keyring("c1")
set_io_priority(IOPRIO_CLASS_BE, 4)
)");
  EXPECT_EQ(t.payload.process.user.uid, 1000u);
  EXPECT_EQ(t.payload.process.user.additional_gids, (std::vector<uint32_t>{10, 29}));
}

// Without a user namespace a container holding CAP_SYS_PTRACE can seize the process and
// make it call anything until its execve: it is born with the container's capabilities
// and only those berth still needs (setuid, setgid, setpcap, chown, dac_override,
// sys_resource, sys_nice), nothing inheritable, and the container's bounding set.
TEST(TenantEnter, CapabilitiesNarrowedBeforeTheFork) {
  test::RecordingSys sys;
  Channel ch;
  ch.queue(Msg::kGo);
  TenantConfig t;
  t.payload.sync_fd = ch.child();
  t.payload.container_id = "c1";
  t.payload.has_caps = true;
  uint64_t kill_and_bind = (uint64_t{1} << 5) | (uint64_t{1} << 10);
  t.payload.caps = linux::CapSets{kill_and_bind, kill_and_bind, 0, kill_and_bind, 0};
  t.held_caps = (uint64_t{1} << 41) - 1;
  t.init_pidfd = sys.fake_fd("/[pidfd]");
  t.join_types = {"pid", "mount"};
  ASSERT_TRUE(tenant_enter(sys, t));
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
setns(fd, CLONE_NEWNS|CLONE_NEWPID)
join_session_keyring("c1")
capset(effective 0x18005e3, permitted 0x18005e3, inheritable 0)
drop_bounding_caps(keep 0x420)
)");
}

// The process, once adopted: death signal, session, then only what a fork would not have
// passed on (rlimits: the fork would count against RLIMIT_NPROC).
TEST(TenantSettle, AdoptedThenSessionAndRlimits) {
  test::RecordingSys sys;
  Channel ch;
  ch.queue(Msg::kGo);
  TenantConfig t;
  t.payload.sync_fd = ch.child();
  t.payload.container_id = "c1";
  t.payload.process.rlimits = {{"RLIMIT_NOFILE", 64, 64}};
  ASSERT_TRUE(tenant_settle(sys, t));
  EXPECT_EQ(changes(sys), R"(prctl(PR_SET_PDEATHSIG, 9)
setsid()
set_rlimits([RLIMIT_NOFILE=64:64])
)");
}

}  // namespace
}  // namespace berth::container::process::testing
