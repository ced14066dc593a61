// The container's seccomp filter against the process engine's own calls
// (src/container/process/payload.cc, docs/seccomp.md), run against RecordingSys: nothing
// of berth's fails because close_range did, nothing is loaded before `start`,
// startContainer hooks load the filter in their own process, and a notify filter's
// listener hand-off is the only thing of ours after a load. The golden logs of every path
// are in process_sequence_test.cc.
#include <gtest/gtest.h>
#include <sys/eventfd.h>

#include "unit/container/process_fixture.h"

namespace berth::container::process::testing {
namespace {

// A notify filter (linux.seccomp.listenerPath): the listener is born with the filter and
// must reach the parent, so the hand-off (sendmsg, close of our copy, recvmsg of the
// answer) is the one thing of ours after the load. A tenant then execs; an init hands it
// to `create` before kReady, its fds closed first (the sync socket and exec.fifo kept).
InitConfig notify_config(const Identity& id, int sync_fd, bool tenant) {
  InitConfig cfg = payload_config(id, sync_fd, tenant);
  cfg.seccomp->listener_path = "/run/agent.sock";
  cfg.seccomp->syscalls.push_back({{"mkdir"}, "SCMP_ACT_NOTIFY", {}, {}});
  return cfg;
}

std::string notify_end(const Identity& id, const std::string& close) {
  std::string caps = id.no_new_privileges ? "" : "capset(effective 0x20000420, permitted 0x20000420, inheritable 0)\n";
  return "prctl(PR_SET_PDEATHSIG, 0)\n" + close + "seccomp_set_filter(0 insns, 0x8) = listener\n" + caps +
         "execve(\"/bin/sh\", [\"/bin/sh\", \"-c\", \"true\"], [\"PATH=/usr/bin:/bin\", \"HOME=/home/u\"])\n";
}

TEST(PayloadOrder, NotifyListenerIsTheOnlyThingAfterTheFilter) {
  for (const Identity& id : {identities()[1], identities()[2]}) {
    for (bool tenant : {true, false}) {
      SCOPED_TRACE(std::string(id.name) + (tenant ? " tenant" : " init"));
      test::RecordingSys sys;
      add_user_files(sys);
      sys.add_dir("/srv/app");
      sys.give_listener(UniqueFd(::eventfd(0, EFD_CLOEXEC)));
      Channel ch;
      ch.queue(Msg::kGo);  // the parent's answer once the agent has the listener
      int fifo[2];
      ASSERT_EQ(::pipe2(fifo, O_CLOEXEC), 0);
      ASSERT_EQ(::write(fifo[1], "0", 1), 1);
      ASSERT_EQ(::dup3(fifo[0], kFifoFd, O_CLOEXEC), kFifoFd);
      InitConfig cfg = notify_config(id, ch.child(), tenant);
      if (!tenant) cfg.fifo_fd = kFifoFd;
      EXPECT_EQ(run_payload(sys, cfg), 0) << ch.error();
      if (!tenant) ch.child_was_closed();
      for (int fd : {fifo[0], fifo[1], kFifoFd}) ::close(fd);
      std::string close = tenant ? "close_range(3, 99)\nclose_range(101, ~0)\n"
                                 : "close_range(3, 99)\nclose_range(101, 101)\nclose_range(103, ~0)\n";
      std::string log = changes(sys);
      EXPECT_NE(log.find("umask(022) = 022\n" + notify_end(id, close)), std::string::npos) << log;
      auto sent = ch.sent();
      ASSERT_EQ(sent.size(), tenant ? 1u : 2u);
      EXPECT_EQ(sent[0].type, Msg::kSeccompFd);
      EXPECT_TRUE(sent[0].fd) << "the listener crossed the socket";
      if (!tenant) {
        EXPECT_EQ(sent[1].type, Msg::kReady);
      }
    }
  }
}

// close_range runs before the filter, so no profile can make it fail: a failure (whatever
// the errno; ENOSYS and EPERM were once let through, when it ran under the filter) stops
// the start before the filter and execve.
TEST(PayloadOrder, CloseRangeFailureStopsBeforeTheFilter) {
  for (int err : {ENOSYS, EPERM, ENXIO}) {
    test::RecordingSys sys;
    add_user_files(sys);
    sys.add_dir("/srv/app");
    Channel ch;
    InitConfig cfg = payload_config(identities()[1], ch.child(), true);
    sys.fail("close_range", 1, err);
    EXPECT_EQ(run_payload(sys, cfg), 1);
    EXPECT_EQ(changes(sys).find("seccomp_set_filter("), std::string::npos) << changes(sys);
    EXPECT_EQ(changes(sys).find("execve("), std::string::npos) << changes(sys);
    EXPECT_NE(ch.error().find("close_range"), std::string::npos) << ch.error();
  }
}

// An init whose `start` never comes (the writer gone) loads no filter and closes nothing:
// everything of the end waits for `start`.
TEST(PayloadOrder, InitLoadsNoFilterBeforeStart) {
  test::RecordingSys sys;
  add_user_files(sys);
  sys.add_dir("/srv/app");
  Channel ch;
  int fifo[2];
  ASSERT_EQ(::pipe2(fifo, O_CLOEXEC), 0);
  ::close(fifo[1]);
  InitConfig cfg = payload_config(identities()[1], ch.child(), false);
  cfg.fifo_fd = fifo[0];
  EXPECT_NE(run_payload(sys, cfg), 0);  // its sync socket stays open: the Channel closes it
  ::close(fifo[0]);
  EXPECT_EQ(changes(sys).find("close_range("), std::string::npos) << changes(sys);
  EXPECT_EQ(changes(sys).find("seccomp_set_filter("), std::string::npos) << changes(sys);
}

// startContainer hooks run after `start`, as the container's user, each under the
// container's filter: the hook's own process loads it (then, without noNewPrivileges,
// sets the container's capabilities) and execs the hook; the init loads its filter only
// after the hooks, right before its execve. Here the hook runner stands in: it runs the
// last step and "execs" /hook through the same log.
TEST(PayloadOrder, StartContainerHooksRunUnderTheFilterInTheirOwnProcess) {
  for (const Identity& id : {identities()[1], identities()[2]}) {
    SCOPED_TRACE(id.name);
    test::RecordingSys sys;
    add_user_files(sys);
    sys.add_dir("/srv/app");
    Channel ch;
    int fifo[2];
    ASSERT_EQ(::pipe2(fifo, O_CLOEXEC), 0);
    ASSERT_EQ(::write(fifo[1], "0", 1), 1);
    ASSERT_EQ(::dup3(fifo[0], kFifoFd, O_CLOEXEC), kFifoFd);
    InitConfig cfg = payload_config(id, ch.child(), false);
    cfg.fifo_fd = kFifoFd;
    cfg.start_container_hooks = {spec::Hook{}};
    char hook_path[] = "/hook";
    char* hook_argv[] = {hook_path, nullptr};
    cfg.run_hooks = [&](const char* kind, const std::vector<spec::Hook>&, const OciState& state,
                        const std::vector<std::string>*, const std::function<Status()>* last_step) -> Status {
      EXPECT_STREQ(kind, "startContainer");
      EXPECT_EQ(state.status, "created");
      if (!last_step) return Error::generic("no last step for the hook's process");
      BERTH_TRY((*last_step)());
      return sys.execve(hook_path, hook_argv, hook_argv + 1);
    };
    EXPECT_EQ(run_payload(sys, cfg), 0);
    ch.child_was_closed();
    for (int fd : {fifo[0], fifo[1], kFifoFd}) ::close(fd);
    std::string filter = "seccomp_set_filter(0 insns, 0)\n";
    if (!id.no_new_privileges) filter += "capset(effective 0x20000420, permitted 0x20000420, inheritable 0)\n";
    std::string hook = filter + "execve(\"/hook\", [\"/hook\"], [])\n";
    std::string log = changes(sys);
    EXPECT_NE(log.find("prctl(PR_SET_PDEATHSIG, 0)\n" + hook + "close_range(3, 101)\nclose_range(103, ~0)\n" + filter +
                       "execve(\"/bin/sh\""),
              std::string::npos)
        << log;
  }
}

}  // namespace
}  // namespace berth::container::process::testing
