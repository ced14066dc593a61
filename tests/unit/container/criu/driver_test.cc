// The CRIU driver's restore placement (src/container/criu/driver.cc), with a stand-in for
// `criu swrk` (a shell script; no CRIU, no root): the placement runs with the worker's pid
// while the worker still waits for its request, and what it adds (the cgroup roots) is in
// the request the worker then reads. Issue 32: restore places CRIU's worker in the
// container's cgroups (the systemd scope is started with its pid), never berth itself.
#include "container/criu/driver.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "container/criu/rpc.h"

namespace berth::container::criu {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A directory with `criu`: VERSION is answered (3.17); any later request is saved to `req`,
// after `placed-before` records whether the placement had run by then, and the worker exits
// without an answer, as a CRIU that died.
struct StandIn {
  std::string dir;
  StandIn() {
    char tmpl[] = "/tmp/berth-criu-standin.XXXXXX";
    dir = ::mkdtemp(tmpl);
    // bash: the worker's socket can be above fd 9, which dash cannot redirect
    std::ofstream(dir + "/criu") << "#!/bin/bash\n"
                                    "d=" << dir << "\n"
                                    "n=$(cat $d/n 2>/dev/null || echo 0); echo $((n + 1)) > $d/n\n"
                                    "if [ \"$n\" = 0 ]; then dd bs=65536 count=1 <&\"$2\" >/dev/null 2>&1\n"
                                    "  cat $d/version >&\"$2\"; exit 0; fi\n"
                                    "echo $$ > $d/worker\n"
                                    "dd bs=65536 count=1 <&\"$2\" of=$d/req 2>/dev/null\n"
                                    "[ -e $d/placed ] && echo yes > $d/placed-before\n"
                                    "exit 1\n";
    ::chmod((dir + "/criu").c_str(), 0755);
    // criu_resp {type: VERSION, success: true, version {major 3, minor 17}} (rpc.proto), sent
    // with one write(2) by cat: one packet (bash's printf would split it at the \n byte)
    std::ofstream(dir + "/version", std::ios::binary) << std::string("\x08\x0a\x10\x01\x52\x04\x08\x03\x10\x11", 10);
    std::filesystem::create_directories(dir + "/img");
  }
  ~StandIn() { std::filesystem::remove_all(dir); }
};

TEST(CriuDriver, RestorePlacesTheWorkerBeforeItReadsTheRequest) {
  if (!built_with_criu()) GTEST_SKIP() << "berth was built without CRIU's rpc.proto code";
  StandIn s;
  Request r;
  r.kind = Kind::kRestore;
  r.images_dir = s.dir + "/img";
  r.log_file = "restore.log";
  r.root = "/";
  pid_t placed = 0;
  Placement place = [&](pid_t worker, Request& req) -> Status {
    placed = worker;
    // the worker runs, and is not berth
    EXPECT_NE(worker, ::getpid());
    EXPECT_EQ(::access(("/proc/" + std::to_string(worker)).c_str(), F_OK), 0);
    req.cg_roots = {{"", "/system.slice/berth-c1.scope"}};
    std::ofstream(s.dir + "/placed") << "1";
    return ok();
  };
  auto out = execute(r, s.dir + "/criu", {}, place);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message().find("criu failed: type RESTORE"), std::string::npos) << out.error().message();
  ASSERT_NE(placed, 0);
  EXPECT_EQ(slurp(s.dir + "/worker"), std::to_string(placed) + "\n") << "the placement got another pid than the worker's";
  EXPECT_EQ(slurp(s.dir + "/placed-before"), "yes\n") << "the request went out before the placement";
  std::string req = slurp(s.dir + "/req");
  auto text = describe_packed_request(std::vector<uint8_t>(req.begin(), req.end()));
  ASSERT_TRUE(text) << text.error().message();
  EXPECT_NE(text->find("cg_root :/system.slice/berth-c1.scope\n"), std::string::npos) << *text;
}

// A placement that fails (systemd refused the unit, a limit the kernel refused): no request
// is sent and the worker is gone when execute returns.
TEST(CriuDriver, AFailedPlacementSendsNothing) {
  if (!built_with_criu()) GTEST_SKIP() << "berth was built without CRIU's rpc.proto code";
  StandIn s;
  Request r;
  r.kind = Kind::kRestore;
  r.images_dir = s.dir + "/img";
  r.log_file = "restore.log";
  r.root = "/";
  pid_t worker = 0;
  auto out = execute(r, s.dir + "/criu", {}, [&](pid_t w, Request&) -> Status {
    worker = w;
    return Error::generic("linux.resources.cpu.cpus: failed to write \"7\"");
  });
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message(), "linux.resources.cpu.cpus: failed to write \"7\"");
  ASSERT_NE(worker, 0);
  EXPECT_NE(::access(("/proc/" + std::to_string(worker)).c_str(), F_OK), 0) << "the worker outlived the failed placement";
  EXPECT_EQ(slurp(s.dir + "/req"), "");
}

}  // namespace
}  // namespace berth::container::criu
