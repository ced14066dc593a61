// linux.seccomp in real containers: each action observed from inside (ERRNO's value, KILL
// and KILL_PROCESS end the process, TRAP delivers SIGSYS, LOG and ALLOW allow), an argument
// filter, Docker's default profile, the filter on exec'd processes, and the filter cache
// (its --debug lines). Every case runs with and without noNewPrivileges (the two load
// orders) and, where runc is installed, under runc with the same bundle.
#include <gtest/gtest.h>
#include <signal.h>

#include "berth/spec.h"
#include "support/exec_helpers.h"

namespace berth::test {
namespace {

spec::Seccomp profile(const std::string& default_action, const std::vector<spec::Syscall>& rules) {
  spec::Seccomp s;
  s.default_action = default_action;
  s.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
  s.syscalls = rules;
  return s;
}

spec::Syscall rule(std::vector<std::string> names, const std::string& action, std::optional<uint32_t> errno_ret = {}) {
  spec::Syscall r;
  r.names = std::move(names);
  r.action = action;
  r.errno_ret = errno_ret;
  return r;
}

CmdResult run_once(const Runtime& rt, const std::string& id, const spec::Seccomp& p, bool nnp, const std::string& script,
                   const std::vector<std::string>& global = {}) {
  Bundle b;
  b.script(script);
  b.spec().process->no_new_privileges = nnp;
  b.spec().linux->seccomp = p;
  b.spec().linux->cgroups_path = "/berth-test/" + id;
  b.write();
  std::vector<std::string> args = global;
  args.insert(args.end(), {"run", "--bundle", b.path(), id});
  return rt(args);
}

// berth's result for the script under the profile, for both load orders; runc must agree
// (with noNewPrivileges only, when `runc_both` is false: see TrapDeliversSigsys).
void expect_under(const spec::Seccomp& p, const std::string& script, int code, const std::string& out,
                  bool runc_both = true) {
  Runtime berth;
  for (bool nnp : {true, false}) {
    std::string id = std::string("b-sc-") + (nnp ? "nnp" : "caps");
    auto r = run_once(berth, id, p, nnp, script);
    EXPECT_EQ(r.code, code) << "noNewPrivileges=" << nnp << ": " << r.err;
    EXPECT_EQ(r.out, out) << "noNewPrivileges=" << nnp;
    if (have_runc() && (nnp || runc_both)) {
      auto rr = run_once(Runtime(runc_binary()), "r-sc", p, nnp, script);
      EXPECT_EQ(rr.code, r.code) << "runc, noNewPrivileges=" << nnp << ": " << rr.err;
      EXPECT_EQ(rr.out, r.out) << "runc, noNewPrivileges=" << nnp;
    }
  }
}

const char* kMkdir = "mkdir /tmp/x 2>&1; echo status=$?; grep ^Seccomp: /proc/self/status";

TEST(SeccompActions, ErrnoReturnsTheChosenValue) {
  expect_under(profile("SCMP_ACT_ALLOW", {rule({"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO", EDQUOT)}), kMkdir, 0,
               "mkdir: can't create directory '/tmp/x': Disk quota exceeded\nstatus=1\nSeccomp:\t2\n");
  // Without errnoRet: EPERM.
  expect_under(profile("SCMP_ACT_ALLOW", {rule({"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO")}), kMkdir, 0,
               "mkdir: can't create directory '/tmp/x': Operation not permitted\nstatus=1\nSeccomp:\t2\n");
}

TEST(SeccompActions, KillEndsTheProcess) {
  // busybox runs mkdir in a child of the shell: the child dies of SIGSYS, the shell goes on.
  expect_under(profile("SCMP_ACT_ALLOW", {rule({"mkdir", "mkdirat"}, "SCMP_ACT_KILL")}),
               "mkdir /tmp/x; echo status=$?", 0, "status=159\n");
  expect_under(profile("SCMP_ACT_ALLOW", {rule({"mkdir", "mkdirat"}, "SCMP_ACT_KILL_PROCESS")}),
               "mkdir /tmp/x; echo status=$?", 0, "status=159\n");
  // The payload itself: killed, and the runtime reports 128+SIGSYS.
  expect_under(profile("SCMP_ACT_ALLOW", {rule({"mkdir", "mkdirat"}, "SCMP_ACT_KILL_PROCESS")}), "exec mkdir /tmp/x",
               159, "");
}

TEST(SeccompActions, TrapDeliversSigsys) {
  // cd is the shell's own chdir: the shell's SIGSYS handler runs, and the shell lives on.
  // Without noNewPrivileges runc's init dies here (it calls chdir after loading the
  // filter); berth changes directory before it, so both orders work.
  expect_under(profile("SCMP_ACT_ALLOW", {rule({"chdir"}, "SCMP_ACT_TRAP")}),
               "trap 'echo caught SIGSYS' SYS; cd /tmp; echo after; pwd", 0, "caught SIGSYS\nafter\n/\n", false);
}

TEST(SeccompActions, LogAndAllowAllow) {
  expect_under(profile("SCMP_ACT_ALLOW", {rule({"mkdir", "mkdirat"}, "SCMP_ACT_LOG")}),
               "mkdir /tmp/x && test -d /tmp/x && echo made", 0, "made\n");
  // Deny by default, with what busybox needs allowed: the filter is there and it allows.
  spec::Seccomp p = profile("SCMP_ACT_ERRNO", {});
  std::string text = read_text(source_dir() + "/tests/fixtures/seccomp/docker-default-seccomp.json");
  auto doc = spec::parse_spec("{\"ociVersion\":\"1.0.2\",\"linux\":{\"seccomp\":" + text + "}}");
  ASSERT_TRUE(doc.ok());
  p.syscalls = doc->linux->seccomp->syscalls;
  p.syscalls.push_back(rule({"mkdir", "mkdirat"}, "SCMP_ACT_ALLOW"));
  expect_under(p, "mkdir /tmp/x && test -d /tmp/x && echo made", 0, "made\n");
}

TEST(SeccompActions, ArgumentFilter) {
  // kill(pid, SIGUSR1) is refused; kill with any other signal passes.
  spec::Syscall r = rule({"kill"}, "SCMP_ACT_ERRNO", EPERM);
  spec::SeccompArg sig;
  sig.index = 1;
  sig.value = SIGUSR1;
  sig.op = "SCMP_CMP_EQ";
  r.args = {sig};
  expect_under(profile("SCMP_ACT_ALLOW", {r}),
               "trap 'echo got-usr2' USR2; kill -USR1 $$ 2>/dev/null || echo usr1-refused; kill -USR2 $$; echo done", 0,
               "usr1-refused\ngot-usr2\ndone\n");
}

TEST(SeccompActions, DockerDefaultProfile) {
  std::string text = read_text(source_dir() + "/tests/fixtures/seccomp/docker-default-seccomp.json");
  auto doc = spec::parse_spec("{\"ociVersion\":\"1.0.2\",\"linux\":{\"seccomp\":" + text + "}}");
  ASSERT_TRUE(doc.ok()) << doc.error().message();
  const spec::Seccomp& docker = *doc->linux->seccomp;
  // unshare is refused without CAP_SYS_ADMIN: EPERM, the profile's default errno.
  expect_under(docker, "echo hello; unshare -U true 2>&1; grep ^Seccomp: /proc/self/status", 0,
               "hello\nunshare: unshare(0x10000000): Operation not permitted\nSeccomp:\t2\n");
  // exec'd processes run under the container's filter too.
  Runtime berth;
  Container c(berth, "b-sc-docker", [&](spec::Spec& s) { s.linux->seccomp = docker; });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  auto r = c.exec({}, {"grep", "^Seccomp", "/proc/self/status"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "Seccomp:\t2\nSeccomp_filters:\t1\n");
}

TEST(SeccompCache, SecondCreateHitsTheCache) {
  Runtime berth;
  spec::Seccomp p = profile("SCMP_ACT_ALLOW", {rule({"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO", EDQUOT)});
  auto first = run_once(berth, "b-cache1", p, true, "true", {"--debug"});
  ASSERT_EQ(first.code, 0) << first.err;
  size_t miss = first.err.find("seccomp: cache miss ");
  ASSERT_NE(miss, std::string::npos) << first.err;
  std::string key = first.err.substr(miss + 20, 64);
  auto second = run_once(berth, "b-cache2", p, true, "true", {"--debug"});
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.err.find("seccomp: cache hit " + key), std::string::npos) << second.err;
  EXPECT_EQ(second.err.find("cache miss"), std::string::npos) << second.err;
  // exec compiles nothing either.
  Container c(berth, "b-cache3", [&](spec::Spec& s) { s.linux->seccomp = p; });
  ASSERT_EQ(c.started().code, 0);
  auto ex = berth({"--debug", "exec", "b-cache3", "mkdir", "/tmp/y"});
  EXPECT_EQ(ex.code, 1);
  EXPECT_NE(ex.err.find("Disk quota exceeded"), std::string::npos) << ex.err;
  EXPECT_NE(ex.err.find("seccomp: cache hit " + key), std::string::npos) << ex.err;
  struct stat st;
  ASSERT_EQ(::stat((berth.root() + "/.seccomp-cache").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, 0u);
}

}  // namespace
}  // namespace berth::test
