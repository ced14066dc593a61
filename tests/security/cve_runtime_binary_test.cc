// CVE-2019-5736: a container that gets the runtime binary executed as its payload (through
// /proc/self/exe, directly, as a script interpreter, or in place of /bin/sh) could reopen it
// for writing and replace the host's runtime. Each test attempts it; berth refuses to run its
// own binary in the container, its init cannot be reached through /proc/<pid>/exe, and the
// binary on the host is byte for byte what it was.
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <thread>

#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using CVE_2019_5736 = RootfsTest;

std::string binary_digest() { return run_cmd({"sha256sum", berth_binary()}).out; }

void expect_refused(const CmdResult& r) {
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("refusing to run the container runtime binary in the container"), std::string::npos) << r.err;
}

TEST_F(CVE_2019_5736, ProcSelfExeAsThePayload) {
  std::string before = binary_digest();
  Runtime rt;
  Bundle b;
  b.spec().process->args = {"/proc/self/exe", "--version"};
  expect_refused(run_container(rt, b, "cve-5736-exe"));
  EXPECT_EQ(binary_digest(), before);
}

TEST_F(CVE_2019_5736, ScriptWithProcSelfExeInterpreter) {
  std::string before = binary_digest();
  Runtime rt;
  Bundle b;
  run_cmd({"sh", "-c", "printf '#!/proc/self/exe\\n' > " + b.rootfs() + "/evil && chmod 755 " + b.rootfs() + "/evil"});
  b.spec().process->args = {"/evil"};
  expect_refused(run_container(rt, b, "cve-5736-script"));
  EXPECT_EQ(binary_digest(), before);
}

TEST_F(CVE_2019_5736, ShellOfTheImageReplacedByTheTrampoline) {
  // The published exploit: the image's /bin/sh is "#!/proc/self/exe", so that the runtime
  // itself is what runs when the container starts its shell.
  std::string before = binary_digest();
  Runtime rt;
  Bundle b;
  run_cmd({"sh", "-c", "rm " + b.rootfs() + "/bin/sh && printf '#!/proc/self/exe\\n' > " + b.rootfs() +
                           "/bin/sh && chmod 755 " + b.rootfs() + "/bin/sh"});
  b.spec().process->args = {"/bin/sh", "-c", "true"};
  expect_refused(run_container(rt, b, "cve-5736-sh"));
  EXPECT_EQ(binary_digest(), before);
}

TEST_F(CVE_2019_5736, WaitingInitIsNotReachableThroughProcPidExe) {
  // Between create and start the container's pid 1 is still the runtime (waiting on
  // exec.fifo). A second container in its pid namespace tries to open /proc/1/exe, the
  // host binary: the init is not dumpable, so it is refused.
  std::string before = binary_digest();
  Runtime rt;
  Bundle target;
  target.script("true");
  target.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/cve-5736-target";
  target.write();
  ASSERT_EQ(rt({"create", "--bundle", target.path(), "cve-5736-target"}).code, 0);
  // trim returns a view: keep the command's output alive while it is used.
  std::string state_pid = run_cmd({"sh", "-c", "cat " + rt.root() + "/cve-5736-target/state.json | tr ',' '\\n' | "
                                               "grep '\"pid\"' | tr -dc 0-9"}).out;
  std::string pid(str::trim(state_pid));
  ASSERT_FALSE(pid.empty());
  Bundle attacker;
  for (auto& ns : attacker.spec().linux->namespaces)
    if (ns.type == "pid") ns.path = "/proc/" + std::string(pid) + "/ns/pid";
  attacker.script("readlink /proc/1/exe 2>&1; cat /proc/1/exe > /dev/null 2>&1 && echo OPENED || echo DENIED; "
                  "{ echo x >> /proc/1/exe; } 2>/dev/null && echo WROTE || echo DENIED");
  auto r = run_container(rt, attacker, "cve-5736-attacker");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("OPENED"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("WROTE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("DENIED\nDENIED\n"), std::string::npos) << r.out;
  EXPECT_EQ(rt({"delete", "--force", "cve-5736-target"}).code, 0);
  EXPECT_EQ(binary_digest(), before);
}


bool on_readonly_mount(const std::string& path) {
  struct statvfs st;
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  bool ro = fd >= 0 && ::fstatvfs(fd, &st) == 0 && (st.f_flag & ST_RDONLY);
  if (fd >= 0) ::close(fd);
  return ro;
}

// The re-exec from a read-only clone is decided by the kernel's answer (is the running
// binary on a read-only mount), never by the caller's environment: a variable that once
// marked the re-executed process must not switch the protection off for whoever sets it.
TEST_F(CVE_2019_5736, CallersEnvironmentCannotSkipTheReadOnlyReexec) {
  if (on_readonly_mount(berth_binary())) GTEST_SKIP() << berth_binary() << " is already on a read-only mount: no re-exec to observe";
  Runtime rt;
  Bundle b;
  b.script("true");
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/cve-5736-env";
  b.write();
  auto r = run_cmd({rt.binary(), "--root", rt.root(), "create", "--bundle", b.path(), "cve-5736-env"}, "", 30,
                   {"_BERTH_SEALED=1"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string state_pid = run_cmd({"sh", "-c", "cat " + rt.root() + "/cve-5736-env/state.json | tr ',' '\\n' | "
                                               "grep '\"pid\"' | tr -dc 0-9"}).out;
  std::string pid(str::trim(state_pid));
  ASSERT_FALSE(pid.empty());
  // The waiting init is a clone of the create process: its executable is what create ran from.
  EXPECT_TRUE(on_readonly_mount("/proc/" + pid + "/exe")) << "create ran from the writable binary";
  EXPECT_EQ(rt({"delete", "--force", "cve-5736-env"}).code, 0);
}

}  // namespace
}  // namespace berth::test
