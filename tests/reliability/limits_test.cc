// Limits (hostile input): a 10 MiB config.json, JSON nested 100,000 levels deep, 10,000
// mounts, 10,000 env entries, 1,000 hooks. Each either works or fails with a clear error,
// within a time bound (a command still running after kBound seconds has hung, and is killed);
// nothing crashes. Afterwards the census equals the one before.
#include <fstream>
#include <sstream>
#include <string>

#include "reliability/trouble.h"

namespace berth::test {
namespace {

constexpr int kBound = 120;  // seconds; the slowest (1,000 hooks) takes 10 to 20 here

// Ran to its end, by itself: not killed at the bound, not by a signal of its own.
void expect_no_crash_no_hang(const CmdResult& r, const std::string& what) {
  EXPECT_LT(r.code, 128) << what << ": killed (hung past " << kBound << " s or crashed): " << r.err;
  EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << what << ": " << r.err;
}

CmdResult run_bounded(const RelEnv& env, const std::string& bundle, const std::string& id) {
  return run_cmd({berth_binary(), "--root", env.rt().root(), "run", "--bundle", bundle, id}, "", kBound);
}

TEST(Limits, TenMiBConfigWorksThroughTheWholeLife) {
  RelEnv env;
  Census before = env.census();
  std::string b = env.bundle("big", {"true"}, [](spec::Spec& s) { s.annotations["big"] = std::string(10u << 20, 'x'); });
  const Runtime& rt = env.rt();
  auto c = rt({"create", "--bundle", b, "big"}, "", kBound);
  expect_no_crash_no_hang(c, "create");
  ASSERT_EQ(c.code, 0) << c.err;
  auto st = rt({"state", "big"}, "", kBound);
  EXPECT_EQ(st.code, 0) << st.err;
  EXPECT_GT(st.out.size(), 10u << 20) << "state shows the annotations";
  EXPECT_EQ(rt({"start", "big"}, "", kBound).code, 0);
  auto d = rt({"delete", "--force", "big"}, "", kBound);
  EXPECT_EQ(d.code, 0) << d.err;
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

// 100,000 levels of '[' where the schema expects a string (an annotation) and where it
// expects nothing (an unknown field): refused by depth before any parsing recursion.
TEST(Limits, DeeplyNestedJsonIsRefused) {
  RelEnv env;
  Census before = env.census();
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const char* where : {"annotation", "unknown"}) {
    std::string id = std::string("deep-") + where;
    std::string b = env.bundle(id, {"true"});
    std::ifstream in(b + "/config.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t brace = text.find('{');
    std::string field = where == std::string("unknown") ? "\"x-unknown\": " + deep
                                                          : "\"annotations\": {\"deep\": " + deep + "}";
    std::ofstream(b + "/config.json") << text.substr(0, brace + 1) << field << "," << text.substr(brace + 1);
    auto r = run_bounded(env, b, id);
    expect_no_crash_no_hang(r, id);
    expect_clear_failure(r, "nested deeper than 512 levels", id);
  }
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

TEST(Limits, TenThousandMounts) {
  RelEnv env;
  Census before = env.census();
  std::string b = env.bundle("mounts", {"sh", "-c", "grep -c ' /m/' /proc/self/mountinfo"}, [](spec::Spec& s) {
    for (int i = 0; i < 10000; ++i) s.mounts.push_back({"/m/" + std::to_string(i), "tmpfs", "tmpfs", {"size=4k"}, {}, {}});
  });
  auto r = run_bounded(env, b, "mounts");
  expect_no_crash_no_hang(r, "10,000 mounts");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "10000\n");
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

TEST(Limits, TenThousandEnvEntries) {
  RelEnv env;
  Census before = env.census();
  std::string b = env.bundle("env", {"sh", "-c", "echo $(env | grep -c '^E[0-9]*=') $E9999"}, [](spec::Spec& s) {
    for (int i = 0; i < 10000; ++i) s.process->env.push_back("E" + std::to_string(i) + "=value-" + std::to_string(i));
  });
  auto r = run_bounded(env, b, "env");
  expect_no_crash_no_hang(r, "10,000 env entries");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "10000 value-9999\n");
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

TEST(Limits, ThousandHooks) {
  RelEnv env;
  Census before = env.census();
  std::string log = env.bundles() + "/hooks.log";
  std::string b = env.bundle("hooks", {"true"}, [&](spec::Spec& s) {
    s.hooks.emplace();
    for (int i = 0; i < 1000; ++i)
      s.hooks->create_runtime.push_back({"/bin/sh", {"sh", "-c", "echo " + std::to_string(i) + " >> " + log}, {}, {}});
  });
  auto r = run_bounded(env, b, "hooks");
  expect_no_crash_no_hang(r, "1,000 hooks");
  EXPECT_EQ(r.code, 0) << r.err;
  int lines = 0, in_order = 0;
  std::istringstream in(read_text(log));
  for (std::string l; std::getline(in, l); ++lines) in_order += std::atoi(l.c_str()) == lines;
  EXPECT_EQ(lines, 1000) << "every hook ran once";
  EXPECT_EQ(in_order, 1000) << "in order";
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

}  // namespace
}  // namespace berth::test
