// The rootless suite's frame (tests/rootless): the dedicated unprivileged user that the
// test program creates (useradd with its own subuid/subgid ranges, a home, an
// XDG_RUNTIME_DIR) and removes at the end, commands run as that user, the runtimes side by
// side (berth, `runc --rootless`), and the `Rootless` fixture whose census after each case
// proves that nothing of it remains.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/harness.h"

namespace berth::test::rootless {

inline constexpr const char* kUser = "berth-rootless-t";
inline constexpr uint32_t kSubStart = 2100000000, kSubCount = 65536;

struct User {
  uint32_t uid = 0, gid = 0;
  std::string home, xdg;
  bool ready = false;
  std::string why_not;  // set when the user could not be made
};

// The test user, made once per test program by a global test environment.
User& user();

// Runs argv as the test user, with the environment a login would give it plus `env`.
CmdResult as_user(const std::vector<std::string>& argv, int timeout_s = 30, const std::vector<std::string>& env = {});

struct Twin {
  std::string name, binary;
};

// berth first, then runc where it is installed.
std::vector<Twin> runtimes();

class Rootless : public ::testing::Test {
 protected:
  void SetUp() override;
  // Deletes every id of `ids_` in both runtimes, then the census.
  void TearDown() override;

  // The rootless spec (`spec --rootless` for the test user), terminal off.
  spec::Spec& rootless_spec(Bundle& b, const std::string& script);

  CmdResult run(const Twin& rt, const Bundle& b, const std::string& id, const std::vector<std::string>& flags = {});

  // No process of the user survives (its inits were adopted by us: reap them first), no
  // cgroup and no state directory carries a test id, no bundle mount is left.
  void census();

  std::vector<std::string> ids_;
};

}  // namespace berth::test::rootless
