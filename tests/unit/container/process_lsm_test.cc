// process.apparmorProfile / process.selinuxLabel in the payload, against RecordingSys: the
// label is written to the LSM's exec attribute through the container's procfs before the
// identity drop, and a /proc that is not procfs (an image's fake /proc, CVE-2019-16884) never
// takes the write: the payload stops with the field named and never reaches execve. This host
// has no LSM, so the real write cannot run here; the order and the refusal can.
#include <gtest/gtest.h>

#include "process_fixture.h"

namespace berth::container::process::testing {
namespace {

size_t index_of(const test::RecordingSys& sys, const std::string& prefix) {
  const auto& log = sys.log();
  for (size_t i = 0; i < log.size(); ++i)
    if (log[i].rfind(prefix, 0) == 0) return i;
  return log.size();
}

// A payload of a user with a label; `proc_type` is what /proc is in the container.
struct LabelledPayload {
  explicit LabelledPayload(const char* proc_type) {
    add_user_files(sys);
    sys.add_dir("/srv/app");
    sys.add_dir("/proc");
    sys.add_mount("/proc", proc_type);
    sys.add_dir("/proc/thread-self");
    sys.add_dir("/proc/thread-self/attr");
    sys.add_dir("/proc/thread-self/attr/apparmor");
    sys.add_file("/proc/thread-self/attr/apparmor/exec", "", 0666);
    sys.add_file("/proc/thread-self/attr/exec", "", 0666);
    cfg = payload_config(identities()[1], ch.child(), true);
  }
  test::RecordingSys sys;
  Channel ch;
  InitConfig cfg;
};

TEST(ProcessLsm, AppArmorProfileIsWrittenThroughProcfsBeforeTheIdentityDrop) {
  LabelledPayload p("proc");
  p.cfg.process.apparmor_profile = "berth-default";
  ASSERT_EQ(run_payload(p.sys, p.cfg), 0) << p.ch.error();
  size_t write = index_of(p.sys, "write_fd(");
  ASSERT_LT(write, p.sys.log().size()) << changes(p.sys);
  EXPECT_NE(p.sys.log()[write].find("exec berth-default"), std::string::npos) << p.sys.log()[write];
  EXPECT_LT(write, index_of(p.sys, "setresuid("));
  EXPECT_LT(write, index_of(p.sys, "execve("));
}

TEST(ProcessLsm, SelinuxLabelFallsBackToTheGenericAttribute) {
  LabelledPayload p("proc");
  p.cfg.process.selinux_label = "system_u:system_r:container_t:s0";
  ASSERT_EQ(run_payload(p.sys, p.cfg), 0) << p.ch.error();
  size_t write = index_of(p.sys, "write_fd(");
  ASSERT_LT(write, p.sys.log().size()) << changes(p.sys);
  EXPECT_NE(p.sys.log()[write].find("system_u:system_r:container_t:s0"), std::string::npos);
  EXPECT_LT(write, index_of(p.sys, "execve("));
}

TEST(ProcessLsm, AFakeProcNeverTakesTheLabelAndNothingRuns) {
  for (const char* type : {"tmpfs", "ext4"}) {
    LabelledPayload p(type);
    p.cfg.process.apparmor_profile = "berth-default";
    EXPECT_NE(run_payload(p.sys, p.cfg), 0) << type;
    EXPECT_EQ(index_of(p.sys, "write_fd("), p.sys.log().size()) << type << ":\n" << changes(p.sys);
    EXPECT_EQ(index_of(p.sys, "execve("), p.sys.log().size()) << type;
    std::string err = p.ch.error();
    EXPECT_NE(err.find("process.apparmorProfile"), std::string::npos) << err;
    EXPECT_NE(err.find("not on procfs"), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace berth::container::process::testing
