// The escape classes again through `exec`, whose process is set up by a different path
// than the init's (the tenant, see docs/exec.md): the runtime binary as the exec'd payload
// (CVE-2019-5736), a cwd through a leaked fd and the fds the process holds (CVE-2024-21626),
// capabilities added with `--cap` that must not become inheritable (CVE-2022-29162), and the
// container's seccomp filter and no_new_privs, which every exec'd process must carry too,
// and process.oomScoreAdj, which a container that replaced its /proc must not deflect
// (CVE-2025-52881 class).
#include <gtest/gtest.h>

#include "support/exec_helpers.h"

namespace berth::test {
namespace {

std::string binary_digest() { return run_cmd({"sha256sum", berth_binary()}).out; }

TEST(ExecAttacks, RuntimeBinaryAsTheExecPayloadIsRefused) {
  std::string before = binary_digest();
  Runtime rt;
  Container c(rt, "sec-exec-exe");
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  for (const auto& argv : std::vector<std::vector<std::string>>{{"/proc/self/exe", "--version"},
                                                                {"sh", "-c", "exec /proc/self/exe --version"}}) {
    auto r = c.exec({}, argv);
    EXPECT_NE(r.code, 0) << argv.back();
    // Directly, berth refuses it by name; through the container's shell, the execve of the
    // shell's own /proc/self/exe runs busybox, never berth (the tenant exec'd already).
    if (argv[0] == "/proc/self/exe") {
      EXPECT_NE(r.err.find("refusing to run the container runtime binary in the container"), std::string::npos) << r.err;
    }
    EXPECT_EQ(r.out.find("berth version"), std::string::npos) << r.out;
  }
  EXPECT_EQ(binary_digest(), before);
}

// For every fd number the exec'd process could have inherited, a cwd of /proc/self/fd/N
// either fails or lands inside the container: the payload then climbs with `..` and writes
// a marker, which must never appear on the host.
TEST(ExecAttacks, CwdThroughAnFdNeverReachesTheHost) {
  TempDir marker_dir("berth-rt-exec-21626");
  Runtime rt;
  Container c(rt, "sec-exec-cwd");
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  for (int fd = 3; fd <= 12; ++fd) {
    std::string marker = marker_dir.path() + "/escaped-" + std::to_string(fd);
    auto r = c.exec({"--cwd", "/proc/self/fd/" + std::to_string(fd)},
                    {"sh", "-c", "touch ../../../../../../../../.." + marker + " 2>/dev/null; pwd"});
    if (r.code != 0) {
      EXPECT_NE(r.err.find("chdir to cwd ("), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("/proc/self/fd/" + std::to_string(fd)), std::string::npos) << r.err;
    }
    EXPECT_EQ(::access(marker.c_str(), F_OK), -1) << "exec --cwd /proc/self/fd/" << fd << " reached the host";
  }
}

TEST(ExecAttacks, ExecProcessSeesOnlyStdio) {
  Runtime rt;
  Container c(rt, "sec-exec-fds");
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  // ls holds the directory it reads as fd 3; nothing of the runtime is above it.
  auto r = c.exec({}, {"ls", "-1", "/proc/self/fd"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n1\n2\n3\n");
}

TEST(ExecAttacks, AddedCapsAreNeverInheritable) {
  Runtime rt;
  Container c(rt, "sec-exec-cap");
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  auto r = c.exec({"--cap", "CAP_SYS_ADMIN"}, {"cat", "/proc/self/status"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(status_field(r.out, "CapInh"), "0000000000000000");
  EXPECT_EQ(status_field(r.out, "CapAmb"), "0000000000000000");
  EXPECT_NE(status_field(r.out, "CapEff"), "0000000000000000") << "the added capability is effective";
}

// A container whose seccomp filter denies mkdir: an exec'd process is under the same
// filter (and no_new_privs, as its spec says), so it cannot step around the filter.
TEST(ExecAttacks, SeccompAndNoNewPrivsHoldInExecProcesses) {
  Runtime rt;
  Container c(rt, "sec-exec-seccomp", [](spec::Spec& s) {
    spec::Seccomp p;
    p.default_action = "SCMP_ACT_ALLOW";
    p.syscalls.push_back({{"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO", 1, {}});
    s.linux->seccomp = p;
    s.process->no_new_privileges = true;
  });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  auto r = c.exec({}, {"sh", "-c", "mkdir /tmp/made; echo rc=$?; grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("rc=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Seccomp:\t2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NoNewPrivs:\t1"), std::string::npos) << r.out;
}

// A container holding CAP_SYS_ADMIN covers its /proc with a tmpfs holding a writable
// self/oom_score_adj. An exec whose process asks for oomScoreAdj 777 must still get it:
// had the write gone through the container's /proc, it would land in the fake file and the
// process keep the caller's value.
TEST(ExecAttacks, OomScoreAdjIsNotDeflectedByAFakeProc) {
  Runtime rt;
  std::vector<std::string> caps = {"CAP_SYS_ADMIN"};  // raising oom_score_adj needs nothing more
  Container c(rt, "sec-exec-oom", [&](spec::Spec& s) {
    s.process->capabilities = spec::Capabilities{caps, caps, {}, caps, {}};
  });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  auto faked = c.exec({}, {"sh", "-c", "mount -t tmpfs fake /proc && mkdir /proc/self && echo 0 > /proc/self/oom_score_adj"});
  ASSERT_EQ(faked.code, 0) << faked.err;
  spec::Process p;
  p.args = {"sh", "-c", "umount /proc && cat /proc/self/oom_score_adj"};
  p.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  p.cwd = "/";
  p.capabilities = spec::Capabilities{caps, caps, {}, caps, {}};
  p.oom_score_adj = 777;
  TempDir d("berth-exec-oom");
  write_text(d.path() + "/process.json", spec::to_json(p));
  auto r = c.exec({"--process", d.path() + "/process.json"}, {});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "777\n") << "the oomScoreAdj write was deflected";
}

}  // namespace
}  // namespace berth::test
