// Container lifecycle through the CLI: run, create/start/state/kill/delete, exit status,
// runc's texts for each wrong-state call, and nothing left behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include "support/harness.h"

namespace berth::test {
namespace {

TEST(Lifecycle, RunPassesExitStatusAndOutput) {
  Runtime rt;
  Bundle b;
  b.script("echo hello; exit 42").write();
  auto r = rt({"run", "--bundle", b.path(), "c1"});
  EXPECT_EQ(r.code, 42) << r.err;
  EXPECT_EQ(r.out, "hello\n");
  EXPECT_EQ(rt({"list", "-q"}).out, "") << "run deletes the container afterwards";
}

TEST(Lifecycle, CreateStartStateDelete) {
  Runtime rt;
  Bundle b;
  b.script("sleep 30").write();
  auto c = rt({"create", "--bundle", b.path(), "c2"});
  ASSERT_EQ(c.code, 0) << c.err;
  auto st = rt({"state", "c2"});
  EXPECT_NE(st.out.find("\"status\": \"created\""), std::string::npos) << st.out;
  ASSERT_EQ(rt({"start", "c2"}).code, 0);
  EXPECT_NE(rt({"state", "c2"}).out.find("\"status\": \"running\""), std::string::npos);
  auto again = rt({"start", "c2"});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("cannot start an already running container"), std::string::npos) << again.err;
  auto del = rt({"delete", "c2"});
  EXPECT_EQ(del.code, 1);
  EXPECT_NE(del.err.find("cannot delete container c2 that is not stopped: running"), std::string::npos) << del.err;
  EXPECT_EQ(rt({"kill", "c2", "KILL"}).code, 0);
  for (int i = 0; i < 100 && rt({"state", "c2"}).out.find("stopped") == std::string::npos; ++i) ::usleep(20000);
  auto stopped = rt({"state", "c2"});
  EXPECT_NE(stopped.out.find("\"status\": \"stopped\""), std::string::npos) << stopped.out;
  EXPECT_NE(stopped.out.find("\"pid\": 0"), std::string::npos);
  auto k = rt({"kill", "c2"});
  EXPECT_EQ(k.code, 1);
  EXPECT_NE(k.err.find("container not running"), std::string::npos);
  EXPECT_EQ(rt({"delete", "c2"}).code, 0);
  auto gone = rt({"state", "c2"});
  EXPECT_EQ(gone.code, 1);
  EXPECT_NE(gone.err.find("container does not exist"), std::string::npos);
}

TEST(Lifecycle, DeleteForceOfMissingSucceeds) {
  Runtime rt;
  EXPECT_EQ(rt({"delete", "--force", "nosuch"}).code, 0);
  EXPECT_EQ(rt({"delete", "nosuch"}).code, 1);
}

TEST(Lifecycle, MissingExecutableUsesRuncWording) {
  Runtime rt;
  Bundle b;
  b.spec().process->args = {"nosuchcmd"};
  b.write();
  auto before = mount_lines();
  auto r = rt({"run", "--bundle", b.path(), "c3"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("exec: \\\"nosuchcmd\\\": executable file not found in $PATH"), std::string::npos) << r.err;
  EXPECT_EQ(rt({"list", "-q"}).out, "") << "a failed create leaves no state";
  EXPECT_EQ(mount_lines(), before) << "a failed create leaves no mount";
}

// What berth does not apply is refused by name, on every host, never silently dropped.
TEST(Lifecycle, FieldsBerthDoesNotApplyAreRefusedByName) {
  Runtime rt;
  Bundle b;
  b.spec().linux->intel_rdt = spec::IntelRdt{};
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "c-rdt"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("linux.intelRdt: Intel RDT is not supported by berth"), std::string::npos) << r.err;
  Bundle m;
  m.spec().linux->mount_label = "system_u:object_r:container_file_t:s0";
  m.write();
  r = rt({"run", "--bundle", m.path(), "c-label"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("linux.mountLabel: SELinux mount labels are not supported by berth"), std::string::npos) << r.err;
  EXPECT_EQ(rt({"list", "-q"}).out, "");
}

TEST(Lifecycle, PidFileIsWritten) {
  Runtime rt;
  Bundle b;
  b.script("sleep 30").write();
  std::string pid_file = b.path() + "/pid";
  ASSERT_EQ(rt({"create", "--bundle", b.path(), "--pid-file", pid_file, "c4"}).code, 0);
  auto state = rt({"state", "c4"});
  auto r = run_cmd({"cat", pid_file});
  EXPECT_NE(state.out.find("\"pid\": " + r.out + ","), std::string::npos) << state.out << " vs " << r.out;
  EXPECT_EQ(rt({"delete", "--force", "c4"}).code, 0);
}

}  // namespace
}  // namespace berth::test
