// The parent's side on the seam: create's launch (exec.fifo, the init's bind sources, the
// kill of a half-made init through its pidfd) and restore's host steps around CRIU (the
// criu-root bind, mount points, the empty network namespace, the unbind), run against
// RecordingSys. Golden order first; then each call failed in turn (EIO): every failure
// ends the sequence there with one error naming the call, except the best-effort ones
// (the undo's kill and unbind), and restore's rollback leaves no criu-root behind.
#include <fcntl.h>
#include <sched.h>
#include <linux/openat2.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "cgroups/manager.h"
#include "container/cgroup_setup.h"
#include "container/launch.h"
#include "container/process/sync.h"
#include "container/restore_host.h"
#include "support/fakes/recording_sys.h"
#include "unit/cgroups/fake_tree.h"
#include "unit/cgroups/systemd/fake_bus.h"
#include "util/rollback.h"

namespace berth::container {
namespace {

struct Outcome {
  bool ok = false;
  std::string error;
};

Outcome from(const Status& st) { return {st.ok(), st ? "" : st.error().message()}; }

// create's bind sources cross a real socket: each one opened beneath the init's root is a
// real fd (of /dev/null), logged as the fake's.
class SourcesSys : public test::RecordingSys {
 public:
  Result<UniqueFd> openat2(int dirfd, const std::string& path, uint64_t flags, uint64_t mode,
                           uint64_t resolve) override {
    BERTH_ASSIGN(UniqueFd fd, RecordingSys::openat2(dirfd, path, flags, mode, resolve));
    if (!real_sources || !(resolve & RESOLVE_IN_ROOT)) return fd;
    return UniqueFd(::open("/dev/null", O_PATH | O_CLOEXEC));
  }
  bool real_sources = false;
  std::vector<process::Message> sent;  // what the init was told
};

// create: exec.fifo in the state directory; the init asks for its bind sources (a user
// namespace); then the create fails and the undo kills the forked init through its pidfd.
Outcome create_parent(SourcesSys& sys) {
  sys.real_sources = true;
  sys.add_dir("/run/berth/c1", 0700);
  sys.add_dir("/proc/42/root");
  sys.add_dir("/proc/42/root/srv/data");
  sys.add_file("/proc/42/root/etc/hosts");
  int dirfd = sys.fake_fd("/run/berth/c1");
  auto fifo = open_exec_fifo(sys, dirfd);
  if (!fifo) return {false, fifo.error().message()};
  linux::rootfs::RootfsPlan plan;
  auto step = [&](const char* dest, const char* src, linux::rootfs::MountKind kind) {
    linux::rootfs::MountStep m;
    m.destination = dest;
    m.source = src;
    m.kind = kind;
    plan.mounts.push_back(m);
  };
  step("/data", "/srv/data", linux::rootfs::MountKind::kBind);
  step("/proc", "proc", linux::rootfs::MountKind::kFilesystem);
  step("/etc/hosts", "/etc/hosts", linux::rootfs::MountKind::kBind);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return {false, "socketpair"};
  UniqueFd ours(sv[0]), theirs(sv[1]);
  Status st = send_bind_sources(sys, 42, ours.get(), &plan);
  kill_through_pidfd(sys, sys.fake_fd("/[pidfd 43]"));
  ::fcntl(theirs.get(), F_SETFL, O_NONBLOCK);
  while (auto m = process::receive(theirs.get())) sys.sent.push_back(std::move(*m));
  return from(st);
}

spec::Spec restore_spec() {
  spec::Spec s;
  auto mount = [&](const char* dest, const char* type, const char* src, std::vector<std::string> opts) {
    spec::Mount m;
    m.destination = dest;
    m.type = type;
    m.source = src;
    m.options = std::move(opts);
    s.mounts.push_back(m);
  };
  mount("/proc", "proc", "proc", {});
  mount("/dev", "tmpfs", "tmpfs", {});
  mount("/dev/shm", "tmpfs", "shm", {});  // under a tmpfs: CRIU restores it
  mount("/etc/hosts", "bind", "/host/hosts", {"rbind", "ro"});
  mount("/data", "", "data", {"bind"});  // relative to the bundle
  return s;
}

// restore: the rootfs bound at criu-root, the mount points made, an empty network
// namespace for CRIU, the unbind once CRIU is done.
Outcome restore_host(test::RecordingSys& sys, Rollback& undo) {
  sys.add_dir("/run/berth/c1", 0700);
  sys.add_dir("/bundle/rootfs");
  sys.add_dir("/bundle/rootfs/proc");
  sys.add_dir("/bundle/data");
  sys.add_file("/host/hosts");
  sys.add_file("/proc/thread-self/ns/net");
  int dirfd = sys.fake_fd("/run/berth/c1");
  auto at = bind_root(sys, dirfd, "/run/berth/c1", "/bundle/rootfs", undo);
  if (!at) return {false, at.error().message()};
  Status st = prepare_mountpoints(sys, restore_spec(), "/bundle/rootfs", "/bundle");
  if (st) {
    auto ns = new_empty_netns(sys);
    if (!ns) st = std::move(ns).error();
  }
  unbind_root(sys, dirfd, *at);
  return from(st);
}

Outcome restore_host_rolled_back(test::RecordingSys& sys) {
  Rollback undo;
  Outcome o = restore_host(sys, undo);
  undo.run();
  return o;
}

TEST(ParentSequence, CreateGolden) {
  SourcesSys sys;
  Outcome o = create_parent(sys);
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_EQ(sys.log_text(), R"(mknodat(3, "exec.fifo", fifo 0622)
openat(3, "exec.fifo", O_RDWR) = 4
openat2(AT_FDCWD, "/proc/42/root", O_PATH|O_DIRECTORY, 0) = 5
openat2(5, "/srv/data", O_PATH, RESOLVE_IN_ROOT) = 6
openat2(5, "/etc/hosts", O_PATH, RESOLVE_IN_ROOT) = 7
pidfd_kill(8)
)");
  // One kMountSource per runtime-opened bind (by its index in the plan), each with its fd,
  // then the go.
  ASSERT_EQ(sys.sent.size(), 3u);
  EXPECT_EQ(sys.sent[0].type, process::Msg::kMountSource);
  EXPECT_EQ(sys.sent[0].value, 0);
  EXPECT_TRUE(sys.sent[0].fd);
  EXPECT_EQ(sys.sent[1].type, process::Msg::kMountSource);
  EXPECT_EQ(sys.sent[1].value, 2);
  EXPECT_TRUE(sys.sent[1].fd);
  EXPECT_EQ(sys.sent[2].type, process::Msg::kGo);
}

// The mount points: /proc is there already, /dev is made (a tmpfs's; /dev/shm below it is
// not), /etc/hosts as a file (its bind source is one), data as a directory.
TEST(ParentSequence, RestoreGolden) {
  test::RecordingSys sys;
  Rollback undo;
  Outcome o = restore_host(sys, undo);
  ASSERT_TRUE(o.ok) << o.error;
  undo.commit();
  EXPECT_EQ(sys.log_text(), R"(mkdirat(3, "criu-root", 0755)
mount("/bundle/rootfs", "/run/berth/c1/criu-root", "", bind|rec, "")
openat(AT_FDCWD, "/bundle/rootfs", O_PATH|O_DIRECTORY) = 4
openat2(4, "proc", O_PATH, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = 5
openat2(4, "dev", O_PATH, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = -ENOENT
openat2(4, ".", O_PATH|O_DIRECTORY, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = 6
mkdirat(6, "dev", 0755)
openat(6, "dev", O_PATH|O_DIRECTORY|O_NOFOLLOW) = 7
fstatat(AT_FDCWD, "/host/hosts", 0) = f 0644
openat2(4, "etc/hosts", O_PATH, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = -ENOENT
openat2(4, "etc", O_PATH|O_DIRECTORY, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = -ENOENT
openat2(4, ".", O_PATH|O_DIRECTORY, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = 8
mkdirat(8, "etc", 0755)
openat(8, "etc", O_PATH|O_DIRECTORY|O_NOFOLLOW) = 9
mknodat(9, "hosts", reg 0644)
openat(9, "hosts", O_PATH|O_NOFOLLOW) = 10
fstatat(AT_FDCWD, "/bundle/data", 0) = d 0755
openat2(4, "data", O_PATH, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = -ENOENT
openat2(4, ".", O_PATH|O_DIRECTORY, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = 11
mkdirat(11, "data", 0755)
openat(11, "data", O_PATH|O_DIRECTORY|O_NOFOLLOW) = 12
openat(AT_FDCWD, "/proc/thread-self/ns/net", O_RDONLY) = 13
unshare(CLONE_NEWNET)
openat(AT_FDCWD, "/proc/thread-self/ns/net", O_RDONLY) = 14
setns(13, CLONE_NEWNET)
umount2("/run/berth/c1/criu-root", MNT_DETACH)
unlinkat(3, "criu-root", AT_REMOVEDIR)
)");
}

// --systemd-cgroup: after the init's first go, the unit started with it and systemd's job
// awaited while the init sets itself up (place_in_unit), over a real socket, a fake bus
// and a fake cgroup tree (hybrid: the v1 hierarchies systemd leaves out are joined after
// the job).
struct Placement {
  cgroups::testing::FakeTree tree{cgroups::Layout::kHybrid};
  cgroups::Host host = tree.host();
  cgroups::testing::FakeBus* bus = nullptr;
  Staged s;
  CreateOptions o;
  Rollback undo;
  test::RecordingSys sys;
  Launcher l{s, o, undo, sys, {}, {}, {}, 0, {}, {}, false};
  UniqueFd ours, theirs;  // the parent's end, the init's

  Placement() {
    host.systemd_running = true;
    cgroups::Config cfg;
    cfg.cgroups_path = "system.slice:docker:abc";
    cfg.id = "abc";
    cfg.host = &host;
    auto p = cgroups::systemd::plan(cfg);
    EXPECT_TRUE(p);
    s.cg.paths = *cgroups::Manager::planned_paths(p->files);
    s.cg.systemd.emplace(std::move(*p));
    auto b = std::make_unique<cgroups::testing::FakeBus>();
    bus = b.get();
    s.cg.bus = std::move(b);
    bus->on_wait = [this] { tree.add_cgroup("/system.slice/docker-abc.scope"); };  // the job runs
    l.init_pid = 42;
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    ours.reset(sv[0]);
    theirs.reset(sv[1]);
    ::fcntl(theirs.get(), F_SETFL, O_NONBLOCK);
  }
  std::vector<process::Msg> told() {  // what the init was sent
    std::vector<process::Msg> out;
    while (auto m = process::receive(theirs.get())) out.push_back(m->type);
    return out;
  }
};

TEST(ParentSequence, SystemdUnitStartedAndAwaitedThenPlaced) {
  Placement t;
  std::vector<std::string> at_start;
  t.bus->on_start = [&] { at_start = t.bus->log; };
  auto st = place_in_unit(t.l, t.ours.get());
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(at_start, std::vector<std::string>{"start docker-abc.scope"});
  EXPECT_NE(std::find(t.bus->started.begin(), t.bus->started.end(),
                      cgroups::systemd::Property{"PIDs", cgroups::systemd::Value::u32_array({42})}),
            t.bus->started.end());
  EXPECT_EQ(t.bus->log, (std::vector<std::string>{"start docker-abc.scope", "wait 1 30000"}));
  EXPECT_EQ(t.told(), std::vector<process::Msg>{process::Msg::kPlaced});
  ASSERT_TRUE(t.s.cg.manager);
  EXPECT_TRUE(t.s.cg.job.empty());
  EXPECT_EQ(t.tree.read(t.tree.file("freezer", "/system.slice/docker-abc.scope", "cgroup.procs")), "42");
  // Placed: a second call asks nothing, and a later failure's undo is the started unit's
  // usual removal, not an abandon.
  ASSERT_TRUE(place_in_unit(t.l, t.ours.get()));
  abandon_unit(t.s.cg);
  EXPECT_EQ(t.bus->log.size(), 2u);
  EXPECT_TRUE(t.told().empty());
}

// The job fails after the init set itself up: create fails with the job's end, the init is
// never told it is placed (it waits, and create's undo kills it), the unit is reset, and
// the create's undo has nothing more to stop.
TEST(ParentSequence, SystemdJobFailsAfterTheInitSetUp) {
  Placement t;
  t.bus->job_result = "failed";
  auto st = place_in_unit(t.l, t.ours.get());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "error creating systemd unit `docker-abc.scope`: got `failed`");
  EXPECT_TRUE(t.told().empty());
  EXPECT_FALSE(t.s.cg.manager);
  abandon_unit(t.s.cg);
  EXPECT_EQ(t.bus->log, (std::vector<std::string>{"start docker-abc.scope", "wait 1 30000",
                                                  "reset-failed docker-abc.scope"}));
}

// An init that failed (and ended) meanwhile leaves systemd no pid to move: the job fails,
// or the start is refused; either way the init's own error is the one create reports.
TEST(ParentSequence, SystemdFailureAfterTheInitReportedItsError) {
  for (bool refused : {false, true}) {
    SCOPED_TRACE(refused ? "start refused" : "job failed");
    Placement t;
    if (refused) t.bus->exists_times = 2;
    else t.bus->job_result = "failed";
    ASSERT_TRUE(process::send_error(t.theirs.get(), Error::generic("prepare rootfs: mount /proc: no such device")));
    auto st = place_in_unit(t.l, t.ours.get());
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().message(), "prepare rootfs: mount /proc: no such device");
    EXPECT_TRUE(t.told().empty());
    EXPECT_TRUE(t.s.cg.job.empty());
  }
}

// systemd never finishes the job: after the job timeout the unit is stopped and create
// fails; the init was never told to go on past its set-up.
TEST(ParentSequence, SystemdJobNeverEndsTimesOut) {
  Placement t;
  t.bus->job_timeout = true;
  auto st = place_in_unit(t.l, t.ours.get());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().err(), ETIMEDOUT);
  EXPECT_NE(st.error().message().find("timeout waiting for systemd to create docker-abc.scope"), std::string::npos)
      << st.error().message();
  EXPECT_TRUE(t.told().empty());
  EXPECT_EQ(t.bus->log, (std::vector<std::string>{"start docker-abc.scope", "wait 1 30000", "stop docker-abc.scope",
                                                  "wait 2 30000"}));
  abandon_unit(t.s.cg);
  EXPECT_EQ(t.bus->log.size(), 4u);
}

// create fails between the unit's start and the job's wait: its undo kills what the unit
// holds and stops the unit, whose job it never awaited.
TEST(ParentSequence, SystemdUnitAbandonedBeforeItsJobIsStopped) {
  Placement t;
  ASSERT_TRUE(begin_unit(t.s.cg, 42));
  abandon_unit(t.s.cg);
  EXPECT_TRUE(t.s.cg.job.empty());
  EXPECT_EQ(t.bus->log, (std::vector<std::string>{"start docker-abc.scope", "stop docker-abc.scope", "wait 2 30000",
                                                  "reset-failed docker-abc.scope"}));
}

using Scenario = std::function<Outcome(SourcesSys&)>;
struct Named {
  std::string name;
  Scenario run;
  // Calls whose failure is no error of the sequence: (name, nth) of the name.
  std::function<bool(const std::string&, int)> best_effort;
};

std::vector<Named> scenarios() {
  // create: a bind source that cannot be opened goes without an fd (the init binds it
  // itself), and the undo's kill is best effort. restore: the unbind is, and the stat of a
  // bind source only chooses a file or a directory.
  auto create_tolerates = [](const std::string& call, int nth) {
    return call == "pidfd_kill" || (call == "openat2" && nth > 1);
  };
  auto restore_tolerates = [](const std::string& call, int) {
    return call == "umount2" || call == "unlinkat" || call == "fstatat";
  };
  return {{"create", create_parent, create_tolerates},
          {"restore", [](SourcesSys& sys) { return restore_host_rolled_back(sys); }, restore_tolerates}};
}

std::string call_name(const std::string& line) { return line.substr(0, line.find('(')); }

class ParentFaults : public ::testing::TestWithParam<Named> {};

TEST_P(ParentFaults, EveryFailedCallStopsTheSequenceWithAnErrorNamingIt) {
  const Named& n = GetParam();
  SourcesSys clean;
  Outcome good = n.run(clean);
  ASSERT_TRUE(good.ok) << good.error;
  std::map<std::string, int> seen;
  int checked = 0;
  for (size_t i = 0; i < clean.log().size(); ++i) {
    std::string call = call_name(clean.log()[i]);
    int nth = ++seen[call];
    SCOPED_TRACE("failing call " + std::to_string(i + 1) + ": " + clean.log()[i]);
    SourcesSys sys;
    sys.fail(call, nth, EIO);
    Outcome o = n.run(sys);
    EXPECT_FALSE(sys.exists("/run/berth/c1/criu-root")) << "the rollback left criu-root";
    if (n.best_effort(call, nth)) continue;
    ++checked;
    ASSERT_FALSE(o.ok);
    EXPECT_NE(o.error.find(call), std::string::npos) << o.error;
    EXPECT_NE(o.error.find("input/output error"), std::string::npos) << o.error;
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Sequences, ParentFaults, ::testing::ValuesIn(scenarios()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace berth::container
