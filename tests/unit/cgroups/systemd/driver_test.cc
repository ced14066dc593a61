// The systemd driver against a fake bus and a fake cgroup tree: the unit it plans, what
// StartTransientUnit gets, the job handling (retry after UnitExists, failed job, timeout),
// the files written after the start, and that a failure leaves no unit behind.
#include "cgroups/systemd/driver.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "unit/cgroups/fake_tree.h"
#include "unit/cgroups/systemd/fake_bus.h"

namespace berth::cgroups::systemd {
namespace {

using cgroups::testing::FakeBus;
using cgroups::testing::FakeTree;

std::vector<std::string> texts(const std::vector<Property>& props) {
  std::vector<std::string> out;
  for (const auto& p : props) out.push_back(p.text());
  return out;
}

struct Fixture {
  explicit Fixture(Layout layout) : tree(layout), host(tree.host()) {
    host.systemd_running = true;
    cfg.cgroups_path = "system.slice:docker:abc";
    cfg.id = "abc";
    cfg.host = &host;
    cfg.resources = &resources;
  }
  FakeTree tree;
  Host host;
  spec::Resources resources;
  Config cfg;
};

TEST(SystemdDriver, PlansTheUnitAndItsCgroup) {
  Fixture f(Layout::kV2);
  auto p = plan(f.cfg);
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->unit.name, "docker-abc.scope");
  EXPECT_EQ(p->files.cgroups_path, "/system.slice/docker-abc.scope");
  EXPECT_FALSE(p->files.systemd);
  auto paths = Manager::planned_paths(p->files);
  ASSERT_TRUE(paths);
  EXPECT_EQ(paths->at(""), f.tree.root() + "/sys/fs/cgroup/system.slice/docker-abc.scope");
  EXPECT_EQ(unit_of(*paths), "docker-abc.scope");

  Fixture hybrid(Layout::kHybrid);
  auto hp = plan(hybrid.cfg);
  ASSERT_TRUE(hp);
  EXPECT_FALSE(hp->v2);
  auto hpaths = Manager::planned_paths(hp->files);
  ASSERT_TRUE(hpaths);
  EXPECT_EQ(hpaths->at("memory"), hybrid.tree.root() + "/sys/fs/cgroup/memory/system.slice/docker-abc.scope");
  EXPECT_EQ(hpaths->at("name=systemd"), hybrid.tree.root() + "/sys/fs/cgroup/systemd/system.slice/docker-abc.scope");
  EXPECT_EQ(unit_of(*hpaths), "docker-abc.scope");
}

TEST(SystemdDriver, RefusesWhatItCannotDo) {
  Fixture f(Layout::kV2);
  f.host.systemd_running = false;
  auto p = plan(f.cfg);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message(), "systemd not running on this host, cannot use systemd cgroups manager");
  f.host.systemd_running = true;
  f.cfg.rootless = true;
  // rootless needs the user's manager's control group, and one that is a user's manager
  EXPECT_EQ(plan(f.cfg).error().kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(plan(f.cfg, "/").error().kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(plan(f.cfg, "/user.slice/user-1000.slice/user@1000.service/../../x").error().kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(plan(f.cfg, "user.slice/user@1000.service").error().kind(), ErrorKind::kUnsupported);
  f.cfg.rootless = false;
  f.cfg.cgroups_path = "kubepods.slice::kubepods-pod1.slice";
  EXPECT_EQ(plan(f.cfg).error().kind(), ErrorKind::kUnsupported);
  f.cfg.cgroups_path = "system.slice:docker:../../etc";
  EXPECT_EQ(plan(f.cfg).error().kind(), ErrorKind::kInvalidSpec);
}

// runc's systemdUser: the unit is the user's manager's, its cgroup below that manager's
// ControlGroup; an empty cgroupsPath means "user.slice:berth:<id>" (runc: "user.slice:runc:").
TEST(SystemdDriver, RootlessUnitsLieInTheUsersManager) {
  Fixture f(Layout::kV2);
  f.cfg.rootless = true;
  const std::string m = "/user.slice/user-1000.slice/user@1000.service";
  auto p = plan(f.cfg, m + "/");
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->unit.name, "docker-abc.scope");
  EXPECT_EQ(p->files.cgroups_path, m + "/system.slice/docker-abc.scope");
  f.cfg.cgroups_path = "";
  p = plan(f.cfg, m);
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->unit.name, "berth-abc.scope");
  EXPECT_EQ(p->unit.slice, "user.slice");
  EXPECT_EQ(p->files.cgroups_path, m + "/user.slice/berth-abc.scope");
  EXPECT_TRUE(in_user_manager(f.tree.root() + "/sys/fs/cgroup" + p->files.cgroups_path));
  EXPECT_FALSE(in_user_manager("/sys/fs/cgroup/system.slice/docker-abc.scope"));
  EXPECT_FALSE(in_user_manager("/sys/fs/cgroup/user.slice/user-1000.slice/user@.service/x.scope"));
  EXPECT_FALSE(in_user_manager("/sys/fs/cgroup/user.slice/user@1000x.service/x.scope"));
  Fixture hybrid(Layout::kHybrid);
  hybrid.cfg.rootless = true;
  EXPECT_EQ(plan(hybrid.cfg, m).error().kind(), ErrorKind::kUnsupported);
}

TEST(SystemdDriver, StartPropertiesInRuncsOrder) {
  Fixture f(Layout::kV2);
  f.resources.memory = spec::Memory{};
  f.resources.memory->limit = 64 << 20;
  f.resources.pids = spec::Pids{.limit = 32};
  f.resources.unified["memory.oom.group"] = "1";
  auto p = plan(f.cfg);
  ASSERT_TRUE(p);
  auto props = start_properties(*p, 42, {{"org.systemd.property.TimeoutStopSec", "uint64 5"}}, {});
  ASSERT_TRUE(props) << props.error().message();
  EXPECT_EQ(texts(*props), (std::vector<std::string>{
                               "Description=s 'berth container abc'",
                               "Slice=s 'system.slice'",
                               "Delegate=b true",
                               "PIDs=au [42]",
                               "MemoryAccounting=b true",
                               "CPUAccounting=b true",
                               "IOAccounting=b true",
                               "TasksAccounting=b true",
                               "DefaultDependencies=b false",
                               "MemoryMax=t 67108864",
                               "TasksMax=t 32",
                               "TimeoutStopUSec=t 5000000",
                               "OOMPolicy=s 'kill'",
                           }));
  EXPECT_FALSE(start_properties(*p, 42, {{"org.systemd.property.PIDs", "[uint32 1]"}}, {}));
}

TEST(SystemdDriver, StartsTheUnitThenWritesTheFiles) {
  Fixture f(Layout::kV2);
  f.resources.memory = spec::Memory{};
  f.resources.memory->limit = 1 << 20;
  auto p = plan(f.cfg);
  ASSERT_TRUE(p);
  FakeBus bus;
  // systemd makes the scope's cgroup when it starts the unit.
  bus.on_start = [&] { f.tree.add_cgroup("/system.slice/docker-abc.scope"); };
  auto m = start(bus, *p, 42, {});
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(bus.log, (std::vector<std::string>{"start docker-abc.scope", "wait 1 30000"}));
  EXPECT_EQ(f.tree.read(f.tree.file("", "/system.slice/docker-abc.scope", "memory.max")), "1048576");
  EXPECT_EQ(m->paths().at(""), f.tree.root() + "/sys/fs/cgroup/system.slice/docker-abc.scope");

  spec::Resources more;
  more.pids = spec::Pids{.limit = 7};
  ASSERT_TRUE(update(bus, "docker-abc.scope", *m, more));
  EXPECT_EQ(bus.log.back(), "set docker-abc.scope");
  EXPECT_EQ(texts(bus.set), std::vector<std::string>{"TasksMax=t 7"});
  EXPECT_EQ(f.tree.read(f.tree.file("", "/system.slice/docker-abc.scope", "pids.max")), "7");
}

// The Version round trip is made only when a version-gated property is in play, and then
// the answer gates it as before (runc's gates: CPUQuotaPeriodUSec 242, AllowedCPUs 244).
TEST(SystemdDriver, AsksTheVersionOnlyWhenItMatters) {
  Fixture f(Layout::kV2);
  auto p = plan(f.cfg);
  ASSERT_TRUE(p);
  FakeBus bus;
  bus.on_start = [&] { f.tree.add_cgroup("/system.slice/docker-abc.scope"); };
  auto m = start(bus, *p, 42, {});
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(bus.log, (std::vector<std::string>{"start docker-abc.scope", "wait 1 30000"}));

  spec::Resources pids;
  pids.pids = spec::Pids{.limit = 7};
  ASSERT_TRUE(update(bus, "docker-abc.scope", *m, pids));
  EXPECT_EQ(bus.log.back(), "set docker-abc.scope");
  EXPECT_EQ(std::count(bus.log.begin(), bus.log.end(), "version"), 0);

  for (auto [version, want] : {std::pair{"252", true}, std::pair{"241", false}}) {
    spec::Resources cpu;
    cpu.cpu = spec::Cpu{};
    cpu.cpu->quota = 50000;
    cpu.cpu->period = 200000;
    bus.log.clear();
    bus.version_text = version;
    ASSERT_TRUE(update(bus, "docker-abc.scope", *m, cpu));
    EXPECT_EQ(bus.log, (std::vector<std::string>{"version", "set docker-abc.scope"}));
    auto it = std::find_if(bus.set.begin(), bus.set.end(), [](const Property& q) { return q.name == "CPUQuotaPeriodUSec"; });
    EXPECT_EQ(it != bus.set.end(), want) << version;
  }

  f.resources.cpu = spec::Cpu{};
  f.resources.cpu->cpus = "0";
  auto q = plan(f.cfg);
  ASSERT_TRUE(q);
  FakeBus bus2;
  bus2.version_text = "243";
  bus2.on_start = [&] { f.tree.add_cgroup("/system.slice/docker-abc.scope"); };
  ASSERT_TRUE(start(bus2, *q, 42, {}));
  EXPECT_EQ(bus2.log.front(), "version");
  EXPECT_EQ(std::find_if(bus2.started.begin(), bus2.started.end(), [](const Property& q) { return q.name == "AllowedCPUs"; }),
            bus2.started.end());
}

TEST(SystemdDriver, HybridJoinsTheHierarchiesSystemdLeavesOut) {
  Fixture f(Layout::kHybrid);
  auto p = plan(f.cfg);
  ASSERT_TRUE(p);
  FakeBus bus;
  bus.on_start = [&] { f.tree.add_cgroup("/system.slice/docker-abc.scope"); };
  auto m = start(bus, *p, 42, {});
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(f.tree.read(f.tree.file("freezer", "/system.slice/docker-abc.scope", "cgroup.procs")), "42");
  EXPECT_NE(std::find(bus.started.begin(), bus.started.end(), Property{"BlockIOAccounting", Value::boolean(true)}),
            bus.started.end());
}

TEST(SystemdDriver, AFailureAfterTheStartStopsTheUnit) {
  Fixture f(Layout::kV2);
  f.resources.memory = spec::Memory{};
  f.resources.memory->limit = 1 << 20;
  auto p = plan(f.cfg);
  ASSERT_TRUE(p);
  FakeBus bus;  // no on_start: the directory has no memory.max, so writing the limit fails
  auto m = start(bus, *p, 42, {});
  ASSERT_FALSE(m);
  EXPECT_EQ(bus.log, (std::vector<std::string>{"start docker-abc.scope", "wait 1 30000", "stop docker-abc.scope",
                                               "wait 2 30000", "reset-failed docker-abc.scope"}));
  EXPECT_FALSE(f.tree.exists("sys/fs/cgroup/system.slice/docker-abc.scope"));
}

// Issue 32: a limit systemd accepted but the kernel refuses (cpuset.cpus of a CPU the host
// lacks) fails after the unit started. The init in it is PID 1 of its pid namespace and
// ignores the SIGTERM of systemd's stop, whose job then ran into our 30 s timeout: what the
// unit holds is killed through cgroup.kill before the unit is stopped.
TEST(SystemdDriver, AFailureAfterTheStartKillsTheUnitsProcessesBeforeTheStop) {
  for (Layout layout : {Layout::kV2, Layout::kHybrid}) {
    SCOPED_TRACE(std::string(to_string(layout)));
    Fixture f(layout);
    f.resources.memory = spec::Memory{};
    f.resources.memory->limit = 1 << 20;
    auto p = plan(f.cfg);
    ASSERT_TRUE(p);
    const std::string scope = "/system.slice/docker-abc.scope";
    std::string kill_file = f.tree.file("", scope, "cgroup.kill");
    FakeBus bus;
    bus.on_start = [&] {
      f.tree.add_cgroup(scope);
      f.tree.write(kill_file, "");
      // the limit's file refuses the value: here, it is not there at all
      std::string limit = layout == Layout::kV2 ? f.tree.file("", scope, "memory.max")
                                                : f.tree.file("memory", scope, "memory.limit_in_bytes");
      ::unlink((f.tree.root() + "/" + limit).c_str());
    };
    std::string killed_at_stop;
    bus.on_stop = [&] { killed_at_stop = f.tree.read(kill_file); };
    auto m = start(bus, *p, 42, {});
    ASSERT_FALSE(m);
    EXPECT_EQ(killed_at_stop, "1");
    EXPECT_EQ(bus.log, (std::vector<std::string>{"start docker-abc.scope", "wait 1 30000", "stop docker-abc.scope",
                                                 "wait 2 30000", "reset-failed docker-abc.scope"}));
  }
}

// create's halves: StartTransientUnit answers at once with the job, and the init sets
// itself up while systemd runs it (systemd makes the scope's cgroup then); the job is
// awaited, then the limits written and the v1 hierarchies joined.
TEST(SystemdDriver, BeginsTheUnitThenFinishesItAfterTheJob) {
  Fixture f(Layout::kHybrid);
  f.resources.memory = spec::Memory{};
  f.resources.memory->limit = 1 << 20;
  auto p = plan(f.cfg);
  ASSERT_TRUE(p);
  const std::string scope = "/system.slice/docker-abc.scope";
  FakeBus bus;
  bus.on_wait = [&] { f.tree.add_cgroup(scope); };
  auto job = begin_start(bus, *p, 42, {});
  ASSERT_TRUE(job) << job.error().message();
  EXPECT_EQ(*job, "/org/freedesktop/systemd1/job/1");
  EXPECT_EQ(bus.log, std::vector<std::string>{"start docker-abc.scope"});
  EXPECT_NE(std::find(bus.started.begin(), bus.started.end(), Property{"PIDs", Value::u32_array({42})}),
            bus.started.end());
  EXPECT_FALSE(f.tree.exists(f.tree.file("memory", scope, "memory.limit_in_bytes")));
  auto m = finish_start(bus, *p, 42, *job);
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(bus.log, (std::vector<std::string>{"start docker-abc.scope", "wait 1 30000"}));
  EXPECT_EQ(f.tree.read(f.tree.file("memory", scope, "memory.limit_in_bytes")), "1048576");
  EXPECT_EQ(f.tree.read(f.tree.file("freezer", scope, "cgroup.procs")), "42");
}

// The job fails after the init has set itself up (say, its pid gone before systemd moved
// it): create fails with the job's end, the unit is reset, and no file is written.
TEST(SystemdDriver, AJobThatFailsAfterTheBeginLeavesNoUnitAndNoFiles) {
  Fixture f(Layout::kHybrid);
  auto p = plan(f.cfg);
  ASSERT_TRUE(p);
  FakeBus bus;
  bus.job_result = "failed";
  auto job = begin_start(bus, *p, 42, {});
  ASSERT_TRUE(job);
  auto m = finish_start(bus, *p, 42, *job);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message(), "error creating systemd unit `docker-abc.scope`: got `failed`");
  EXPECT_EQ(bus.log, (std::vector<std::string>{"start docker-abc.scope", "wait 1 30000",
                                               "reset-failed docker-abc.scope"}));
  EXPECT_FALSE(f.tree.exists("sys/fs/cgroup/freezer/system.slice/docker-abc.scope"));
}

// A job systemd never finishes: after the job timeout the unit is stopped (replacing the
// start job), so that nothing starts later with a pid that may be another's by then.
TEST(SystemdDriver, AJobThatNeverEndsTimesOutAndStopsTheUnit) {
  Fixture f(Layout::kV2);
  auto p = plan(f.cfg);
  ASSERT_TRUE(p);
  FakeBus bus;
  bus.job_timeout = true;
  auto job = begin_start(bus, *p, 42, {});
  ASSERT_TRUE(job);
  auto m = finish_start(bus, *p, 42, *job);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("timeout waiting for systemd to create docker-abc.scope"), std::string::npos)
      << m.error().message();
  EXPECT_EQ(m.error().err(), ETIMEDOUT);
  EXPECT_EQ(bus.log, (std::vector<std::string>{"start docker-abc.scope", "wait 1 30000", "stop docker-abc.scope",
                                               "wait 2 30000"}));
}

TEST(SystemdDriver, JobOutcomes) {
  {
    FakeBus bus;
    bus.exists_times = 1;  // a failed unit of the same name is reset, then started again
    ASSERT_TRUE(start_unit(bus, "x.scope", {}));
    EXPECT_EQ(bus.log, (std::vector<std::string>{"start x.scope", "reset-failed x.scope", "start x.scope", "wait 1 30000"}));
  }
  {
    FakeBus bus;
    bus.exists_times = 2;
    auto st = start_unit(bus, "x.scope", {});
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().err(), EEXIST);
  }
  {
    FakeBus bus;
    bus.job_result = "failed";
    auto st = start_unit(bus, "x.scope", {});
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().message(), "error creating systemd unit `x.scope`: got `failed`");
    EXPECT_EQ(bus.log.back(), "reset-failed x.scope");
  }
  {
    FakeBus bus;
    bus.job_timeout = true;
    auto st = start_unit(bus, "x.scope", {});
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message().find("timeout waiting for systemd to create x.scope"), std::string::npos);
    EXPECT_EQ(bus.log[2], "stop x.scope");  // nothing left behind if it ever comes
  }
  {
    FakeBus bus;
    bus.unknown_unit = true;  // stopped already (its processes ended): fine
    EXPECT_TRUE(stop_unit(bus, "x.scope"));
    EXPECT_EQ(bus.log, std::vector<std::string>{"stop x.scope"});
  }
}

// delete: a unit whose cgroup systemd removed (its processes ended, so it stopped) is only
// reset, for a unit left failed; one whose cgroup is there is killed and stopped as before.
TEST(SystemdDriver, DeleteStopsOnlyAUnitWhoseCgroupIsThere) {
  for (Layout layout : {Layout::kV2, Layout::kHybrid}) {
    SCOPED_TRACE(std::string(to_string(layout)));
    Fixture f(layout);
    auto p = plan(f.cfg);
    ASSERT_TRUE(p);
    auto paths = Manager::planned_paths(p->files);
    ASSERT_TRUE(paths);
    FakeBus gone;
    ASSERT_TRUE(remove_unit(gone, "docker-abc.scope", *paths));
    EXPECT_EQ(gone.log, std::vector<std::string>{"reset-failed docker-abc.scope"});

    const std::string scope = "/system.slice/docker-abc.scope";
    f.tree.add_cgroup(scope);
    std::string kill_file = f.tree.file("", scope, "cgroup.kill");
    f.tree.write(kill_file, "");
    FakeBus running;
    std::string killed_at_stop;
    running.on_stop = [&] { killed_at_stop = f.tree.read(kill_file); };
    ASSERT_TRUE(remove_unit(running, "docker-abc.scope", *paths));
    EXPECT_EQ(killed_at_stop, "1");
    EXPECT_EQ(running.log, (std::vector<std::string>{"stop docker-abc.scope", "wait 1 30000",
                                                     "reset-failed docker-abc.scope"}));
  }
  FakeBus none;  // paths that name no hierarchy systemd tracks units in: stopped as before
  ASSERT_TRUE(remove_unit(none, "x.scope", {{"cpu", "/nonexistent/x.scope"}}));
  EXPECT_EQ(none.log[0], "stop x.scope");
}

// delete connects only while systemd still holds the unit: its cgroup there, or the unit
// still loaded (its transient file there: a failed unit, or one not yet freed).
TEST(SystemdDriver, AUnitIsGoneOnlyWithItsCgroupAndItsTransientFile) {
  Fixture f(Layout::kV2);
  auto p = plan(f.cfg);
  ASSERT_TRUE(p);
  auto paths = Manager::planned_paths(p->files);
  ASSERT_TRUE(paths);
  const std::string dir = f.tree.root() + "/run/systemd/transient";
  EXPECT_FALSE(unit_gone("docker-abc.scope", *paths, dir));  // no such folder: unknown
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(unit_gone("docker-abc.scope", *paths, dir));
  f.tree.write("run/systemd/transient/docker-abc.scope", "[Scope]\n");
  EXPECT_FALSE(unit_gone("docker-abc.scope", *paths, dir));  // still loaded (perhaps failed)
  ::unlink((dir + "/docker-abc.scope").c_str());
  f.tree.add_cgroup("/system.slice/docker-abc.scope");
  EXPECT_FALSE(unit_gone("docker-abc.scope", *paths, dir));  // still running
}

TEST(SystemdDriver, UnitOfAndVersion) {
  EXPECT_EQ(unit_of({{"", "/sys/fs/cgroup/system.slice/a-b.scope"}}), "a-b.scope");
  EXPECT_EQ(unit_of({{"cpu", "/x/system.slice/a-b.scope"}, {"memory", "/y/system.slice/a-c.scope"}}), "");
  EXPECT_EQ(unit_of({{"", "/sys/fs/cgroup/berth/c1"}}), "");
  EXPECT_EQ(parse_version("252.39-1~deb12u2"), 252);
  EXPECT_EQ(parse_version("v245.4-1.fc32"), 245);
  EXPECT_EQ(parse_version("\"245\""), 245);
  EXPECT_EQ(parse_version("x"), -1);
}

}  // namespace
}  // namespace berth::cgroups::systemd
