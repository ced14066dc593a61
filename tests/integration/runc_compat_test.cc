// runc drop-in behaviour, each case run the same way on runc (when installed) and berth:
// a pre-existing frozen or non-empty cgroup at create, seccomp around startContainer
// hooks, exec --cgroup into v1 sub-cgroups, the leniencies engines rely on (unknown
// capabilities, ociVersion, device access strings), pausing a created container, and
// (berth only, runc leaks) delete --force of a container whose state.json is truncated.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>

#include "support/exec_helpers.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

const char* const kV1[] = {"freezer", "devices", "memory", "pids", "cpu"};

std::vector<Runtime*> runtimes(Runtime& berth, Runtime& runc) {
  std::vector<Runtime*> out = {&berth};
  if (have_runc()) out.push_back(&runc);
  else std::cout << "runc not installed: berth's side only\n";
  return out;
}

bool v1_host() { return fs::exists("/sys/fs/cgroup/freezer/cgroup.procs") && fs::exists("/sys/fs/cgroup/devices/cgroup.procs"); }

// The v1 directories of a cgroup made before create, as an engine or a user would.
struct PreCgroup {
  explicit PreCgroup(std::string path) : path(std::move(path)) {
    for (const char* c : kV1) fs::create_directories(std::string("/sys/fs/cgroup/") + c + this->path);
  }
  ~PreCgroup() {
    write_text("/sys/fs/cgroup/freezer" + path + "/freezer.state", "THAWED");
    for (const char* c : kV1) ::rmdir((std::string("/sys/fs/cgroup/") + c + path).c_str());
    for (const char* c : {"systemd", "unified", "cpuacct", "cpuset", "blkio"}) ::rmdir((std::string("/sys/fs/cgroup/") + c + path).c_str());
  }
  bool exists(const char* c) const { return fs::exists(std::string("/sys/fs/cgroup/") + c + path); }
  std::string path;
};

TEST(RuncCompat, FrozenExistingCgroupIsRefused) {
  if (!v1_host()) GTEST_SKIP() << "no v1 freezer and devices hierarchies on this host";
  Runtime berth, runc{runc_binary()};
  for (Runtime* rt : runtimes(berth, runc)) {
    Bundle b;
    b.script("sleep 30");
    b.write();
    PreCgroup cg(b.spec().linux->cgroups_path);
    write_text("/sys/fs/cgroup/freezer" + cg.path + "/freezer.state", "FROZEN");
    auto r = (*rt)({"create", "--bundle", b.path(), "frozen"}, "", 20);
    EXPECT_EQ(r.code, 1) << rt->binary() << ": " << r.err;
    EXPECT_NE(r.err.find("container's cgroup unexpectedly frozen"), std::string::npos) << rt->binary() << ": " << r.err;
    EXPECT_NE((*rt)({"state", "frozen"}).code, 0) << rt->binary() << ": nothing is left of the refused create";
    EXPECT_TRUE(cg.exists("freezer")) << rt->binary() << ": the caller's cgroup stays";
  }
}

TEST(RuncCompat, NonEmptyExistingCgroupWarns) {
  if (!v1_host()) GTEST_SKIP() << "no v1 freezer and devices hierarchies on this host";
  Runtime berth, runc{runc_binary()};
  for (Runtime* rt : runtimes(berth, runc)) {
    Bundle b;
    b.script("sleep 30");
    b.write();
    PreCgroup cg(b.spec().linux->cgroups_path);
    pid_t squatter = ::fork();
    if (squatter == 0) {
      ::execl("/bin/sleep", "sleep", "60", nullptr);
      ::_exit(127);
    }
    for (const char* c : kV1) write_text(std::string("/sys/fs/cgroup/") + c + cg.path + "/cgroup.procs", std::to_string(squatter));
    auto r = (*rt)({"create", "--bundle", b.path(), "busy"}, "", 20);
    EXPECT_EQ(r.code, 0) << rt->binary() << ": " << r.err;
    EXPECT_NE(r.err.find("container's cgroup is not empty: 1 process(es) found"), std::string::npos)
        << rt->binary() << ": " << r.err;
    // Both remove the container (runc leaves the busy cgroups, berth kills what is in them).
    auto del = (*rt)({"delete", "--force", "busy"});
    EXPECT_EQ(del.code, 0) << rt->binary() << ": " << del.err;
    EXPECT_NE((*rt)({"state", "busy"}).code, 0) << rt->binary();
    ::kill(squatter, SIGKILL);
    ::waitpid(squatter, nullptr, 0);
  }
}

// runc loads the filter before its init waits for `start`, so startContainer hooks (run
// by the init, inside the container) see it, with and without noNewPrivileges.
TEST(RuncCompat, StartContainerHooksRunUnderTheSeccompFilter) {
  Runtime berth, runc{runc_binary()};
  for (bool nnp : {true, false}) {
    std::string expected;
    for (Runtime* rt : runtimes(berth, runc)) {
      Bundle b;
      b.spec().process->no_new_privileges = nnp;
      spec::Seccomp sc;
      sc.default_action = "SCMP_ACT_ALLOW";
      sc.syscalls.push_back({{"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO", 1, {}});
      b.spec().linux->seccomp = sc;
      b.spec().hooks.emplace();
      b.spec().hooks->start_container.push_back(
          {"/bin/sh", {"sh", "-c", "mkdir /tmp/from-hook 2>/tmp/hook.out; echo rc=$? >>/tmp/hook.out"}, {}, {}});
      b.script("cat /tmp/hook.out; ls -d /tmp/from-hook 2>/dev/null || echo no-dir");
      b.write();
      auto r = (*rt)({"run", "--bundle", b.path(), "hooks"});
      EXPECT_EQ(r.code, 0) << rt->binary() << ": " << r.err;
      EXPECT_EQ(r.out, "mkdir: can't create directory '/tmp/from-hook': Operation not permitted\nrc=1\nno-dir\n")
          << rt->binary() << " (noNewPrivileges " << nnp << ")";
      if (expected.empty()) expected = r.out;
      EXPECT_EQ(r.out, expected) << "runc and berth differ";
    }
  }
}

// On v1, `--cgroup SUB` moves the process into SUB of every hierarchy (each must exist);
// `--cgroup ctrl[,ctrl]:SUB` only in those.
TEST(RuncCompat, ExecIntoV1SubCgroups) {
  if (!v1_host()) GTEST_SKIP() << "no v1 hierarchies on this host";
  Runtime berth, runc{runc_binary()};
  for (Runtime* rt : runtimes(berth, runc)) {
    Container c(*rt, "sub");
    ASSERT_EQ(c.started().code, 0) << c.started().err;
    std::string base = "/berth-test/sub";
    auto line_of = [](const std::string& cgroups, const std::string& ctrl) {
      std::istringstream in(cgroups);
      std::string l;
      while (std::getline(in, l))
        if (l.find(":" + ctrl + ":") != std::string::npos) return l.substr(l.rfind(':') + 1);
      return std::string("?");
    };
    // Only memory/sub exists: "sub" for every hierarchy fails, memory:sub works.
    fs::create_directories("/sys/fs/cgroup/memory" + base + "/sub");
    auto all = c.exec({"--cgroup", "sub"}, {"cat", "/proc/self/cgroup"});
    EXPECT_EQ(all.code, 255) << rt->binary() << ": " << all.out;
    EXPECT_NE(all.err.find("/sub"), std::string::npos) << rt->binary() << ": " << all.err;
    auto mem = c.exec({"--cgroup", "memory:sub"}, {"cat", "/proc/self/cgroup"});
    EXPECT_EQ(mem.code, 0) << rt->binary() << ": " << mem.err;
    EXPECT_EQ(line_of(mem.out, "memory"), base + "/sub") << rt->binary() << ": " << mem.out;
    EXPECT_EQ(line_of(mem.out, "pids"), base) << rt->binary() << ": " << mem.out;
    auto cpu = c.exec({"--cgroup", "cpu:sub"}, {"cat", "/proc/self/cgroup"});
    EXPECT_EQ(cpu.code, 255) << rt->binary() << ": " << cpu.out;
    fs::create_directories("/sys/fs/cgroup/cpu" + base + "/sub");
    fs::create_directories("/sys/fs/cgroup/pids" + base + "/sub");
    cpu = c.exec({"--cgroup", "cpu:sub", "--cgroup", "pids:sub"}, {"cat", "/proc/self/cgroup"});
    EXPECT_EQ(cpu.code, 0) << rt->binary() << ": " << cpu.err;
    EXPECT_EQ(line_of(cpu.out, "cpu"), base + "/sub") << rt->binary() << ": " << cpu.out;
    EXPECT_EQ(line_of(cpu.out, "pids"), base + "/sub") << rt->binary() << ": " << cpu.out;
    EXPECT_EQ(line_of(cpu.out, "memory"), base) << rt->binary() << ": " << cpu.out;
    auto bad = c.exec({"--cgroup", "nosuch:sub"}, {"true"});
    EXPECT_EQ(bad.code, 255) << rt->binary();
    auto escape = c.exec({"--cgroup", "../x"}, {"true"});
    EXPECT_EQ(escape.code, 255) << rt->binary();
    for (const char* ctrl : {"memory", "cpu", "pids"}) ::rmdir(("/sys/fs/cgroup/" + std::string(ctrl) + base + "/sub").c_str());
    (void)(*rt)({"delete", "--force", "sub"});
  }
}

// Engines pass capability lists newer than the host (or than the runtime), and configs
// with any ociVersion; runc runs them (unknown capabilities dropped with a warning).
TEST(RuncCompat, UnknownCapabilitiesAndAnyOciVersionAreAccepted) {
  Runtime berth, runc{runc_binary()};
  for (Runtime* rt : runtimes(berth, runc)) {
    Bundle b;
    b.spec().process->capabilities->bounding.push_back("CAP_NOPE");
    b.spec().process->capabilities->effective.push_back("CAP_NOPE");
    b.spec().process->capabilities->bounding.push_back("CAP_BERTH_TEST");
    b.script("grep CapEff /proc/self/status");
    b.write();
    auto r = (*rt)({"run", "--bundle", b.path(), "caps"});
    EXPECT_EQ(r.code, 0) << rt->binary() << ": " << r.err;
    EXPECT_EQ(r.out, "CapEff:\t0000000020000420\n") << rt->binary();
    EXPECT_NE(r.err.find("ignoring unknown or unavailable capabilities: [CAP_BERTH_TEST CAP_NOPE]"), std::string::npos)
        << rt->binary() << ": " << r.err;
    for (const char* version : std::vector<const char*>{"", "0.1.0", "2.0.0", "1.0.2-dev", nullptr}) {
      Bundle v;
      v.script("echo ran");
      if (version) v.spec().oci_version = version;
      v.write();
      if (!version) {  // absent: drop the key from the written file
        std::string text = read_text(v.path() + "/config.json");
        size_t at = text.find("\"ociVersion\"");
        ASSERT_NE(at, std::string::npos);
        text.erase(at, text.find(',', at) + 1 - at);
        write_text(v.path() + "/config.json", text);
      }
      auto ran = (*rt)({"run", "--bundle", v.path(), "version"});
      EXPECT_EQ(ran.code, 0) << rt->binary() << " ociVersion " << (version ? version : "(absent)") << ": " << ran.err;
      EXPECT_EQ(ran.out, "ran\n") << rt->binary();
    }
  }
}

// Access strings as runc takes them: any order, repeats, stray characters skipped.
TEST(RuncCompat, DeviceAccessVariants) {
  if (!v1_host()) GTEST_SKIP() << "no v1 devices hierarchy on this host";
  Runtime berth, runc{runc_binary()};
  for (Runtime* rt : runtimes(berth, runc)) {
    for (auto [access, listed] : std::vector<std::pair<std::string, std::string>>{
             {"rwm", "rwm"}, {"mwr", "rwm"}, {"rrw", "rw"}, {"rwmx", "rwm"}, {"rw m", "rwm"}, {"mm", "m"}}) {
      Bundle b;
      b.spec().linux->resources.emplace();
      b.spec().linux->resources->devices = {{false, "", {}, {}, "rwm"}, {true, "b", 42, 3, access}};
      b.script("sleep 30");
      b.write();
      const std::string& path = b.spec().linux->cgroups_path;
      auto r = (*rt)({"run", "-d", "--bundle", b.path(), "dev"});
      EXPECT_EQ(r.code, 0) << rt->binary() << " access \"" << access << "\": " << r.err;
      std::string list = read_text("/sys/fs/cgroup/devices" + path + "/devices.list");
      EXPECT_NE(list.find("b 42:3 " + listed + "\n"), std::string::npos) << rt->binary() << " access \"" << access << "\": " << list;
      (void)(*rt)({"delete", "--force", "dev"});
    }
  }
  // berth only: an empty access means rwm, as an absent one does (runc refuses it: "device
  // access at 1 field cannot be empty"; docs/conformance.md).
  Bundle b;
  b.spec().linux->resources.emplace();
  b.spec().linux->resources->devices = {{false, "", {}, {}, "rwm"}, {true, "b", 42, 4, ""}};
  b.script("sleep 30");
  b.write();
  ASSERT_EQ(berth({"run", "-d", "--bundle", b.path(), "empty"}).code, 0);
  std::string list = read_text("/sys/fs/cgroup/devices" + b.spec().linux->cgroups_path + "/devices.list");
  EXPECT_NE(list.find("b 42:4 rwm\n"), std::string::npos) << list;
  EXPECT_EQ(berth({"delete", "--force", "empty"}).code, 0);
}

// runc: a created container can be paused; it then says "paused", start refuses it at
// once, resume makes it created again, and kill KILL thaws and stops it.
TEST(RuncCompat, PauseOfACreatedContainer) {
  Runtime berth, runc{runc_binary()};
  auto status = [](const Runtime& rt, const std::string& id) {
    std::string out = rt({"state", id}).out;
    size_t at = out.find("\"status\": \"");
    return at == std::string::npos ? out : out.substr(at + 11, out.find('"', at + 11) - at - 11);
  };
  for (Runtime* rt : runtimes(berth, runc)) {
    Bundle b;
    b.script("sleep 30");
    b.write();
    ASSERT_EQ((*rt)({"create", "--bundle", b.path(), "pc"}).code, 0);
    ASSERT_EQ((*rt)({"pause", "pc"}).code, 0) << rt->binary();
    EXPECT_EQ(status(*rt, "pc"), "paused") << rt->binary();
    auto t0 = std::chrono::steady_clock::now();
    auto start = (*rt)({"start", "pc"});
    EXPECT_EQ(start.code, 1) << rt->binary();
    EXPECT_NE(start.err.find("cannot start a container in the paused state"), std::string::npos) << rt->binary() << ": " << start.err;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3)) << rt->binary() << ": start refuses at once";
    ASSERT_EQ((*rt)({"resume", "pc"}).code, 0) << rt->binary();
    EXPECT_EQ(status(*rt, "pc"), "created") << rt->binary();
    ASSERT_EQ((*rt)({"pause", "pc"}).code, 0) << rt->binary();
    EXPECT_EQ((*rt)({"kill", "pc", "KILL"}).code, 0) << rt->binary();
    EXPECT_TRUE(eventually([&] { return status(*rt, "pc") == "stopped"; })) << rt->binary() << ": " << status(*rt, "pc");
    EXPECT_EQ((*rt)({"delete", "pc"}).code, 0) << rt->binary();
  }
}

// berth only (runc fails and leaks all of it): the init, its cgroups and the state
// directory go, found through the config copy; a warning says what could not be read.
TEST(RuncCompat, DeleteForceWithTruncatedState) {
  Runtime rt;
  Bundle b;
  b.script("sleep 1000");
  b.write();
  const std::string& path = b.spec().linux->cgroups_path;
  ASSERT_EQ(rt({"run", "-d", "--bundle", b.path(), "trunc"}).code, 0);
  int pid = state_pid(rt, "trunc");
  ASSERT_GT(pid, 0);
  std::string state = rt.root() + "/trunc/state.json";
  ASSERT_EQ(::truncate(state.c_str(), 20), 0);
  auto r = rt({"delete", "--force", "trunc"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("level=warning"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("could not read state.json"), std::string::npos) << r.err;
  // Gone, or a zombie of a reaper that does not reap (pid 1 of this host).
  EXPECT_TRUE(eventually([&] {
    return status_field(read_text("/proc/" + std::to_string(pid) + "/status"), "State").rfind("Z", 0) == 0 ||
           !fs::exists("/proc/" + std::to_string(pid));
  })) << "the init is gone";
  for (const char* c : {"memory", "pids", "freezer", "devices", "cpu", "unified"})
    EXPECT_FALSE(fs::exists(std::string("/sys/fs/cgroup/") + c + path)) << c << path;
  EXPECT_FALSE(fs::exists(rt.root() + "/trunc")) << "the state directory is gone";
}

}  // namespace
}  // namespace berth::test
