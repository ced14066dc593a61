// Hostile input to `create`: config.json truncated, 100 MB, nested 100,000 deep or not
// UTF-8; container ids that are paths; a --pid-file that an attacker replaced by a symlink
// to a host file; hooks named by a relative path. Each is refused with one clear line (or,
// for the pid file, written without following the link), quickly, and leaves nothing.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using HostileInput = RootfsTest;

void write_raw(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

// The bundle's config.json replaced by `text`; create must fail with `expect` in one line.
void expect_refused_config(const std::string& text, const std::string& expect) {
  Runtime rt;
  Bundle b;
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/hostile-config";
  b.write();
  write_raw(b.path() + "/config.json", text);
  auto start = std::chrono::steady_clock::now();
  auto r = rt({"create", "--bundle", b.path(), "hostile-config"});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_LT(took, std::chrono::seconds(10)) << "a hostile config must be refused quickly";
  EXPECT_NE(rt({"state", "hostile-config"}).code, 0) << "a state directory was left";
  EXPECT_FALSE(host_exists("/sys/fs/cgroup/pids" + std::string(kTestCgroupParent) + "/hostile-config"));
}

std::string good_config() {
  Bundle b;
  b.write();
  return slurp(b.path() + "/config.json");
}

TEST_F(HostileInput, TruncatedConfig) {
  std::string good = good_config();
  expect_refused_config(good.substr(0, good.size() / 2), "config.json: invalid JSON");
}

TEST_F(HostileInput, HundredMegabyteConfig) {
  // Valid JSON, a 100 MB annotation: refused by size before it is parsed.
  std::string good = good_config();
  std::string big = "{\"annotations\":{\"x\":\"" + std::string(100u << 20, 'a') + "\"}," + good.substr(1);
  expect_refused_config(big, "file too large");
}

TEST_F(HostileInput, HundredThousandLevelsOfNesting) {
  expect_refused_config(std::string(100000, '[') + std::string(100000, ']'), "nested deeper than 512 levels");
}

TEST_F(HostileInput, InvalidUtf8) {
  std::string good = good_config();
  size_t at = good.find("\"true\"");
  ASSERT_NE(at, std::string::npos);
  expect_refused_config(good.replace(at, 6, "\"tr\xff\xfeue\""), "invalid bytes in UTF8 string");
}

TEST_F(HostileInput, IdsThatArePathsAreRefused) {
  Runtime rt;
  Bundle b;
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/hostile-id";
  b.write();
  for (const std::string id : {"..", ".", "../x", "a/b", "/etc", "", "x\ny"}) {
    auto r = rt({"create", "--bundle", b.path(), id});
    EXPECT_EQ(r.code, 1) << "[" << id << "]";
    EXPECT_NE(r.err.find("invalid id format"), std::string::npos) << r.err;
  }
  EXPECT_EQ(run_cmd({"ls", "-A", rt.root()}).out, "") << "something was made under the state root";
}

// Where the pid file goes is the caller's choice, but its directory may be writable by the
// container (a volume): a symlink planted at the name must be replaced, never written
// through, or the container picks a host file for berth to overwrite.
TEST_F(HostileInput, PidFileSymlinkIsReplacedNotFollowed) {
  TempDir dir("berth-rt-pidfile");
  std::string victim = dir.path() + "/victim", pid_file = dir.path() + "/pid";
  write_raw(victim, "keep\n");
  ASSERT_EQ(::symlink(victim.c_str(), pid_file.c_str()), 0);
  Runtime rt;
  Bundle b;
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/hostile-pidfile";
  b.write();
  auto r = rt({"create", "--bundle", b.path(), "--pid-file", pid_file, "hostile-pidfile"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(victim), "keep\n");
  struct stat st{};
  ASSERT_EQ(::lstat(pid_file.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the pid file is still a symlink";
  EXPECT_EQ(rt({"delete", "--force", "hostile-pidfile"}).code, 0);
}

// A hook's path is resolved by nobody's cwd: the runtime-spec wants it absolute.
TEST_F(HostileInput, RelativeHookPathIsRefused) {
  Runtime rt;
  Bundle b;
  spec::Hooks h;
  h.prestart = {spec::Hook{"bin/sh", {"sh", "-c", "true"}, {}, {}}};
  b.spec().hooks = h;
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/hostile-hook";
  b.write();
  auto r = rt({"create", "--bundle", b.path(), "hostile-hook"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("hooks.prestart[0].path"), std::string::npos) << r.err;
  EXPECT_NE(rt({"state", "hostile-hook"}).code, 0);
}

// A mount inside a container's state directory: a restore killed while CRIU ran leaves the
// rootfs bound at criu-root (issue 32), and anything can be bound elsewhere in it. delete -f
// detaches criu-root, and the state directory's removal detaches any other mount it meets
// and never walks into one (RESOLVE_NO_XDEV): the mounted tree keeps its files. Before, the removal recursed
// through the bind, unlinked what it found, and then failed with EBUSY.
TEST_F(HostileInput, DeleteNeverEmptiesAMountInTheStateDirectory) {
  for (const char* name : {"criu-root", "elsewhere"}) {
    SCOPED_TRACE(name);
    Runtime rt;
    Bundle b;
    b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/hostile-mount";
    b.write();
    ASSERT_EQ(rt({"create", "--bundle", b.path(), "hostile-mount"}).code, 0);
    TempDir host("berth-rt-keep");
    write_raw(host.path() + "/file", "precious\n");
    std::string in = rt.root() + "/hostile-mount/" + name;
    ASSERT_EQ(::mkdir(in.c_str(), 0700), 0);
    ASSERT_EQ(::mount(host.path().c_str(), in.c_str(), nullptr, MS_BIND, nullptr), 0);
    auto d = rt({"delete", "-f", "hostile-mount"});
    bool still_mounted = ::umount2(in.c_str(), MNT_DETACH) == 0;
    EXPECT_EQ(slurp(host.path() + "/file"), "precious\n") << "delete -f emptied a mount in the state directory";
    // criu-root or anything else: the state directory is berth's own, and a mount in it
    // is detached (never entered, never emptied) so that delete -f leaves nothing.
    EXPECT_EQ(d.code, 0) << d.err;
    EXPECT_FALSE(still_mounted) << name << " was left mounted";
    EXPECT_NE(rt({"state", "hostile-mount"}).code, 0) << "the state directory was left";
  }
}

}  // namespace
}  // namespace berth::test
