// Hooks inherit no descriptor of the runtime: every fd berth holds is O_CLOEXEC, so each
// hook, on the host or in the container (createContainer, startContainer), sees only its
// stdio. A leaked fd of the container's init (a pidfd, a namespace, the sync socket) would
// hand a hook, or whatever it runs, a handle on the container.
#include <gtest/gtest.h>


#include "support/harness.h"

namespace berth::test {
namespace {

// A hook that appends "<name>" and then every open fd above 2 to `log`: test(1) is a shell
// builtin, so probing /proc/self/fd/N opens nothing itself (ls or a glob would).
spec::Hook fd_hook(const std::string& log, const std::string& name) {
  spec::Hook h;
  h.path = "/bin/sh";
  h.args = {"sh", "-c",
            "fds=; i=3; while [ $i -lt 1024 ]; do [ -e /proc/self/fd/$i ] && fds=\"$fds $i\"; i=$((i+1)); done; "
            "echo \"" + name + ":$fds\" >> " + log};
  return h;
}

TEST(HookFds, EveryHookSeesOnlyItsStdio) {
  Runtime rt;
  Bundle b;
  std::string log = b.path() + "/fds.log";
  spec::Hooks h;
  h.prestart = {fd_hook(log, "prestart")};
  h.create_runtime = {fd_hook(log, "createRuntime")};
  h.create_container = {fd_hook(log, "createContainer")};  // host paths still visible before pivot
  h.start_container = {fd_hook("/fds.log", "startContainer")};  // inside, after pivot
  h.poststart = {fd_hook(log, "poststart")};
  h.poststop = {fd_hook(log, "poststop")};
  b.spec().hooks = h;
  b.script("cat /fds.log");
  b.write();
  auto r = rt({"run", "--bundle", b.path(), "hook-fds"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "startContainer:\n");
  EXPECT_EQ(file_text(log), "prestart:\ncreateRuntime:\ncreateContainer:\npoststart:\npoststop:\n");
}

}  // namespace
}  // namespace berth::test
