// cgroups through the CLI on this host (hybrid): limits written at create, pause/resume,
// update round trips (zeros unchanged), events --stats, an OOM event, ps, kill --all,
// device rules, and the same cgroup values as runc for the same bundle.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/harness.h"

namespace berth::test {
namespace {

std::string cg(const std::string& controller, const std::string& path, const std::string& file) {
  std::ifstream f("/sys/fs/cgroup/" + controller + path + "/" + file);
  std::stringstream s;
  s << f.rdbuf();
  std::string v = s.str();
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

spec::Resources limits() {
  spec::Resources r;
  spec::Memory m;
  m.limit = 64 << 20;
  m.reservation = 32 << 20;
  m.swappiness = 0;
  r.memory = m;
  spec::Cpu c;
  c.shares = 512;
  c.quota = 50000;
  c.period = 100000;
  c.cpus = "0";
  r.cpu = c;
  r.pids = spec::Pids{64};
  r.devices = {{false, "", {}, {}, "rwm"}, {false, "c", 1, 5, "rwm"}};
  return r;
}

TEST(CgroupsCli, LimitsWrittenAtCreateAndRemovedOnDelete) {
  if (!have_cgroup_v1("memory") || !have_cgroup_v1("cpu")) GTEST_SKIP() << "no cgroup v1 memory and cpu hierarchies on this host: the test reads v1 files";
  Runtime rt;
  Bundle b;
  b.spec().linux->resources = limits();
  b.script("sleep 30");
  b.write();
  const std::string& path = b.spec().linux->cgroups_path;
  ASSERT_EQ(rt({"run", "-d", "--bundle", b.path(), "g1"}).code, 0);
  EXPECT_EQ(cg("memory", path, "memory.limit_in_bytes"), "67108864");
  EXPECT_EQ(cg("memory", path, "memory.soft_limit_in_bytes"), "33554432");
  EXPECT_EQ(cg("cpu", path, "cpu.shares"), "512");
  EXPECT_EQ(cg("cpu", path, "cpu.cfs_quota_us"), "50000");
  EXPECT_EQ(cg("cpuset", path, "cpuset.cpus"), "0");
  EXPECT_EQ(cg("pids", path, "pids.max"), "64");
  std::string devices = cg("devices", path, "devices.list");
  EXPECT_NE(devices.find("c 1:3 rwm"), std::string::npos) << devices;
  EXPECT_EQ(devices.find("a *:* rwm"), std::string::npos) << devices;
  EXPECT_EQ(rt({"delete", "-f", "g1"}).code, 0);
  EXPECT_FALSE(std::filesystem::exists("/sys/fs/cgroup/memory" + path));
  EXPECT_FALSE(std::filesystem::exists("/sys/fs/cgroup/pids" + path));
}

TEST(CgroupsCli, DeviceRulesAllowNullDenyOthers) {
  Runtime rt;
  Bundle b;
  b.spec().linux->resources = limits();
  // mknod is allowed for every node (runc's default rules), opening one that no rule
  // allows is not; /dev/null is always allowed.
  b.spec().process->capabilities->bounding.push_back("CAP_MKNOD");
  b.spec().process->capabilities->effective.push_back("CAP_MKNOD");
  b.spec().process->capabilities->permitted.push_back("CAP_MKNOD");
  b.script("echo x > /dev/null && echo null-ok; mknod /tmp/kmsg c 1 11 && echo mknod-ok; "
           "head -c1 /tmp/kmsg >/dev/null 2>&1 || echo kmsg-denied");
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "g2"});
  EXPECT_EQ(r.out, "null-ok\nmknod-ok\nkmsg-denied\n") << r.err;
}

TEST(CgroupsCli, PauseStopsAndResumeContinues) {
  Runtime rt;
  Bundle b;
  b.script("while true; do echo x; done >> /tmp/count");
  b.write();
  ASSERT_EQ(rt({"run", "-d", "--bundle", b.path(), "g3"}).code, 0);
  ::usleep(200000);
  ASSERT_EQ(rt({"pause", "g3"}).code, 0);
  EXPECT_NE(rt({"state", "g3"}).out.find("\"status\": \"paused\""), std::string::npos);
  std::string rootfs_count = b.rootfs() + "/tmp/count";
  auto read_count = [&] { return static_cast<long>(std::filesystem::file_size(rootfs_count)); };
  long a = read_count();
  ::usleep(200000);
  long c = read_count();
  EXPECT_EQ(a, c) << "frozen: the loop does not advance";
  auto again = rt({"pause", "g3"});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("container not running"), std::string::npos);
  ASSERT_EQ(rt({"resume", "g3"}).code, 0);
  ::usleep(200000);
  EXPECT_GT(read_count(), c);
  auto not_paused = rt({"resume", "g3"});
  EXPECT_NE(not_paused.err.find("container not paused"), std::string::npos);
  EXPECT_EQ(rt({"delete", "-f", "g3"}).code, 0);
}

TEST(CgroupsCli, UpdateFlagsAndJsonZerosUnchanged) {
  if (!have_cgroup_v1("memory") || !have_cgroup_v1("cpu")) GTEST_SKIP() << "no cgroup v1 memory and cpu hierarchies on this host: the test reads v1 files";
  // Docker's payload below sets swap: a kernel without swap accounting has no memsw files.
  if (!std::filesystem::exists("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"))
    GTEST_SKIP() << "no swap accounting in this kernel (memory.memsw.* missing)";
  Runtime rt;
  Bundle b;
  b.spec().linux->resources = limits();
  b.script("sleep 30");
  b.write();
  const std::string& path = b.spec().linux->cgroups_path;
  ASSERT_EQ(rt({"run", "-d", "--bundle", b.path(), "g4"}).code, 0);
  ASSERT_EQ(rt({"update", "--memory", "100m", "--cpu-share", "256", "g4"}).code, 0);
  EXPECT_EQ(cg("memory", path, "memory.limit_in_bytes"), "104857600");
  EXPECT_EQ(cg("cpu", path, "cpu.shares"), "256");
  EXPECT_EQ(cg("pids", path, "pids.max"), "64") << "untouched";
  // Docker's payload: zeros mean unchanged.
  std::string docker = R"({"memory":{"limit":67108864,"reservation":0,"swap":134217728,"kernel":0},)"
                       R"("cpu":{"shares":512,"quota":0,"period":0},"pids":{"limit":77},"blockIO":{"weight":0}})";
  auto u = rt({"update", "--resources", "-", "g4"}, docker);
  ASSERT_EQ(u.code, 0) << u.err;
  EXPECT_EQ(cg("memory", path, "memory.limit_in_bytes"), "67108864");
  EXPECT_EQ(cg("memory", path, "memory.memsw.limit_in_bytes"), "134217728");
  EXPECT_EQ(cg("memory", path, "memory.soft_limit_in_bytes"), "33554432") << "reservation 0 = unchanged";
  EXPECT_EQ(cg("cpu", path, "cpu.cfs_quota_us"), "50000") << "quota 0 = unchanged";
  EXPECT_EQ(cg("pids", path, "pids.max"), "77");
  EXPECT_EQ(rt({"delete", "-f", "g4"}).code, 0);
}

TEST(CgroupsCli, EventsStatsPsKillAll) {
  Runtime rt;
  Bundle b;
  b.spec().linux->resources = limits();
  b.script("sleep 30 & sleep 31 & i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; wait");
  b.write();
  ASSERT_EQ(rt({"run", "-d", "--bundle", b.path(), "g5"}).code, 0);
  ::usleep(300000);
  auto ev = rt({"events", "--stats", "g5"});
  ASSERT_EQ(ev.code, 0) << ev.err;
  EXPECT_EQ(ev.out.rfind("{\"type\":\"stats\",\"id\":\"g5\",\"data\":{", 0), 0u) << ev.out.substr(0, 80);
  EXPECT_EQ(ev.out.find("\"total\":0,"), std::string::npos) << "cpu usage is non-zero";
  EXPECT_NE(ev.out.find("\"pids\":{\"current\":"), std::string::npos);
  auto ps = rt({"ps", "--format", "json", "g5"});
  EXPECT_EQ(std::count(ps.out.begin(), ps.out.end(), ','), 2) << ps.out;  // sh + 2 sleeps
  auto table = rt({"ps", "g5"});
  EXPECT_NE(table.out.find("PID"), std::string::npos);
  EXPECT_NE(table.out.find("sleep 31"), std::string::npos) << table.out;
  ASSERT_EQ(rt({"kill", "--all", "g5", "KILL"}).code, 0);
  for (int i = 0; i < 100 && rt({"state", "g5"}).out.find("stopped") == std::string::npos; ++i) ::usleep(20000);
  EXPECT_EQ(rt({"ps", "--format", "json", "g5"}).out, "[]\n");
  EXPECT_EQ(rt({"delete", "g5"}).code, 0);
}

TEST(CgroupsCli, OomEventIsReported) {
  Runtime rt;
  Bundle b;
  spec::Resources r;
  spec::Memory m;
  m.limit = 16 << 20;
  m.swap = 16 << 20;
  r.memory = m;
  b.spec().linux->resources = r;
  // Grow a shell variable until the kernel kills the process in the container.
  b.script("sleep 0.5; a=x; while true; do a=$a$a; done");
  b.write();
  ASSERT_EQ(rt({"run", "-d", "--bundle", b.path(), "g6"}).code, 0);
  auto ev = rt({"events", "--interval", "10s", "g6"}, "", 20);
  EXPECT_NE(ev.out.find("{\"type\":\"oom\",\"id\":\"g6\"}"), std::string::npos) << ev.out.substr(0, 200) << ev.err;
  rt({"delete", "-f", "g6"});
}

TEST(CgroupsCli, SameCgroupValuesAsRunc) {
  if (!have_cgroup_v1("memory") || !have_cgroup_v1("cpu")) GTEST_SKIP() << "no cgroup v1 memory and cpu hierarchies on this host: the test reads v1 files";
  if (!have_runc()) GTEST_SKIP() << "runc is not installed";
  std::map<std::string, std::string> values[2];
  const char* files[][2] = {{"memory", "memory.limit_in_bytes"}, {"memory", "memory.soft_limit_in_bytes"},
                            {"memory", "memory.swappiness"},     {"cpu", "cpu.shares"},
                            {"cpu", "cpu.cfs_quota_us"},         {"cpu", "cpu.cfs_period_us"},
                            {"cpuset", "cpuset.cpus"},           {"pids", "pids.max"},
                            {"devices", "devices.list"}};
  int i = 0;
  for (const std::string& bin : {berth_binary(), std::string("runc")}) {
    Runtime rt(bin);
    Bundle b;
    b.spec().linux->resources = limits();
    b.script("sleep 30");
    b.write();
    ASSERT_EQ(rt({"run", "-d", "--bundle", b.path(), "diff"}).code, 0) << bin;
    for (auto& f : files) values[i][f[1]] = cg(f[0], b.spec().linux->cgroups_path, f[1]);
    rt({"delete", "-f", "diff"});
    ++i;
  }
  // devices.list shows rules in the order they were written; the set is what matters.
  auto sorted = [](std::string v) {
    std::istringstream in(v);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  for (auto& f : files) EXPECT_EQ(sorted(values[0][f[1]]), sorted(values[1][f[1]])) << f[1];
}

}  // namespace
}  // namespace berth::test
