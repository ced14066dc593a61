// Manager over the three layouts on a fake tree: placement, paths/load round trip,
// rollback of a failed create, add_process, open_v1_tasks, pids, destroy, hybrid's unified
// directory.
#include "cgroups/manager.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "unit/cgroups/fixture.h"
#include "util/json.h"

namespace berth::cgroups::testing {
namespace {

const std::vector<std::string> kNoCpuset = {"cpu,cpuacct", "memory", "devices", "freezer", "pids", "name=systemd"};

TEST(CgroupsManager, PathsCoverEveryHierarchyAndLoadRoundTrips) {
  for (auto layout : {Layout::kV1, Layout::kHybrid, Layout::kV2}) {
    CgroupFixture f(layout);
    auto m = f.create(spec::Resources{});
    ASSERT_TRUE(m) << failure(m);
    auto paths = m->paths();
    std::string cg = f.tree.root() + "/sys/fs/cgroup";
    if (layout == Layout::kV2) {
      EXPECT_EQ(paths, (std::map<std::string, std::string>{{"", cg + "/berth/c1"}}));
    } else {
      EXPECT_EQ(paths.at("cpu"), cg + "/cpu,cpuacct/berth/c1");
      EXPECT_EQ(paths.at("cpuacct"), cg + "/cpu,cpuacct/berth/c1");
      EXPECT_EQ(paths.at("name=systemd"), cg + "/systemd/berth/c1");
      EXPECT_EQ(paths.count(""), layout == Layout::kHybrid ? 1u : 0u);
      EXPECT_EQ(m->v2_dir_fd(), -1);
    }
    auto loaded = Manager::load(paths);
    ASSERT_TRUE(loaded) << failure(loaded);
    EXPECT_EQ(loaded->layout(), layout);
    EXPECT_EQ(loaded->paths(), paths);
  }
  EXPECT_FALSE(Manager::load({}));
  EXPECT_FALSE(Manager::load({{"cpu", "relative/path"}}));
}

TEST(CgroupsManager, RelativePathJoinsTheCallersV1Cgroup) {
  CgroupFixture f(Layout::kV1);
  f.tree.add_cgroup("/user.slice/inner/c1");
  Config c;
  c.cgroups_path = "inner/c1";
  c.id = "c1";
  c.host = &f.host;
  auto m = Manager::create(c);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(m->paths().at("memory"), f.tree.root() + "/sys/fs/cgroup/memory/user.slice/inner/c1");
}

TEST(CgroupsManager, FailedCreateRemovesWhatItMade) {
  CgroupFixture f(Layout::kV1, kNoCpuset);
  spec::Resources r;
  r.pids = spec::Pids{5};  // the fresh (fake) directory has no pids.max: create fails
  Config c;
  c.cgroups_path = "/fresh/c1";
  c.resources = &r;
  c.host = &f.host;
  auto m = Manager::create(c);
  EXPECT_NE(failure(m).find("linux.resources.pids.limit: not supported on this host"), std::string::npos);
  for (const char* d : {"cpu,cpuacct", "memory", "pids", "systemd"})
    EXPECT_FALSE(f.tree.exists(std::string("sys/fs/cgroup/") + d + "/fresh")) << d;
}

TEST(CgroupsManager, DestroyIsIdempotent) {
  CgroupFixture f(Layout::kHybrid, kNoCpuset);
  Config c;
  c.cgroups_path = "/fresh/c1";
  c.host = &f.host;
  auto m = Manager::create(c);
  ASSERT_TRUE(m) << failure(m);
  ASSERT_TRUE(f.tree.exists("sys/fs/cgroup/unified/fresh/c1"));
  ASSERT_TRUE(m->destroy());
  EXPECT_FALSE(f.tree.exists("sys/fs/cgroup/unified/fresh/c1"));
  EXPECT_FALSE(f.tree.exists("sys/fs/cgroup/memory/fresh/c1"));
  EXPECT_TRUE(m->destroy());
  auto loaded = Manager::load(m->paths());
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded->destroy());
}

TEST(CgroupsManager, AddProcessAndPids) {
  CgroupFixture f(Layout::kHybrid);
  auto m = f.create(spec::Resources{});
  ASSERT_TRUE(m) << failure(m);
  ASSERT_TRUE(m->add_process(4242));
  for (const char* h : {"cpu,cpuacct", "memory", "devices", "freezer", "systemd", ""})
    EXPECT_EQ(f.file(h, "cgroup.procs"), "4242") << h;
  f.set_file("", "cgroup.procs", "10\n11\n");
  f.tree.write(f.tree.file("", "/berth/c1/sub", "cgroup.procs"), "12\n");
  auto pids = m->pids();
  ASSERT_TRUE(pids) << failure(pids);
  // The union of every hierarchy (4242 is still in the v1 ones), sub-cgroups included.
  EXPECT_EQ(*pids, (std::vector<pid_t>{10, 11, 12, 4242}));
}

// open_all (exec's tenant joins through the parent's fds, in its memory): every directory
// is opened at once and never again, so a child caches no fd of its own table in the
// parent's Manager; a directory missing then is reported with the errno of that open.
TEST(CgroupsManager, OpenAllOpensNowAndNeverAgain) {
  for (bool open_all_first : {false, true}) {
    CgroupFixture f(Layout::kV1);
    auto created = f.create(spec::Resources{});
    ASSERT_TRUE(created) << failure(created);
    auto paths = created->paths();
    paths["memory"] += "/sub";  // an `exec --cgroup memory:sub` not made yet
    auto m = Manager::load(paths);
    ASSERT_TRUE(m) << failure(m);
    if (open_all_first) m->open_all();
    f.tree.add_cgroup("/berth/c1/sub");
    auto st = m->add_process(4242);
    if (!open_all_first) {
      EXPECT_TRUE(st) << st.error().message();  // opened on first use: it exists by then
      continue;
    }
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().err(), ENOENT);
    EXPECT_NE(st.error().message().find("adding pid 4242 to cgroups: open "), std::string::npos) << st.error().message();
    EXPECT_NE(st.error().message().find("/sub/cgroup.procs"), std::string::npos) << st.error().message();
  }
}

// v1 self-placement: a tasks file per v1 hierarchy (none for cgroup2, which has no tasks
// file), opened write-only for the child's "0"; the parent then writes the unified one
// alone.
TEST(CgroupsManager, OpenV1TasksForTheChildThenTheUnifiedAlone) {
  CgroupFixture f(Layout::kHybrid);
  auto m = f.create(spec::Resources{});
  ASSERT_TRUE(m) << failure(m);
  auto tasks = m->open_v1_tasks();
  ASSERT_TRUE(tasks) << failure(tasks);
  std::vector<std::string> names;
  for (const auto& t : *tasks) {
    names.push_back(t.path.substr(t.path.rfind("/berth/c1/")));
    ASSERT_EQ(::write(t.fd.get(), "0", 1), 1) << t.path;
  }
  std::set<std::string> v1_dirs;  // co-mounted controllers share one
  for (const auto& [controller, dir] : m->paths())
    if (!controller.empty()) v1_dirs.insert(dir);
  EXPECT_EQ(names.size(), v1_dirs.size()) << "one per v1 hierarchy, none for the unified one";
  for (const auto& n : names) EXPECT_EQ(n, "/berth/c1/tasks");
  EXPECT_EQ(f.file("memory", "tasks"), "0");
  ASSERT_TRUE(m->add_process(4242, false));
  EXPECT_EQ(f.file("", "cgroup.procs"), "4242");
  for (const char* h : {"cpu,cpuacct", "memory", "pids"}) EXPECT_EQ(f.file(h, "cgroup.procs"), "") << h;
}

TEST(CgroupsManager, UnifiedOnHybridGoesToTheCgroup2Directory) {
  CgroupFixture f(Layout::kHybrid);
  spec::Resources r;
  r.unified = {{"cgroup.max.depth", "3"}};
  auto m = f.create(r);
  ASSERT_TRUE(m) << failure(m);
  EXPECT_EQ(f.file("", "cgroup.max.depth"), "3");
  CgroupFixture v1(Layout::kV1);
  EXPECT_EQ(failure(v1.create(r)), "invalid configuration: cannot use unified on cgroup v1");
}

// runc's own test (cgroups.bats, "cgroup v1 + unified resources should fail") and engines
// match runc's "invalid configuration" when a hybrid host cannot take a unified key.
TEST(CgroupsManager, UnifiedKeyOfAV1ControllerOnHybridIsAnInvalidConfiguration) {
  CgroupFixture f(Layout::kHybrid);
  spec::Resources r;
  r.unified = {{"memory.min", "131072"}};
  std::string err = failure(f.create(r));
  EXPECT_EQ(err.rfind("invalid configuration: cannot use unified on cgroup v1: linux.resources.unified[\"memory.min\"]: controller \"memory\" is not available in ", 0), 0u) << err;
}

// The systemd driver (cgroups/systemd) hands the Manager absolute paths only.
TEST(CgroupsManager, SystemdPathsAreNotItsOwn) {
  CgroupFixture f(Layout::kHybrid);
  Config c;
  c.id = "c1";
  c.systemd = true;
  c.host = &f.host;
  EXPECT_EQ(failure(Manager::create(c)), "cgroups: a systemd cgroupsPath reached the cgroupfs driver");
  c.systemd = false;
  c.cgroups_path = "system.slice:docker:c1";
  EXPECT_EQ(failure(Manager::create(c)), "systemd cgroup driver requires a running systemd");
}

TEST(CgroupsManager, StatsDocumentParses) {
  for (auto layout : {Layout::kV1, Layout::kHybrid, Layout::kV2}) {
    CgroupFixture f(layout);
    auto m = f.create(spec::Resources{});
    ASSERT_TRUE(m) << failure(m);
    auto s = m->stats();
    ASSERT_TRUE(s) << failure(s);
    std::string j = to_json(*s);
    EXPECT_TRUE(json::Document::parse(j, "stats")) << j;
    EXPECT_NE(j.find("\"pids\":{\"current\":"), std::string::npos) << j;
  }
}

TEST(CgroupsManager, DevicesFallBackToEbpfOnHybridWithoutV1Devices) {
  CgroupFixture f(Layout::kHybrid, {"cpu", "memory", "name=systemd"});
  auto m = f.create(spec::Resources{}, {parse_rule("a", false).value()});
  // A plain directory of the fake tree is no cgroup: loading or attaching fails, which
  // shows the eBPF path was taken for the cgroup2 directory.
  ASSERT_FALSE(m);
  EXPECT_NE(failure(m).find("linux.resources.devices"), std::string::npos) << failure(m);
  EXPECT_NE(failure(m).find("bpf("), std::string::npos) << failure(m);
  CgroupFixture v1(Layout::kV1, {"cpu", "memory"});
  EXPECT_EQ(failure(v1.create(spec::Resources{}, {parse_rule("a", false).value()})),
            "linux.resources.devices: not supported on this host (no devices cgroup controller is mounted)");
}

TEST(CgroupsManager, FreezerFallsBackToCgroup2OnHybridWithoutV1Freezer) {
  CgroupFixture f(Layout::kHybrid, {"cpu", "memory", "name=systemd"});
  auto m = f.create(spec::Resources{});
  ASSERT_TRUE(m) << failure(m);
  f.set_file("", "cgroup.events", "frozen 1\n");
  ASSERT_TRUE(m->freeze());
  EXPECT_EQ(f.file("", "cgroup.freeze"), "1");
}

}  // namespace
}  // namespace berth::cgroups::testing
