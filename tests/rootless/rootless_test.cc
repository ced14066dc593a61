// Rootless berth, side by side with `runc --rootless`: every case runs as the dedicated
// unprivileged user of rootless_support.h. Both runtimes use their default state roots
// ($XDG_RUNTIME_DIR/berth and .../runc); after each case nothing of it may remain: no
// container in either list, no process of the user, no cgroup, no mount.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "rootless/rootless_support.h"
#include "support/exec_helpers.h"
#include "support/harness.h"

namespace berth::test::rootless {
namespace {

std::string cat_ids(uint32_t own, bool sub) {
  std::string m = "0 " + std::to_string(own) + " 1\n";
  if (sub) m += "1 " + std::to_string(kSubStart) + " " + std::to_string(kSubCount) + "\n";
  return m;
}

// Collapses the kernel's padding in /proc/<pid>/{uid,gid}_map ("   0   1001   1").
std::string squeeze(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty() && out.back() != '\n' && c != '\n') out += ' ';
    space = false;
    out += c;
  }
  return out;
}

TEST_F(Rootless, RunExecKillDeleteInTheUsersStateRoot) {
  for (const auto& rt : runtimes()) {
    Bundle b;
    rootless_spec(b, "sleep 60");
    std::string id = "rl-life-" + rt.name;
    auto r = run(rt, b, id, {"-d"});
    ASSERT_EQ(r.code, 0) << rt.name << ": " << r.err;
    EXPECT_NE(as_user({rt.binary, "state", id}).out.find("\"status\": \"running\""), std::string::npos) << rt.name;
    auto ex = as_user({rt.binary, "exec", id, "sh", "-c", "id -u; cat /proc/self/uid_map"});
    EXPECT_EQ(ex.code, 0) << rt.name << ": " << ex.err;
    EXPECT_EQ(squeeze(ex.out), "0\n" + cat_ids(user().uid, false)) << rt.name;
    EXPECT_EQ(as_user({rt.binary, "kill", id, "KILL"}).code, 0) << rt.name;
    std::string status;
    for (int i = 0; i < 100 && status.find("stopped") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      status = as_user({rt.binary, "state", id}).out;
    }
    EXPECT_NE(status.find("\"status\": \"stopped\""), std::string::npos) << rt.name << ": " << status;
    EXPECT_EQ(as_user({rt.binary, "delete", id}).code, 0) << rt.name;
  }
  // The state root is the user's own, private, and not root's.
  struct stat st;
  ASSERT_EQ(::stat((user().xdg + "/berth").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user().uid);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_NE(::access("/run/berth/rl-life-berth", F_OK), 0);
}

TEST_F(Rootless, OwnIdMapIsWrittenDirectly) {
  for (const auto& rt : runtimes()) {
    Bundle b;
    rootless_spec(b, "cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups; id -u; id -g");
    auto r = run(rt, b, "rl-own-" + rt.name);
    ASSERT_EQ(r.code, 0) << rt.name << ": " << r.err;
    EXPECT_EQ(squeeze(r.out), cat_ids(user().uid, false) + cat_ids(user().gid, false) + "deny\n0\n0\n") << rt.name;
  }
}

TEST_F(Rootless, SubordinateRangesThroughNewuidmap) {
  for (const auto& rt : runtimes()) {
    Bundle b;
    auto& s = rootless_spec(b, "cat /proc/self/uid_map /proc/self/gid_map; touch /tmp/f; chown 1:2 /tmp/f");
    s.root->readonly = false;
    for (auto* set : {&s.process->capabilities->bounding, &s.process->capabilities->effective,
                      &s.process->capabilities->permitted})
      set->push_back("CAP_CHOWN");
    s.linux->uid_mappings.push_back({1, kSubStart, kSubCount});
    s.linux->gid_mappings.push_back({1, kSubStart, kSubCount});
    auto r = run(rt, b, "rl-sub-" + rt.name);
    ASSERT_EQ(r.code, 0) << rt.name << ": " << r.err;
    EXPECT_EQ(squeeze(r.out), cat_ids(user().uid, true) + cat_ids(user().gid, true)) << rt.name;
    // Container ids 1 and 2 are the user's first subordinate ids on the host.
    struct stat st;
    ASSERT_EQ(::stat((b.rootfs() + "/tmp/f").c_str(), &st), 0) << rt.name;
    EXPECT_EQ(st.st_uid, kSubStart) << rt.name;
    EXPECT_EQ(st.st_gid, kSubStart + 1) << rt.name;
  }
}

TEST_F(Rootless, IdsOutsideTheUsersRangesAreRefused) {
  for (const auto& rt : runtimes()) {
    Bundle b;
    auto& s = rootless_spec(b, "true");
    s.linux->uid_mappings.push_back({1, 0, 1});  // host root: never the user's
    auto r = run(rt, b, "rl-bad-" + rt.name);
    EXPECT_NE(r.code, 0) << rt.name;
    if (rt.name == "berth") {
      EXPECT_NE(r.err.find("config.json: linux.uidMappings: host uid 0: neither " + std::string(kUser) +
                           "'s own uid (" + std::to_string(user().uid) + ") nor in its /etc/subuid ranges (" +
                           std::to_string(kSubStart) + "-" + std::to_string(kSubStart + kSubCount - 1) + ")"),
                std::string::npos)
          << r.err;
    }
  }
}

TEST_F(Rootless, MountsAnUnprivilegedOwnerMayMake) {
  const std::string script =
      "grep -E ' /(proc|sys|dev/mqueue|dev/pts) ' /proc/self/mountinfo | awk '{print $5, $9}'; "
      "stat -c '%t:%T' /dev/null /dev/zero; cat /sys/kernel/mm/transparent_hugepage/enabled >/dev/null && echo sys-ok";
  std::string first;
  for (const auto& rt : runtimes()) {
    Bundle b;
    rootless_spec(b, script);
    auto r = run(rt, b, "rl-mnt-" + rt.name);
    ASSERT_EQ(r.code, 0) << rt.name << ": " << r.err;
    // /sys is the host's, bound (no network namespace of our own to own a sysfs); device
    // nodes are the host's, bound: an unprivileged owner may not mknod.
    EXPECT_NE(r.out.find("/sys sysfs\n"), std::string::npos) << rt.name << ": " << r.out;
    EXPECT_NE(r.out.find("/proc proc\n"), std::string::npos) << rt.name << ": " << r.out;
    EXPECT_NE(r.out.find("/dev/mqueue mqueue\n"), std::string::npos) << rt.name << ": " << r.out;
    EXPECT_NE(r.out.find("/dev/pts devpts\n"), std::string::npos) << rt.name << ": " << r.out;
    EXPECT_NE(r.out.find("1:3\n1:5\nsys-ok\n"), std::string::npos) << rt.name << ": " << r.out;
    if (first.empty()) first = r.out;
    else EXPECT_EQ(r.out, first) << "berth and runc differ";
  }
}

TEST_F(Rootless, OwnNetworkNamespaceGetsItsOwnSysfs) {
  for (const auto& rt : runtimes()) {
    Bundle b;
    auto& s = rootless_spec(b, "ls /sys/class/net");
    s.linux->namespaces.push_back({"network", ""});
    for (auto& m : s.mounts)
      if (m.destination == "/sys") {
        m.type = m.source = "sysfs";
        m.options = {"nosuid", "noexec", "nodev", "ro"};
      }
    auto r = run(rt, b, "rl-net-" + rt.name);
    ASSERT_EQ(r.code, 0) << rt.name << ": " << r.err;
    EXPECT_EQ(r.out, "lo\n") << rt.name << ": a sysfs of the container's network namespace";
  }
}

TEST_F(Rootless, LimitWithoutDelegationIsRefusedNamingTheField) {
  for (const auto& rt : runtimes()) {
    Bundle b;
    auto& s = rootless_spec(b, "true");
    s.linux->resources.emplace().memory.emplace().limit = 64 << 20;
    auto r = run(rt, b, "rl-limit-" + rt.name);
    EXPECT_EQ(r.code, 1) << rt.name;
    EXPECT_NE(r.err.find("cannot set memory limit: container could not join or create cgroup"), std::string::npos)
        << rt.name << ": " << r.err;
    if (rt.name == "berth") {
      EXPECT_NE(r.err.find("(linux.resources.memory.limit)"), std::string::npos) << r.err;
    }
  }
}

TEST_F(Rootless, PauseAndUpdateSayWhyTheyCannotWork) {
  for (const auto& rt : runtimes()) {
    Bundle b;
    rootless_spec(b, "sleep 60");
    std::string id = "rl-pause-" + rt.name;
    ASSERT_EQ(run(rt, b, id, {"-d"}).code, 0) << rt.name;
    auto p = as_user({rt.binary, "pause", id});
    EXPECT_EQ(p.code, 1) << rt.name;
    EXPECT_NE(p.err.find("cannot toggle freezer: cgroups not configured for container"), std::string::npos)
        << rt.name << ": " << p.err;
    auto u = as_user({rt.binary, "update", "--memory", "100M", id});
    EXPECT_EQ(u.code, 1) << rt.name;
    if (rt.name == "berth") {
      EXPECT_NE(p.err.find("created rootless without a cgroup its user may write"), std::string::npos) << p.err;
      EXPECT_NE(u.err.find("update: the container has no cgroup (created rootless"), std::string::npos) << u.err;
    }
    EXPECT_NE(as_user({rt.binary, "state", id}).out.find("\"status\": \"running\""), std::string::npos) << rt.name;
  }
}

TEST_F(Rootless, NoUserNamespaceIsRefused) {
  for (const auto& rt : runtimes()) {
    Bundle b;
    auto& s = rootless_spec(b, "true");
    std::erase_if(s.linux->namespaces, [](const auto& n) { return n.type == "user"; });
    s.linux->uid_mappings.clear();
    s.linux->gid_mappings.clear();
    auto r = run(rt, b, "rl-nouserns-" + rt.name);
    EXPECT_EQ(r.code, 1) << rt.name;
    EXPECT_NE(r.err.find("rootless container requires user namespaces"), std::string::npos) << rt.name << ": " << r.err;
  }
}

// berth only: runc 1.1 fails `kill --all` without cgroups ("lstat : no such file or
// directory"). berth signals the init, and its pid namespace takes the rest with it.
TEST_F(Rootless, KillAllWithoutCgroupsEndsTheContainer) {
  Twin rt = runtimes()[0];
  Bundle b;
  rootless_spec(b, "sleep 60 & sleep 60");
  std::string id = "rl-killall";
  ASSERT_EQ(run(rt, b, id, {"-d"}).code, 0);
  auto k = as_user({rt.binary, "kill", "--all", id, "KILL"});
  EXPECT_EQ(k.code, 0) << k.err;
  std::string status;
  for (int i = 0; i < 100 && status.find("stopped") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    status = as_user({rt.binary, "state", id}).out;
  }
  EXPECT_NE(status.find("\"status\": \"stopped\""), std::string::npos) << status;
  EXPECT_EQ(as_user({rt.binary, "delete", id}).code, 0);
}

TEST_F(Rootless, BadRootlessValueFailsCreateWithGosText) {
  Twin rt = runtimes()[0];
  Bundle b;
  rootless_spec(b, "true");
  b.write();
  ids_.push_back("rl-badflag");
  auto r = as_user({rt.binary, "--rootless", "maybe", "run", "-b", b.path(), "rl-badflag"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("strconv.ParseBool: parsing \\\"maybe\\\": invalid syntax"), std::string::npos) << r.err;
}

// The kernel refuses proc to a user namespace without a pid namespace of its own (runc:
// a bare "operation not permitted"); berth says what to add.
TEST_F(Rootless, ProcWithoutOwnPidNamespaceIsExplained) {
  for (const auto& rt : runtimes()) {
    Bundle b;
    auto& s = rootless_spec(b, "true");
    std::erase_if(s.linux->namespaces, [](const auto& n) { return n.type == "pid"; });
    auto r = run(rt, b, "rl-proc-" + rt.name);
    EXPECT_EQ(r.code, 1) << rt.name;
    EXPECT_NE(r.err.find("operation not permitted"), std::string::npos) << rt.name << ": " << r.err;
    if (rt.name == "berth") {
      EXPECT_NE(r.err.find("mount /proc: in a user namespace the kernel mounts proc only for a pid namespace of the "
                           "container's own (add one to linux.namespaces)"),
                std::string::npos)
          << r.err;
    }
  }
}

// A cgroup2 directory delegated to the user (chowned with its cgroup.procs, threads and
// subtree_control, as systemd's Delegate= does): berth started there (no cgroupsPath) puts
// the container below it and manages it as usual. On this hybrid host the v1 hierarchies
// stay out of reach, so the freezer is cgroup2's; the v1 limits still need root.
TEST_F(Rootless, DelegatedCgroup2SubtreeIsManaged) {
  std::string unified = "/sys/fs/cgroup/unified";
  if (::access((unified + "/cgroup.procs").c_str(), F_OK) != 0) unified = "/sys/fs/cgroup";
  if (::access((unified + "/cgroup.freeze").c_str(), F_OK) != 0 && ::access((unified + "/cgroup.procs").c_str(), F_OK) != 0)
    GTEST_SKIP() << "no cgroup2 hierarchy";
  std::string dir = unified + "/berth-rl-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << dir;
  for (const char* f : {"", "/cgroup.procs", "/cgroup.threads", "/cgroup.subtree_control"})
    (void)!::chown((dir + f).c_str(), user().uid, user().gid);
  Twin rt = runtimes()[0];
  Bundle b;
  rootless_spec(b, "sleep 60");
  b.write();
  std::string id = "rl-deleg";
  ids_.push_back(id);
  // Into the delegated cgroup as root, then become the user: its berth starts there.
  auto in_cgroup = [&](const std::vector<std::string>& argv) {
    std::vector<std::string> full = {"sh", "-c", "echo $$ > \"$0\"/cgroup.procs && exec \"$@\"", dir,
                                     "setpriv", "--reuid", std::to_string(user().uid), "--regid",
                                     std::to_string(user().gid), "--clear-groups", "--", "env", "-C", "/", "-i",
                                     "PATH=/usr/bin:/bin", "USER=" + std::string(kUser), "XDG_RUNTIME_DIR=" + user().xdg};
    full.insert(full.end(), argv.begin(), argv.end());
    return run_cmd(full);
  };
  auto r = in_cgroup({rt.binary, "run", "-d", "-b", b.path(), id});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string state = as_user({rt.binary, "state", id}).out;
  size_t at = state.find("\"pid\": ");
  ASSERT_NE(at, std::string::npos) << state;
  std::string procs = file_text(dir + "/" + id + "/cgroup.procs");
  EXPECT_EQ(procs, std::to_string(std::atoi(state.c_str() + at + 7)) + "\n") << "the init in the delegated cgroup";
  auto p = in_cgroup({rt.binary, "pause", id});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(file_text(dir + "/" + id + "/cgroup.freeze"), "1\n");
  EXPECT_NE(as_user({rt.binary, "state", id}).out.find("\"status\": \"paused\""), std::string::npos);
  EXPECT_EQ(in_cgroup({rt.binary, "resume", id}).code, 0);
  EXPECT_EQ(file_text(dir + "/" + id + "/cgroup.freeze"), "0\n");
  EXPECT_EQ(in_cgroup({rt.binary, "delete", "--force", id}).code, 0);
  EXPECT_NE(::access((dir + "/" + id).c_str(), F_OK), 0) << "delete removes the container's cgroup";
  for (int i = 0; i < 100 && ::rmdir(dir.c_str()) != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_NE(::access(dir.c_str(), F_OK), 0) << "the delegated cgroup could not be removed";
}

// CDI device nodes in a rootless container are the host's, bound (never made on the
// host); a host node that is missing is named and nothing is left.
TEST_F(Rootless, CdiDeviceNodesAreBoundFromTheHost) {
  TempDir host("berth-rl-cdi-host"), specs("berth-rl-cdi-specs");
  ASSERT_EQ(::mknod((host.path() + "/fpga0").c_str(), S_IFCHR | 0666, makedev(240, 7)), 0);
  std::ofstream(specs.path() + "/vendor.json")
      << R"({"cdiVersion":"0.7.0","kind":"vendor.com/fpga","devices":[{"name":"f0","containerEdits":{"deviceNodes":[)"
      << R"({"path":"/dev/fpga0","hostPath":")" << host.path() << R"(/fpga0"}]}},)"
      << R"({"name":"gone","containerEdits":{"deviceNodes":[{"path":"/dev/gone0","hostPath":")" << host.path()
      << R"(/gone0","type":"c","major":240,"minor":8}]}}]})";
  std::ofstream(specs.path() + "/config.json")
      << R"({"nvidia":{"enabled":false},"cdi":{"specDirs":[")" << specs.path() << R"("]}})";
  std::vector<std::string> env = {"BERTH_CONFIG=" + specs.path() + "/config.json"};
  Twin rt = runtimes()[0];
  Bundle b;
  rootless_spec(b, "stat -c '%F %t:%T' /dev/fpga0");
  b.spec().annotations["cdi.k8s.io/fpga"] = "vendor.com/fpga=f0";
  b.write();
  ids_.push_back("rl-cdi");
  auto r = as_user({rt.binary, "run", "-b", b.path(), "rl-cdi"}, 30, env);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "character special file f0:7\n");
  b.spec().annotations["cdi.k8s.io/fpga"] = "vendor.com/fpga=gone";
  b.write();
  ids_.push_back("rl-cdi-gone");
  auto gone = as_user({rt.binary, "run", "-b", b.path(), "rl-cdi-gone"}, 30, env);
  EXPECT_EQ(gone.code, 1);
  EXPECT_NE(gone.err.find(host.path() + "/gone0"), std::string::npos) << gone.err;
  EXPECT_NE(::access((host.path() + "/gone0").c_str(), F_OK), 0) << "nothing is made on the host";
}

}  // namespace
}  // namespace berth::test::rootless
