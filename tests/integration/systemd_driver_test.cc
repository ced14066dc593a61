// --systemd-cgroup on a host without systemd (this one): runc's one-line refusal, for berth
// and runc alike, and nothing left behind (no state, no cgroup). The driver itself runs in
// the vm-systemd suites (tests/vm/systemd/), whose guest has systemd as PID 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "support/harness.h"

namespace berth::test {
namespace {

constexpr const char* kNoSystemd = "systemd not running on this host, cannot use systemd cgroups manager";

bool host_runs_systemd() { return ::access("/run/systemd/system", F_OK) == 0; }

TEST(SystemdDriverHost, RefusedWithoutSystemdAsRunc) {
  if (host_runs_systemd()) GTEST_SKIP() << "this host runs systemd; the vm-systemd suites cover the driver";
  Bundle b;
  if (!b.spec().linux) b.spec().linux.emplace();
  b.spec().linux->cgroups_path = "system.slice:berth:sdhost";
  b.write();
  std::vector<std::unique_ptr<Runtime>> runtimes;
  runtimes.push_back(std::make_unique<Runtime>());
  if (have_runc()) runtimes.push_back(std::make_unique<Runtime>("/usr/sbin/runc"));
  for (const auto& rtp : runtimes) {
    const Runtime& rt = *rtp;
    SCOPED_TRACE(rt.binary());
    for (const std::string cmd : {"run", "create"}) {
      auto r = rt({"--systemd-cgroup", cmd, "--bundle", b.path(), "sd-" + cmd});
      EXPECT_EQ(r.code, 1) << r.err;
      EXPECT_NE(r.err.find(kNoSystemd), std::string::npos) << r.err;
      EXPECT_EQ(rt({"state", "sd-" + cmd}).code, 1) << "no state left";
    }
    // An empty cgroupsPath means the default unit; refused the same way.
    auto r = rt({"--systemd-cgroup", "run", "--bundle", b.path(), "sd-default"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find(kNoSystemd), std::string::npos) << r.err;
  }
  for (const char* d : {"/sys/fs/cgroup/unified/system.slice", "/sys/fs/cgroup/memory/system.slice",
                        "/sys/fs/cgroup/system.slice"})
    EXPECT_NE(::access(d, F_OK), 0) << d << " was made";
}

TEST(SystemdDriverHost, SystemdPathWithoutTheFlagIsRefused) {
  if (host_runs_systemd()) GTEST_SKIP() << "this host runs systemd";
  Bundle b;
  if (!b.spec().linux) b.spec().linux.emplace();
  b.spec().linux->cgroups_path = "system.slice:berth:sdpath";
  b.write();
  Runtime berth;
  auto r = berth({"run", "--bundle", b.path(), "sdpath"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("systemd cgroup driver requires a running systemd"), std::string::npos) << r.err;
  EXPECT_EQ(berth({"state", "sdpath"}).code, 1);
}

}  // namespace
}  // namespace berth::test
