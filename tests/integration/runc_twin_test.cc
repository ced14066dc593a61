// runc twins for runc's own bats cases that berth failed: bind sources the container's root
// cannot reach in a user namespace (opened by the runtime, as runc's mount source fds), the
// hooks' environment without `env`, `linux.resources.unified` on a cgroup v1 host and
// `exec --cgroup` texts. Each case runs the same steps on runc (when installed) and berth.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/statfs.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "support/exec_helpers.h"

namespace berth::test {
namespace {

// A container root that is host uid/gid 100000, as in runc's userns.bats.
void in_user_namespace(Bundle& b) {
  b.spec().linux->namespaces.push_back({"user", ""});
  b.spec().linux->uid_mappings = {{0, 100000, 65534}};
  b.spec().linux->gid_mappings = {{0, 100000, 65534}};
  run_cmd({"chown", "-R", "100000:100000", b.rootfs()});
}

// A host directory <dir>/<name>/dir/foo.txt under a 0700 <name> owned by the host's root:
// the container's root (host uid 100000) cannot even look it up.
std::string unreachable_source(const std::string& dir, const std::string& name) {
  std::string top = dir + "/" + name;
  std::filesystem::create_directories(top + "/dir");
  write_text(top + "/dir/foo.txt", name + "\n");
  ::chmod(top.c_str(), 0700);
  return top + "/dir";
}

// runc's userns.bats "userns with 2 inaccessible mounts" and "... + exec": runc opens bind
// sources on the host's side before the init enters the user namespace.
TEST(RuncTwin, UnreachableBindSourcesInAUserNamespace) {
  std::map<std::string, CmdResult> run, exec;
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    TempDir host("berth-userns-src");
    Container c(rt, "unreach-" + name, {}, [&](Bundle& b) {
      in_user_namespace(b);
      b.spec().mounts.push_back({"/tmp/mount-1", "bind", unreachable_source(host.path(), "one"), {"bind"}, {}, {}});
      b.spec().mounts.push_back({"/tmp/mount-2", "bind", unreachable_source(host.path(), "two"), {"rbind"}, {}, {}});
    });
    run[name] = c.started();
    if (c.started().code != 0) return;
    exec[name] = c.exec({}, {"sh", "-c", "cat /tmp/mount-1/foo.txt /tmp/mount-2/foo.txt; ls /proc/1/fd"});
  });
  ASSERT_EQ(run["berth"].code, 0) << run["berth"].err;
  EXPECT_EQ(exec["berth"].code, 0) << exec["berth"].err;
  // The sources' fds are closed before the payload runs: the init holds stdio only.
  EXPECT_EQ(exec["berth"].out, "one\ntwo\n0\n1\n2\n");
  if (run.count("runc")) {
    EXPECT_EQ(run["runc"].code, 0) << run["runc"].err;
    EXPECT_EQ(exec["runc"].out, exec["berth"].out);
  }
}

// The mount the runtime opens is cut in the init's own mount namespace, so it keeps the
// kernel's locks: a host bind that is read-only stays read-only for a container root that
// holds CAP_SYS_ADMIN in its user namespace (it could otherwise remount it read-write).
TEST(RuncTwin, HostReadOnlyBindSourceStaysLockedInAUserNamespace) {
  std::map<std::string, CmdResult> seen;
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    TempDir host("berth-userns-ro");
    std::string src = host.path() + "/ro";
    std::filesystem::create_directories(src);
    ASSERT_EQ(::mount(src.c_str(), src.c_str(), nullptr, MS_BIND, nullptr), 0);
    ASSERT_EQ(::mount(nullptr, src.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr), 0);
    Bundle b;
    in_user_namespace(b);
    b.spec().process->capabilities->bounding.push_back("CAP_SYS_ADMIN");
    b.spec().process->capabilities->effective.push_back("CAP_SYS_ADMIN");
    b.spec().process->capabilities->permitted.push_back("CAP_SYS_ADMIN");
    b.spec().mounts.push_back({"/mnt", "bind", src, {"bind"}, {}, {}});
    b.script("mount -o remount,bind,rw /mnt 2>/dev/null; touch /mnt/written 2>/dev/null && echo written || echo refused");
    b.write();
    seen[name] = rt({"run", "--bundle", b.path(), "locked-" + name});
    EXPECT_FALSE(std::filesystem::exists(src + "/written")) << name << " wrote through a host read-only bind";
    ::umount2(src.c_str(), MNT_DETACH);
  });
  EXPECT_EQ(seen["berth"].code, 0) << seen["berth"].err;
  EXPECT_EQ(seen["berth"].out, "refused\n");
  if (seen.count("runc")) {
    EXPECT_EQ(seen["runc"].out, seen["berth"].out) << seen["runc"].err;
  }
}

// What each hook saw as its environment, by name.
std::map<std::string, std::string> hook_environments(const Runtime& rt, const std::string& id) {
  TempDir logs("berth-hook-env");
  Bundle b;
  auto hook = [&](const std::string& name, std::optional<std::vector<std::string>> env) {
    spec::Hook h;
    h.path = "/bin/sh";
    h.args = {"sh", "-c", "env > " + logs.path() + "/" + name + "; cat > /dev/null"};
    h.env = std::move(env);
    return h;
  };
  spec::Hooks h;
  h.prestart = {hook("prestart", std::nullopt), hook("prestart-empty", std::vector<std::string>{}),
                hook("prestart-own", std::vector<std::string>{"OWN=1"})};
  h.create_runtime = {hook("createRuntime", std::nullopt)};
  h.create_container = {hook("createContainer", std::nullopt)};
  h.poststart = {hook("poststart", std::nullopt)};
  h.poststop = {hook("poststop", std::nullopt)};
  spec::Hook start;
  start.path = "/bin/sh";
  start.args = {"sh", "-c", "env > /start-env"};
  h.start_container = {start};
  b.spec().hooks = h;
  b.spec().process->env = {"PATH=/bin", "FROM_IMAGE=1"};
  b.write();
  auto r = run_cmd({rt.binary(), "--root", rt.root(), "run", "--bundle", b.path(), id}, "", 30, {"TWIN_MARK=outside"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::map<std::string, std::string> out;
  for (const char* n : {"prestart", "prestart-empty", "prestart-own", "createRuntime", "createContainer", "poststart", "poststop"})
    out[n] = read_text(logs.path() + "/" + n);
  out["startContainer"] = read_text(b.rootfs() + "/start-env");
  return out;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// runc runs a hook without `env` with an inherited environment (Go's exec with a nil Env):
// its own for the runtime's hooks, the process's for startContainer; `env: []` is empty.
TEST(RuncTwin, HooksWithoutEnvInheritAsInRunc) {
  std::map<std::string, std::map<std::string, std::string>> seen;
  for_each_runtime([&](const Runtime& rt, const std::string& name) { seen[name] = hook_environments(rt, "hookenv-" + name); });
  for (auto& [name, env] : seen) {
    for (const char* kind : {"prestart", "createRuntime", "poststart", "poststop"}) {
      EXPECT_TRUE(has_line(env[kind], "TWIN_MARK=outside")) << name << " " << kind << ":\n" << env[kind];
      EXPECT_FALSE(has_line(env[kind], "FROM_IMAGE=1")) << name << " " << kind;
    }
    EXPECT_FALSE(has_line(env["prestart-empty"], "TWIN_MARK=outside")) << name << ":\n" << env["prestart-empty"];
    EXPECT_TRUE(has_line(env["prestart-own"], "OWN=1")) << name;
    EXPECT_FALSE(has_line(env["prestart-own"], "TWIN_MARK=outside")) << name;
    EXPECT_TRUE(has_line(env["startContainer"], "FROM_IMAGE=1")) << name << ":\n" << env["startContainer"];
    EXPECT_TRUE(has_line(env["startContainer"], "HOME=/root")) << name << ": HOME as the process gets it";
    EXPECT_FALSE(has_line(env["startContainer"], "TWIN_MARK=outside")) << name;
  }
  // Deliberate: runc 1.1 gives createContainer hooks (host binaries, cwd in the rootfs) the
  // image's environment, the way to CVE-2025-23266; berth gives them none.
  EXPECT_FALSE(has_line(seen["berth"]["createContainer"], "FROM_IMAGE=1")) << seen["berth"]["createContainer"];
  EXPECT_FALSE(has_line(seen["berth"]["createContainer"], "TWIN_MARK=outside"));
  if (seen.count("runc")) {
    EXPECT_TRUE(has_line(seen["runc"]["createContainer"], "FROM_IMAGE=1"));
  }
}

bool pure_cgroup_v2() {
  struct statfs st {};
  return ::statfs("/sys/fs/cgroup", &st) == 0 && st.f_type == 0x63677270;  // CGROUP2_SUPER_MAGIC
}

// runc's cgroups.bats "runc run (cgroup v1 + unified resources should fail)".
TEST(RuncTwin, UnifiedResourcesOnCgroupV1AreAnInvalidConfiguration) {
  if (pure_cgroup_v2()) GTEST_SKIP() << "the host has cgroup v2 only: unified resources are valid there";
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    Bundle b;
    if (!b.spec().linux->resources) b.spec().linux->resources = spec::Resources{};
    b.spec().linux->resources->unified = {{"memory.min", "131072"}};
    b.write();
    auto r = rt({"run", "--bundle", b.path(), "unified-" + name});
    EXPECT_NE(r.code, 0) << name;
    EXPECT_NE(r.err.find("invalid configuration"), std::string::npos) << name << ": " << r.err;
  });
}

// runc's exec.bats "runc exec --cgroup sub-cgroups": the texts scripts match.
TEST(RuncTwin, ExecCgroupTexts) {
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    Container c(rt, "subcg-" + name);
    ASSERT_EQ(c.started().code, 0) << name << ": " << c.started().err;
    auto parent = c.exec({"--cgroup", ".."}, {"true"});
    EXPECT_NE(parent.code, 0) << name;
    EXPECT_NE(parent.err.find(" .. is not a sub cgroup path"), std::string::npos) << name << ": " << parent.err;
    auto missing = c.exec({"--cgroup", "nonexistent"}, {"true"});
    EXPECT_NE(missing.code, 0) << name;
    EXPECT_NE(missing.err.find(" adding pid "), std::string::npos) << name << ": " << missing.err;
    EXPECT_NE(missing.err.find("/nonexistent/cgroup.procs: no such file "), std::string::npos) << name << ": " << missing.err;
    auto unknown = c.exec({"--cgroup", "whaaat:/"}, {"true"});
    EXPECT_NE(unknown.err.find("unknown controller "), std::string::npos) << name << ": " << unknown.err;
  });
}

}  // namespace
}  // namespace berth::test
