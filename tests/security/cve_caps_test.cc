// CVE-2022-29162: the runtime's own inheritable capabilities reached the container process
// (and with them ambient capabilities after an exec of a file with inheritable file caps).
// The test gives the calling process an inheritable capability, as a caller might have, and
// checks that a process without inheritable capabilities in its spec shows CapInh 0.
#include <sys/capability.h>

#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using CVE_2022_29162 = RootfsTest;

std::string cap_inh(const std::string& status) {
  for (const auto& line : str::split(status, '\n'))
    if (str::starts_with(line, "CapInh:")) return std::string(str::trim(line.substr(7)));
  return "<missing>";
}

// The calling process's inheritable set for the duration of a test.
class InheritableCap {
 public:
  explicit InheritableCap(cap_value_t cap) {
    saved_ = cap_get_proc();
    cap_t c = cap_dup(saved_);
    cap_set_flag(c, CAP_INHERITABLE, 1, &cap, CAP_SET);
    ok_ = cap_set_proc(c) == 0;
    cap_free(c);
  }
  ~InheritableCap() {
    cap_set_proc(saved_);
    cap_free(saved_);
  }
  bool ok() const { return ok_; }

 private:
  cap_t saved_;
  bool ok_ = false;
};

TEST_F(CVE_2022_29162, NoInheritableCapsUnlessTheSpecSaysSo) {
  InheritableCap leak(CAP_NET_RAW);
  ASSERT_TRUE(leak.ok());
  ASSERT_NE(cap_inh(slurp("/proc/self/status")), "0000000000000000") << "the caller has an inheritable cap";
  Runtime rt;
  Bundle b;
  ASSERT_TRUE(b.spec().process->capabilities->inheritable.empty());
  b.script("grep CapInh /proc/self/status");
  auto r = run_container(rt, b, "cve-29162");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(cap_inh(r.out), "0000000000000000");
}

TEST_F(CVE_2022_29162, InheritableCapsOnlyFromTheSpec) {
  InheritableCap leak(CAP_NET_RAW);
  Runtime rt;
  Bundle b;
  b.spec().process->capabilities->inheritable = {"CAP_KILL"};
  b.script("grep CapInh /proc/self/status");
  auto r = run_container(rt, b, "cve-29162-spec");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(cap_inh(r.out), "0000000000000020") << "CAP_KILL (5) only, not the caller's CAP_NET_RAW";
}

}  // namespace
}  // namespace berth::test
