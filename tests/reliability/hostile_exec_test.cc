// A hostile container during `berth exec` (CVE-2019-5736 and kin): its process ptraces the
// runtime, reads the runtime's /proc/<pid>/environ and follows its /proc/<pid>/fd/*, and
// opens the runtime's /proc/<pid>/exe to write the host binary. Each attempt fails: the
// tenant is non-dumpable from its first instruction in the container's pid namespace. The
// same attacks on an ordinary process of the container succeed (the helper's control), so a
// refusal is berth's doing, not the test's.
#include "reliability/hostile.h"

namespace berth::test {
namespace {

// The helper met the runtime, and every attack on it while it was berth was refused.
void expect_all_refused(const HostileReport& r, const std::string& mode) {
  EXPECT_EQ(r.count("control " + mode + " ok"), 1) << "the attack does not even work on an ordinary process:\n"
                                                   << r.text();
  EXPECT_GE(r.count("seen "), 1) << "no berth process seen in " << r.execs << " execs:\n" << r.text();
  EXPECT_EQ(r.count("leaked "), 0) << r.text();
  EXPECT_EQ(r.count("done"), 1) << "the helper did not finish:\n" << r.text();
  std::printf("%s: %d execs, %d berth processes seen, %d attempts refused, %d too late\n", mode.c_str(), r.execs,
              r.count("seen "), r.count("denied "), r.count("late "));
}

TEST(HostileContainer, CannotPtraceTheRuntimeDuringExec) {
  RelEnv env;
  Census before = env.census();
  HostileReport r = hostile_run(env, "ptrace", "ptrace");
  expect_all_refused(r, "ptrace");
  EXPECT_GE(r.count("denied ", " ptrace 1"), 1) << "no PTRACE_ATTACH refused with EPERM:\n" << r.text();
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

TEST(HostileContainer, CannotReadTheRuntimesEnvironOrFds) {
  RelEnv env;
  Census before = env.census();
  HostileReport r = hostile_run(env, "read", "read");
  expect_all_refused(r, "read");
  EXPECT_EQ(r.count("", "canary"), 0) << "berth's environment was read:\n" << r.text();
  EXPECT_GE(r.count("denied ", " environ "), 1) << r.text();
  EXPECT_GE(r.count("denied ", " fd-link "), 1) << r.text();
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

std::string digest(const std::string& path) { return run_cmd({"sha256sum", path}).out; }

TEST(HostileContainer, CannotWriteTheHostBinaryThroughProcExe) {
  RelEnv env;
  Census before = env.census();
  std::string was = digest(berth_binary());
  ASSERT_FALSE(was.empty());
  HostileReport r = hostile_run(env, "exe", "exe");
  expect_all_refused(r, "exe");
  EXPECT_GE(r.count("denied ", " exe "), 1) << r.text();
  EXPECT_EQ(digest(berth_binary()), was) << "the host binary changed";
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

}  // namespace
}  // namespace berth::test
