// direct_possible (container/launch.cc): one case per condition that keeps `run` off the
// direct init, each against the same otherwise direct-capable spec; and SharedChildCheck,
// the guard on a child that shares our memory (it keeps no fds of its own where we read).
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "container/launch.h"
#include "container/process/spawn.h"
#include "container/shared_child.h"

namespace berth::container {
namespace {

using process::InitConfig;
using process::Launch;

struct Case {
  spec::Spec spec;
  linux::NamespacePlan ns;
  InitConfig cfg;
  DirectFacts f;
  Case() {
    spec.process.emplace();
    spec.linux.emplace();
    cfg.ns = &ns;
    cfg.clone_flags = CLONE_NEWPID | CLONE_NEWNS;
    f.start_now = true;
    f.can_share_memory = true;
  }
  bool possible() const { return direct_possible(spec, cfg, f); }
};

TEST(DirectPossible, AStartNowRunWithNothingForTheParentIsDirect) { EXPECT_TRUE(Case().possible()); }

// Each condition alone turns it off.
const std::vector<std::pair<const char*, std::function<void(Case&)>>> kConditions = {
    {"a plain create (no start_now)", [](Case& c) { c.f.start_now = false; }},
    {"no shared clone (sanitizers)", [](Case& c) { c.f.can_share_memory = false; }},
    {"process.terminal", [](Case& c) { c.spec.process->terminal = true; }},
    {"--console-socket", [](Case& c) { c.f.console_socket = true; }},
    {"prestart hook", [](Case& c) { c.spec.hooks.emplace().prestart.push_back({}); }},
    {"createRuntime hook", [](Case& c) { c.spec.hooks.emplace().create_runtime.push_back({}); }},
    {"createContainer hook", [](Case& c) { c.spec.hooks.emplace().create_container.push_back({}); }},
    {"startContainer hook", [](Case& c) { c.spec.hooks.emplace().start_container.push_back({}); }},
    {"poststart hook", [](Case& c) { c.spec.hooks.emplace().poststart.push_back({}); }},
    {"seccomp listenerPath", [](Case& c) { c.spec.linux->seccomp.emplace().listener_path = "/run/agent.sock"; }},
    {"network devices to move", [](Case& c) { c.f.net_moves = true; }},
    {"runtime hooks wanted by the init", [](Case& c) { c.cfg.wants_runtime_hooks = true; }},
    {"bind sources opened by the runtime", [](Case& c) { c.cfg.sources_from_runtime = true; }},
    {"a second stage", [](Case& c) { c.cfg.launch = Launch::kSecondStage; }},
    {"a pid namespace entered last", [](Case& c) { c.cfg.launch = Launch::kForkLast; }},
    {"no namespace plan", [](Case& c) { c.cfg.ns = nullptr; }},
    {"a joined namespace", [](Case& c) { c.ns.joins.emplace_back(); }},
    {"a user namespace made by the clone", [](Case& c) { c.cfg.clone_flags |= CLONE_NEWUSER; }},
    {"a time namespace unshared", [](Case& c) { c.cfg.unshare_flags |= CLONE_NEWTIME; }},
    {"a new user namespace planned", [](Case& c) { c.f.creates_userns = true; }},
    {"--systemd-cgroup", [](Case& c) { c.f.systemd = true; }},
    {"pure cgroup v2 without clone3 onto our stack",
     [](Case& c) { c.f.pure_v2 = true, c.f.can_share_memory_into_cgroup = false; }},
    {"an ldconfig cache to fill", [](Case& c) { c.f.ldconfig_fill = true; }},
};

TEST(DirectPossible, EachConditionAloneKeepsTheClassicInit) {
  for (const auto& [name, apply] : kConditions) {
    Case c;
    apply(c);
    EXPECT_FALSE(c.possible()) << name;
  }
}

// Pure cgroup v2 where clone3 onto our stack is built: born in its cgroup, still direct.
TEST(DirectPossible, PureV2WithClone3OntoOurStackIsDirect) {
  Case c;
  c.f.pure_v2 = true;
  c.f.can_share_memory_into_cgroup = true;
  EXPECT_TRUE(c.possible());
}

// Empty hooks (`"hooks": {}`) are no hooks.
TEST(DirectPossible, EmptyHooksAreNone) {
  Case c;
  c.spec.hooks.emplace();
  c.spec.linux->seccomp.emplace();  // a filter without a listener
  EXPECT_TRUE(c.possible());
}

#define SKIP_WITHOUT_SHARED_MEMORY() \
  if (!process::kCanShareMemory) GTEST_SKIP() << "AddressSanitizer build: no child shares our memory"

TEST(SharedChildCheck, AChildThatUsesOurFdsOnlyPasses) {
  SKIP_WITHOUT_SHARED_MEMORY();
  std::vector<int> held = {::open("/dev/null", O_WRONLY | O_CLOEXEC)};
  ASSERT_GE(held[0], 0);
  SharedChildCheck check([&] { return held; });
  auto child = process::vfork_child(0, [&] { return ::write(held[0], "x", 1) == 1 ? 0 : 1; });
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(child->wait(), 0);
  EXPECT_TRUE(check.verify().ok());
  ::close(held[0]);
}

// The rule broken: the child opens an fd in its own table and stores it where we read.
TEST(SharedChildCheck, AnFdOfTheChildsOwnIsCaught) {
  SKIP_WITHOUT_SHARED_MEMORY();
  std::vector<int> held;
  held.reserve(4);  // the child must not reallocate our vector either
  SharedChildCheck check([&] { return held; });
  auto child = process::vfork_child(0, [&] {
    held.push_back(::open("/dev/null", O_RDONLY));
    return 0;
  });
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(child->wait(), 0);
  Status st = check.verify();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("of its own"), std::string::npos) << st.error().message();
}

// An fd we hold, replaced by the child with one of its own table: ours stays open, the
// number the child stored is caught.
TEST(SharedChildCheck, AnFdReplacedByOneOfTheChildsIsCaught) {
  SKIP_WITHOUT_SHARED_MEMORY();
  std::vector<int> held = {::open("/dev/null", O_RDONLY | O_CLOEXEC)};
  int ours = held[0];
  SharedChildCheck check([&] { return held; });
  auto child = process::vfork_child(0, [&] {
    held[0] = ::open("/dev/zero", O_RDONLY);
    return 0;
  });
  ASSERT_TRUE(child) << child.error().message();
  EXPECT_EQ(child->wait(), 0);
  EXPECT_FALSE(check.verify().ok());
  EXPECT_GE(::fcntl(ours, F_GETFD), 0);
  ::close(ours);
}

}  // namespace
}  // namespace berth::container
