// Killed at any moment: SIGKILL lands on berth (or, in other iterations, on the container's
// init) at a random point of create → start → exec → delete; afterwards `delete --force`
// succeeds, a second one too, and the census equals the one taken before. Iterations:
// BERTH_KILL_ITERATIONS (default 200); seed: BERTH_KILL_SEED (printed, for replay).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "reliability/child.h"
#include "reliability/fixture.h"

namespace berth::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kCommandTimeoutMs = 30000;  // a command that takes longer has hung

enum Step { kCreate, kStart, kExec, kDelete, kSteps };
const char* const kStepNames[] = {"create", "start", "exec", "delete"};

struct Victim {
  bool init = false;  // the container's init instead of berth
  int delay_us = 0;   // from the start of the iteration
};

std::vector<std::string> step_args(const RelEnv& env, Step s, const std::string& id, const std::string& bundle) {
  std::vector<std::string> a = {env.rt().binary(), "--root", env.rt().root()};
  switch (s) {
    case kCreate: a.insert(a.end(), {"create", "--bundle", bundle, "--pid-file", bundle + "/pid", id}); break;
    case kStart: a.insert(a.end(), {"start", id}); break;
    case kExec: a.insert(a.end(), {"exec", id, "sh", "-c", "echo exec"}); break;
    default: a.insert(a.end(), {"delete", "--force", id}); break;
  }
  return a;
}

// The init as recorded, else whatever already runs in the container's cgroup (stage one
// before its pid is written).
pid_t find_init(const RelEnv& env, const std::string& id) {
  if (pid_t p = env.recorded_pid(id); p > 0) return p;
  std::string procs = read_volatile("/sys/fs/cgroup/pids" + env.cgroup_parent() + "/" + id + "/cgroup.procs");
  return static_cast<pid_t>(std::atoi(procs.c_str()));
}

struct Outcome {
  int killed_in = -1;  // step during which the kill landed; -1: the cycle completed first
  std::string failure;
};

// One create/start/exec/delete cycle with a SIGKILL at victim.delay_us.
Outcome run_cycle(const RelEnv& env, const std::string& id, const std::string& bundle, const Victim& v,
                  std::vector<long>* step_us) {
  Outcome out;
  auto t0 = Clock::now();
  auto deadline = t0 + std::chrono::microseconds(v.delay_us);
  for (int s = 0; s < kSteps; ++s) {
    auto started = Clock::now();
    Child c(step_args(env, static_cast<Step>(s), id, bundle));
    bool armed = out.killed_in < 0;
    int wait_ms = armed ? static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()) : kCommandTimeoutMs;
    if (armed && !c.wait_for(std::max(wait_ms, 0))) {
      out.killed_in = s;
      if (!v.init) {
        c.kill_now();
        return out;  // berth is gone mid-operation: on to the recovery
      }
      if (pid_t p = find_init(env, id); p > 0) ::kill(p, SIGKILL);
    }
    if (!c.wait_for(kCommandTimeoutMs)) {
      out.failure = std::string(kStepNames[s]) + " hung after the init was killed";
      return out;
    }
    if (step_us) step_us->push_back(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count());
    // Once the init is dead, later steps may fail, but only with a message; a foreground
    // exec reports its process's status, which the pid namespace's end killed (128+9).
    bool payload_killed = s == kExec && out.killed_in >= 0 && c.code() == 128 + SIGKILL;
    if (c.code() != 0 && !payload_killed && (out.killed_in < 0 || c.output().empty()))
      out.failure = std::string(kStepNames[s]) + " failed (" + std::to_string(c.code()) + "): " + c.output();
    if (c.output().find("Sanitizer") != std::string::npos) out.failure = c.output();
    if (!out.failure.empty()) return out;
  }
  return out;
}

TEST(KilledAtAnyMoment, DeleteForceRestoresTheHost) {
  RelEnv env;
  const int iterations = env_int("BERTH_KILL_ITERATIONS", 200);
  const unsigned seed = static_cast<unsigned>(env_int("BERTH_KILL_SEED", static_cast<int>(::time(nullptr))));
  std::printf("kill loop: %d iterations, seed %u (BERTH_KILL_SEED to replay)\n", iterations, seed);
  std::mt19937 rng(seed);

  // Calibration: how long each step takes here, uninterrupted.
  std::vector<long> step_us;
  std::string cal = env.bundle("cal", {"sleep", "300"});
  Census before = env.census();
  for (int i = 0; i < 2; ++i) {
    auto o = run_cycle(env, "cal", cal, Victim{false, 1 << 30}, &step_us);
    ASSERT_EQ(o.failure, "");
  }
  reap_children(5000);
  long create_us = (step_us[0] + step_us[4]) / 2, total_us = 0;
  for (long us : step_us) total_us += us;
  total_us /= 2;
  std::printf("calibration: create %ld us, whole cycle %ld us\n", create_us, total_us);
  ASSERT_EQ(before.leftovers(env.census()), "") << "an uninterrupted cycle left something";

  int kills[2][kSteps] = {};
  int completed = 0;
  for (int i = 0; i < iterations; ++i) {
    std::string id = "k" + std::to_string(i);
    std::string bundle = env.bundle(id, {"sleep", "300"});
    Victim v;
    v.init = rng() % 3 == 0;
    // Half the kills land inside create (the longest, most stateful step), half anywhere.
    long span = (rng() % 2 ? create_us : total_us) * 11 / 10;
    v.delay_us = static_cast<int>(rng() % static_cast<unsigned>(std::max(span, 1L)));
    Census pre = env.census();
    Outcome o = run_cycle(env, id, bundle, v, nullptr);
    std::string where = "iteration " + std::to_string(i) + " (seed " + std::to_string(seed) + "), " +
                        (v.init ? "init" : "berth") + " killed at " + std::to_string(v.delay_us) + " us in " +
                        (o.killed_in < 0 ? "none" : kStepNames[o.killed_in]);
    ASSERT_EQ(o.failure, "") << where;
    if (o.killed_in < 0) ++completed;
    else ++kills[v.init][o.killed_in];

    auto first = env.rt()({"delete", "--force", id});
    ASSERT_EQ(first.code, 0) << where << ": " << first.err;
    reap_children(5000);
    std::remove((bundle + "/pid").c_str());
    std::string left = pre.leftovers(env.census());
    ASSERT_EQ(left, "") << where;
    auto second = env.rt()({"delete", "--force", id});
    ASSERT_EQ(second.code, 0) << where << ": " << second.err;
    auto gone = env.rt()({"state", id});
    ASSERT_NE(gone.err.find("container does not exist"), std::string::npos) << where << ": " << gone.err;
  }
  std::printf("kills of berth during create/start/exec/delete: %d/%d/%d/%d; of the init: %d/%d/%d/%d; "
              "cycles completed first: %d\n",
              kills[0][0], kills[0][1], kills[0][2], kills[0][3], kills[1][0], kills[1][1], kills[1][2],
              kills[1][3], completed);
  EXPECT_EQ(before.leftovers(env.census()), "");
  // The loop must really cover the path: berth killed in each step (with enough iterations).
  if (iterations >= 100) {
    for (int s = 0; s < kSteps; ++s) EXPECT_GT(kills[0][s], 0) << "no kill landed during " << kStepNames[s];
  }
}

// `run -d` of a container that needs nothing of berth before its payload (its init shares
// berth's memory while berth sleeps, then starts the payload itself): SIGKILL on berth or
// on the init at a random moment of it; `delete --force` then restores the host.
TEST(KilledAtAnyMoment, RunDetachedThenDeleteForceRestoresTheHost) {
  RelEnv env;
  const int iterations = env_int("BERTH_KILL_RUN_ITERATIONS", 60);
  const unsigned seed = static_cast<unsigned>(env_int("BERTH_KILL_SEED", static_cast<int>(::time(nullptr))));
  std::printf("run kill loop: %d iterations, seed %u (BERTH_KILL_SEED to replay)\n", iterations, seed);
  std::mt19937 rng(seed);
  auto run_args = [&](const std::string& id, const std::string& bundle) {
    return std::vector<std::string>{env.rt().binary(), "--root", env.rt().root(), "run", "-d", "--bundle", bundle, id};
  };
  Census before = env.census();
  long run_us = 0;
  for (int i = 0; i < 2; ++i) {
    std::string id = "rcal" + std::to_string(i);
    std::string bundle = env.bundle(id, {"sleep", "300"});
    auto t0 = Clock::now();
    Child c(run_args(id, bundle));
    ASSERT_TRUE(c.wait_for(kCommandTimeoutMs));
    ASSERT_EQ(c.code(), 0) << c.output();
    run_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
    ASSERT_EQ(env.rt()({"delete", "--force", id}).code, 0);
    reap_children(5000);
  }
  ASSERT_EQ(before.leftovers(env.census()), "") << "an uninterrupted run left something";
  int kills[2] = {}, completed = 0;
  for (int i = 0; i < iterations; ++i) {
    std::string id = "r" + std::to_string(i);
    std::string bundle = env.bundle(id, {"sleep", "300"});
    bool init = rng() % 3 == 0;
    int delay_us = static_cast<int>(rng() % static_cast<unsigned>(std::max(run_us * 11 / 10, 1L)));
    std::string where = "iteration " + std::to_string(i) + " (seed " + std::to_string(seed) + "), " +
                        (init ? "init" : "berth") + " killed at " + std::to_string(delay_us) + " us";
    Census pre = env.census();
    auto deadline = Clock::now() + std::chrono::microseconds(delay_us);
    {  // the child's output memfd and pidfd are gone before the census below
      Child c(run_args(id, bundle));
      int wait_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
      if (!c.wait_for(std::max(wait_ms, 0))) {
        ++kills[init];
        if (!init) {
          c.kill_now();
        } else if (pid_t p = find_init(env, id); p > 0) {
          ::kill(p, SIGKILL);
        }
      } else {
        ++completed;
      }
      ASSERT_TRUE(c.wait_for(kCommandTimeoutMs)) << where << ": run hung";
      ASSERT_EQ(c.output().find("Sanitizer"), std::string::npos) << where << ": " << c.output();
      // Killed, it may fail, but only with a message.
      if (c.code() != 0 && c.code() != 128 + SIGKILL) {
        EXPECT_FALSE(c.output().empty()) << where;
      }
    }
    auto first = env.rt()({"delete", "--force", id});
    ASSERT_EQ(first.code, 0) << where << ": " << first.err;
    reap_children(5000);
    ASSERT_EQ(pre.leftovers(env.census()), "") << where;
    auto gone = env.rt()({"state", id});
    ASSERT_NE(gone.err.find("container does not exist"), std::string::npos) << where << ": " << gone.err;
  }
  std::printf("run kills of berth: %d, of the init: %d; runs completed first: %d\n", kills[0], kills[1], completed);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

}  // namespace
}  // namespace berth::test
