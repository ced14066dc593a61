// Load: BERTH_LOAD_CONTAINERS (default 100) containers created, started, exec'd into, killed
// and deleted, BERTH_LOAD_PARALLEL (default 8) at a time; concurrent commands on one id
// (start vs delete, kill vs delete --force, create vs create, start vs start) serialize
// through the container's lock with runc's outcomes. The census after equals the one before.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "reliability/child.h"
#include "reliability/fixture.h"

namespace berth::test {
namespace {

using Clock = std::chrono::steady_clock;

struct Outcome {
  int code;
  std::string out;
};

Outcome berth(const RelEnv& env, std::vector<std::string> args, int timeout_ms = 30000) {
  std::vector<std::string> argv = {env.rt().binary(), "--root", env.rt().root()};
  argv.insert(argv.end(), args.begin(), args.end());
  Child c(argv);
  if (!c.wait_for(timeout_ms)) return {-1, "timed out (hung): " + c.output()};
  return {c.code(), c.output()};
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string status_of(const RelEnv& env, const std::string& id) {
  auto r = berth(env, {"state", id});
  for (const char* s : {"creating", "created", "running", "paused", "stopped"})
    if (has(r.out, std::string("\"status\": \"") + s + "\"")) return s;
  return "none";
}

// One container's whole life; returns "" or what went wrong.
std::string cycle(const RelEnv& env, const std::string& id, const std::string& bundle) {
  auto fail = [&](const char* step, const Outcome& r) { return id + ": " + step + " (" + std::to_string(r.code) + "): " + r.out; };
  if (auto r = berth(env, {"create", "--bundle", bundle, id}); r.code != 0) return fail("create", r);
  // The init must have survived its create's exit (parent death signal race).
  if (std::string s = status_of(env, id); s != "created") return id + ": created container is " + s;
  if (auto r = berth(env, {"start", id}); r.code != 0) return fail("start", r);
  if (auto r = berth(env, {"exec", id, "sh", "-c", "echo in-$HOSTNAME"}); r.code != 0 || !has(r.out, "in-"))
    return fail("exec", r);
  if (auto r = berth(env, {"kill", id, "KILL"}); r.code != 0) return fail("kill", r);
  for (int i = 0; i < 500 && status_of(env, id) != "stopped"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (auto r = berth(env, {"delete", id}); r.code != 0) return fail("delete", r);
  return "";
}

TEST(Load, HundredContainersEightInParallel) {
  RelEnv env;
  const int total = env_int("BERTH_LOAD_CONTAINERS", 100);
  const int parallel = env_int("BERTH_LOAD_PARALLEL", 8);
  std::vector<std::string> bundles;
  for (int i = 0; i < total; ++i) bundles.push_back(env.bundle("l" + std::to_string(i), {"sleep", "300"}));
  Census before = env.census();
  std::atomic<int> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto t0 = Clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < parallel; ++w)
    workers.emplace_back([&] {
      for (int i; (i = next++) < total;) {
        std::string f = cycle(env, "l" + std::to_string(i), bundles[static_cast<size_t>(i)]);
        if (!f.empty()) {
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(f);
        }
      }
    });
  for (auto& t : workers) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("load: %d containers, %d in parallel, %.1f s (%.0f ms per container life)\n", total, parallel, secs,
              secs * 1000 * parallel / total);
  std::string all;
  for (const auto& f : failures) all += f + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << total << " failed:\n" << all;
  reap_children(10000);
  EXPECT_EQ(berth(env, {"list", "-q"}).out, "");
  EXPECT_EQ(before.leftovers(env.census()), "");
}

// Starts two commands on the same id at once; returns both results.
std::pair<Outcome, Outcome> race(const RelEnv& env, std::vector<std::string> a, std::vector<std::string> b) {
  auto argv = [&](std::vector<std::string> args) {
    std::vector<std::string> v = {env.rt().binary(), "--root", env.rt().root()};
    v.insert(v.end(), args.begin(), args.end());
    return v;
  };
  Child ca(argv(a)), cb(argv(b));
  bool da = ca.wait_for(30000), db = cb.wait_for(30000);
  return {{da ? ca.code() : -1, ca.output()}, {db ? cb.code() : -1, cb.output()}};
}

TEST(Load, ConcurrentCommandsOnOneIdSerialize) {
  RelEnv env;
  const int rounds = env_int("BERTH_RACE_ROUNDS", 10);
  std::string bundle = env.bundle("r", {"sleep", "300"});
  Census before = env.census();
  int start_first = 0, delete_first = 0;
  for (int i = 0; i < rounds; ++i) {
    // start vs delete on a created container: either the start wins (delete then refuses
    // a running container) or the delete does (start then finds no container).
    ASSERT_EQ(berth(env, {"create", "--bundle", bundle, "r"}).code, 0);
    auto [s, d] = race(env, {"start", "r"}, {"delete", "r"});
    ASSERT_GE(s.code, 0) << "start hung";
    ASSERT_GE(d.code, 0) << "delete hung";
    if (s.code == 0) {
      ++start_first;
      EXPECT_EQ(d.code, 1) << d.out;
      EXPECT_TRUE(has(d.out, "cannot delete container r that is not stopped: running")) << d.out;
      EXPECT_EQ(status_of(env, "r"), "running");
    } else {
      ++delete_first;
      EXPECT_EQ(d.code, 0) << d.out;
      EXPECT_TRUE(has(s.out, "container does not exist")) << s.out;
    }
    ASSERT_EQ(berth(env, {"delete", "--force", "r"}).code, 0);

    // kill vs delete --force on a running container: delete always succeeds; kill either
    // lands first or finds the container gone / stopped.
    ASSERT_EQ(berth(env, {"run", "-d", "--bundle", bundle, "r"}).code, 0);
    auto [k, f] = race(env, {"kill", "r", "KILL"}, {"delete", "--force", "r"});
    EXPECT_EQ(f.code, 0) << f.out;
    EXPECT_TRUE(k.code == 0 || has(k.out, "container does not exist") || has(k.out, "container not running")) << k.out;
    EXPECT_EQ(status_of(env, "r"), "none");

    // Two creates of one id: exactly one wins; the other says the id exists.
    auto [c1, c2] = race(env, {"create", "--bundle", bundle, "r"}, {"create", "--bundle", bundle, "r"});
    EXPECT_EQ((c1.code == 0) + (c2.code == 0), 1) << c1.out << " / " << c2.out;
    const Outcome& loser = c1.code == 0 ? c2 : c1;
    EXPECT_TRUE(has(loser.out, "container with id exists: r")) << loser.out;
    EXPECT_EQ(status_of(env, "r"), "created");

    // Two starts: one starts it, the other finds it running.
    auto [s1, s2] = race(env, {"start", "r"}, {"start", "r"});
    EXPECT_EQ((s1.code == 0) + (s2.code == 0), 1) << s1.out << " / " << s2.out;
    const Outcome& late = s1.code == 0 ? s2 : s1;
    EXPECT_TRUE(has(late.out, "cannot start an already running container")) << late.out;
    ASSERT_EQ(berth(env, {"delete", "--force", "r"}).code, 0);
    reap_children(5000);
  }
  std::printf("start vs delete: start first %d, delete first %d\n", start_first, delete_first);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

}  // namespace
}  // namespace berth::test
