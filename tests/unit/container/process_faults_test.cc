// Fail-each-call over the process engine's sequences (src/container/process/*): each
// sequence runs once against RecordingSys to list its calls, then once per call with that
// call failing (EIO). Every failure must end the sequence right there with one clear line
// that names the step (the failed call's name, or runc's "exec <path>" for execve), and
// execve must never run. Only inspection and best-effort calls may fail without an error:
// reads of the container's passwd/group, fstat/fstatfs of stdio (whose hand-over to the
// user is best effort), the first chdir (made as root, retried as the user) and umask,
// which cannot fail.
#include <gtest/gtest.h>
#include <sched.h>
#include <stdio.h>

#include <functional>
#include <map>
#include <set>

#include "linux/namespaces.h"
#include "unit/container/process_fixture.h"
#include "util/file.h"

namespace berth::container::process::testing {
namespace {

constexpr int kErr = EIO;

struct Outcome {
  bool ok = false;
  std::string error;  // the one error reported (returned, sent, or written to stderr)
};

// A sequence with its setup, run against `sys`.
using Scenario = std::function<Outcome(test::RecordingSys&)>;

Outcome from_status(const Status& st) { return {st.ok(), st ? "" : st.error().message()}; }

// Runs `body`, with fd 2 captured: the init's late failures (after kReady) go there.
Outcome capturing_stderr(const std::function<Outcome()>& body) {
  FILE* tmp = ::tmpfile();
  int saved = ::dup(2);
  ::dup2(::fileno(tmp), 2);
  Outcome o = body();
  ::dup2(saved, 2);
  ::close(saved);
  ::lseek(::fileno(tmp), 0, SEEK_SET);
  auto text = file::read_fd(::fileno(tmp), 1 << 16);
  ::fclose(tmp);
  if (o.error.empty() && text && !text->empty()) o.error = text->substr(0, text->find_last_not_of('\n') + 1);
  return o;
}

Outcome tenant_payload(test::RecordingSys& sys, const Identity& id) {
  add_user_files(sys);
  sys.add_dir("/srv/app");
  Channel ch;
  InitConfig cfg = payload_config(id, ch.child(), true);
  int rc = run_payload(sys, cfg);
  return {rc == 0, ch.error()};
}

Outcome init_payload(test::RecordingSys& sys, const Identity& id) {
  add_user_files(sys);
  sys.add_dir("/srv/app");
  Channel ch;
  int fifo[2];
  if (::pipe2(fifo, O_CLOEXEC) < 0 || ::write(fifo[1], "0", 1) != 1) return {false, "pipe"};
  InitConfig cfg = payload_config(id, ch.child(), false);
  cfg.fifo_fd = fifo[0];
  Outcome o = capturing_stderr([&] {
    int rc = run_payload(sys, cfg);
    return Outcome{rc == 0, ""};
  });
  // The init closes its end of the sync socket once `start` came, and only then.
  bool ready = false;
  for (const auto& m : ch.sent()) {
    ready |= m.type == Msg::kReady;
    if (m.type == Msg::kError && o.error.empty()) o.error = to_error(m).message();
  }
  if (ready) ch.child_was_closed();
  ::close(fifo[0]);
  ::close(fifo[1]);
  return o;
}

Outcome stage_one_joining(test::RecordingSys& sys) {
  Channel ch;
  ch.queue(Msg::kGo);
  linux::NamespacePlan plan;
  for (const char* type : {"user", "network", "mount"})
    plan.joins.push_back({type, linux::ns_flag(type), UniqueFd(sys.fake_fd(std::string("/ns/") + type))});
  InitConfig cfg;
  cfg.sync_fd = ch.child();
  cfg.ns = &plan;
  cfg.unshare_flags = CLONE_NEWPID | CLONE_NEWIPC;
  for (const char* h : {"cpu,cpuacct", "memory", "pids"}) {
    std::string path = std::string("/sys/fs/cgroup/") + h + "/c1/tasks";
    cfg.cgroup_tasks.push_back({sys.fake_fd(path), path});
  }
  return from_status(init_stage_one(sys, cfg));
}

Outcome stage_one_late_userns(test::RecordingSys& sys) {
  sys.add_dir("/proc/self");
  sys.add_file("/proc/self/timens_offsets");
  Channel ch;
  ch.queue(Msg::kGo, 2);
  linux::NamespacePlan plan;
  plan.new_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWTIME;
  InitConfig cfg;
  cfg.sync_fd = ch.child();
  cfg.ns = &plan;
  cfg.dumpable_until_mapped = true;
  cfg.unshare_flags = plan.new_flags;
  cfg.time_offsets["boottime"] = {1, 2};
  return from_status(init_stage_one(sys, cfg));
}

Outcome stage_two(test::RecordingSys& sys) {
  sys.add_dir("/rootfs");
  Channel ch;
  linux::NamespacePlan plan;
  InitConfig cfg = stage_two_config(ch.child(), &plan);
  return from_status(init_stage_two(sys, cfg));
}

Outcome tenant_enter_atomic(test::RecordingSys& sys) {
  add_user_files(sys);
  Channel ch;
  ch.queue(Msg::kGo);
  TenantConfig t;
  t.payload.sync_fd = ch.child();
  t.payload.process.oom_score_adj = -500;
  t.init_pidfd = sys.fake_fd("/[pidfd]");
  t.join_types = {"user", "network", "pid", "mount"};
  t.user_name = "u";
  return from_status(tenant_enter(sys, t));
}

// exec's tenant in our memory: it moves itself into the v1 cgroups, no go awaited.
Outcome tenant_enter_asleep(test::RecordingSys& sys) {
  Channel ch;
  ch.runtime_gone();
  TenantConfig t;
  t.parent_asleep = true;
  t.payload.sync_fd = ch.child();
  t.init_pidfd = sys.fake_fd("/[pidfd]");
  t.join_types = {"network", "pid", "mount"};
  for (const char* h : {"memory", "pids"}) {
    std::string path = std::string("/sys/fs/cgroup/") + h + "/c1/tasks";
    t.payload.cgroup_tasks.push_back({sys.fake_fd(path), path});
  }
  return from_status(tenant_enter(sys, t));
}

Outcome tenant_settle_user(test::RecordingSys& sys) {
  add_user_files(sys);
  Channel ch;
  ch.queue(Msg::kGo);
  TenantConfig t;
  t.payload.sync_fd = ch.child();
  t.payload.container_id = "c1";
  t.payload.process.rlimits = {{"RLIMIT_NPROC", 64, 64}};
  t.user_name = "u";
  return from_status(tenant_settle(sys, t));
}

struct Named {
  std::string name;
  Scenario run;
};
void PrintTo(const Named& n, std::ostream* os) { *os << n.name; }

std::vector<Named> scenarios() {
  std::vector<Named> out = {
      {"init_stage_one_joining", stage_one_joining},
      {"init_stage_one_late_userns", stage_one_late_userns},
      {"init_stage_two", stage_two},
      {"tenant_enter", tenant_enter_atomic},
      {"tenant_enter_asleep", tenant_enter_asleep},
      {"tenant_settle", tenant_settle_user},
  };
  for (const Identity& id : identities()) {
    out.push_back({std::string("tenant_payload_") + id.name, [&id](auto& sys) { return tenant_payload(sys, id); }});
    out.push_back({std::string("init_payload_") + id.name, [&id](auto& sys) { return init_payload(sys, id); }});
  }
  return out;
}

std::string call_name(const std::string& line) { return line.substr(0, line.find('(')); }

bool tolerated(const std::string& name, int nth) {
  static const std::set<std::string> inspection = {"read_file", "fstat", "fstatfs", "umask"};
  return inspection.count(name) || (name == "chdir" && nth == 1);
}

// Never an execve that went through: a failed one ends in " = -E...".
bool executed(const test::RecordingSys& sys) {
  for (const auto& l : sys.log())
    if (l.rfind("execve(", 0) == 0 && l.find(") = -") == std::string::npos) return true;
  return false;
}

class ProcessFaults : public ::testing::TestWithParam<Named> {};

TEST_P(ProcessFaults, EveryFailedCallStopsTheSequenceWithAnErrorNamingIt) {
  const Scenario& run = GetParam().run;
  test::RecordingSys clean;
  Outcome good = run(clean);
  ASSERT_TRUE(good.ok) << good.error;
  std::vector<std::string> calls;
  for (const auto& l : clean.log()) calls.push_back(call_name(l));
  ASSERT_FALSE(calls.empty());
  std::map<std::string, int> seen;
  int checked = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    int nth = ++seen[calls[i]];
    if (tolerated(calls[i], nth)) continue;
    SCOPED_TRACE("failing call " + std::to_string(i + 1) + ": " + clean.log()[i]);
    test::RecordingSys sys;
    sys.fail(calls[i], nth, kErr);
    Outcome o = run(sys);
    ++checked;
    EXPECT_FALSE(o.ok);
    EXPECT_FALSE(executed(sys));
    ASSERT_FALSE(sys.log().empty());
    std::string line = clean.log()[i];
    if (auto ret = line.rfind(") = "); ret != std::string::npos) line.resize(ret + 1);  // "= fd"
    EXPECT_EQ(sys.log().back(), line + " = -EIO")
        << "the sequence went on after the failure";
    std::string step = calls[i] == "execve" ? "exec /bin/sh: " : calls[i];
    EXPECT_NE(o.error.find(step), std::string::npos) << o.error;
    EXPECT_NE(o.error.find("input/output error"), std::string::npos) << o.error;
    EXPECT_EQ(o.error.find('\n'), std::string::npos) << o.error;
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Sequences, ProcessFaults, ::testing::ValuesIn(scenarios()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace berth::container::process::testing
