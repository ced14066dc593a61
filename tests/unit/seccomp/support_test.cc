// seccomp::support(): what `features` reports for this kernel and libseccomp.
#include <sys/utsname.h>

#include <algorithm>

#include "seccomp/seccomp.h"
#include "spec/names.h"
#include "unit/seccomp/seccomp_test_util.h"

namespace berth::seccomp {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(SeccompSupport, ListsWhatThisHostAccepts) {
  Support s = support();
  // Every operator is libseccomp's; the known flags are the spec's four.
  EXPECT_EQ(s.operators.size(), spec::names::seccomp_operators().size());
  EXPECT_EQ(s.known_flags.size(), spec::names::seccomp_flags().size());
  // Actions and flags the kernel refuses are left out, so each list is a subset.
  for (const auto& a : s.actions) EXPECT_TRUE(spec::names::contains(spec::names::seccomp_actions(), a)) << a;
  for (const auto& f : s.supported_flags) EXPECT_TRUE(has(s.known_flags, f)) << f;
  // Present on any kernel seccomp filters work on at all, and in libseccomp 2.5.
  for (const char* a : {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_TRAP", "SCMP_ACT_TRACE"})
    EXPECT_TRUE(has(s.actions, a)) << a;
  EXPECT_TRUE(has(s.supported_flags, "SECCOMP_FILTER_FLAG_TSYNC"));
  EXPECT_TRUE(has(s.archs, "SCMP_ARCH_X86_64"));
  EXPECT_TRUE(has(s.archs, "SCMP_ARCH_AARCH64"));
  EXPECT_FALSE(s.archs.empty());
}

TEST(SeccompSupport, NewerKernelFeaturesOnThisKernel) {
  struct utsname u {};
  ASSERT_EQ(uname(&u), 0);
  int major = 0, minor = 0;
  ASSERT_EQ(sscanf(u.release, "%d.%d", &major, &minor), 2);
  // SCMP_ACT_NOTIFY (5.0), KILL_PROCESS and LOG (4.14), SPEC_ALLOW (4.17),
  // WAIT_KILLABLE_RECV (5.19): all present from 5.19 on.
  if (major < 5 || (major == 5 && minor < 19)) GTEST_SKIP() << "kernel " << u.release << " predates 5.19";
  Support s = support();
  EXPECT_EQ(s.actions.size(), spec::names::seccomp_actions().size());
  EXPECT_EQ(s.supported_flags, s.known_flags);
}

}  // namespace
}  // namespace berth::seccomp
