// The install seal (docs/security.md): a berth binary on a read-only bind mount says so in
// `features` (org.berth.exe.sealed) and with --debug, and its create does not re-execute;
// the same binary unsealed says the opposite and re-executes from a detached read-only
// clone. Sealed here as contrib/setup.sh and contrib/systemd do it (a read-only bind of the
// file over itself), in a private mount namespace so that the host never sees it.
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>

#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using ExeSeal = RootfsTest;

// argv run in a private mount namespace where `bin` is sealed, when `sealed`.
CmdResult run_maybe_sealed(bool sealed, const std::string& bin, const std::vector<std::string>& argv) {
  std::string seal = sealed ? "mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" && " : "";
  std::vector<std::string> cmd = {"unshare", "--mount", "--propagation", "private", "sh", "-c", seal + "exec \"$@\"", bin};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  return run_cmd(cmd);
}

bool on_readonly_mount(const std::string& path) {
  struct statvfs st;
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  bool ro = fd >= 0 && ::fstatvfs(fd, &st) == 0 && (st.f_flag & ST_RDONLY);
  if (fd >= 0) ::close(fd);
  return ro;
}

std::string init_pid(const Runtime& rt, const std::string& id) {
  return std::string(str::trim(run_cmd({"sh", "-c", "tr ',' '\\n' < " + rt.root() + "/" + id + "/state.json | "
                                                    "grep '\"pid\"' | tr -dc 0-9"}).out));
}

TEST_F(ExeSeal, FeaturesDebugAndCreateFollowTheMount) {
  TempDir dir("berth-seal");
  std::string bin = dir.path() + "/berth";
  std::filesystem::copy_file(berth_binary(), bin);
  std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
  if (run_cmd({"unshare", "--mount", "true"}).code != 0) GTEST_SKIP() << "unshare --mount is not available here";
  Runtime rt(bin);
  for (bool sealed : {false, true}) {
    SCOPED_TRACE(sealed ? "sealed" : "unsealed");
    auto f = run_maybe_sealed(sealed, bin, {bin, "features"});
    ASSERT_EQ(f.code, 0) << f.err;
    EXPECT_NE(f.out.find(std::string("\"org.berth.exe.sealed\": \"") + (sealed ? "true" : "false") + "\""),
              std::string::npos) << f.out;
    // --debug says which before the command runs; after a re-exec the new process says it
    // runs from the clone (its /proc/self/exe has no path).
    Bundle b;
    b.script("true");
    std::string id = sealed ? "seal-on" : "seal-off";
    b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/" + id;
    b.write();
    auto c = run_maybe_sealed(sealed, bin, {bin, "--debug", "--root", rt.root(), "create", "--bundle", b.path(), id});
    ASSERT_EQ(c.code, 0) << c.err;
    EXPECT_EQ(c.err.find("exe: sealed: the binary is on a read-only mount") != std::string::npos, sealed) << c.err;
    EXPECT_EQ(c.err.find("re-executing from a read-only clone") != std::string::npos, !sealed) << c.err;
    EXPECT_EQ(c.err.find("running from a read-only clone") != std::string::npos, !sealed) << c.err;
    // Either way the waiting init (a clone of create) runs from a read-only mount.
    std::string pid = init_pid(rt, id);
    ASSERT_FALSE(pid.empty());
    EXPECT_TRUE(on_readonly_mount("/proc/" + pid + "/exe"));
    EXPECT_EQ(rt({"delete", "--force", id}).code, 0);
  }
  // Nothing of the seal reached the host's mount table.
  EXPECT_EQ(run_cmd({"findmnt", "-rn", bin}).out, "");
}

}  // namespace
}  // namespace berth::test
