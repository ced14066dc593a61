// checkpoint and restore on a host where they cannot succeed: the refusals made before
// CRIU runs (status, GPU/RDMA nodes, a bad --status-fd), a CRIU failure that leaves
// the container running, and a failed restore that leaves no state, cgroup or mount. The
// successful paths need a kernel CRIU 3.17 runs on: tests/vm/guest/criu-checkpoint.sh.
// Where runc has the same text, runc runs the same step.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "container/criu/rpc.h"
#include "support/exec_helpers.h"

namespace berth::test {
namespace {

bool have_criu() { return run_cmd({"sh", "-c", "command -v criu"}).code == 0; }

bool criu_fails_here(std::string* why) {
  auto r = run_cmd({"criu", "check"});
  *why = r.out + r.err;
  return r.code != 0;
}

// "running", "created"... from `state` ("" when it fails).
std::string state_status(const Runtime& rt, const std::string& id) {
  auto r = rt({"state", id});
  auto at = r.out.find("\"status\": \"");
  if (r.code != 0 || at == std::string::npos) return "";
  at += 11;
  return r.out.substr(at, r.out.find('"', at) - at);
}

bool built_with_criu() {
  auto f = run_cmd({berth_binary(), "features"});
  return f.out.find("\"org.berth.checkpoint.enabled\": \"true\"") != std::string::npos;
}

class Checkpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!built_with_criu()) GTEST_SKIP() << "berth was built without CRIU support";
  }
  Runtime berth_;
  Runtime runc_{"/usr/sbin/runc"};
};

TEST_F(Checkpoint, CreatedContainerIsRefusedAsByRunc) {
  for (const Runtime* rt : {&berth_, &runc_}) {
    if (rt == &runc_ && !have_runc()) continue;
    Bundle b;
    b.spec().process->args = {"sleep", "100"};
    b.write();
    std::string id = rt == &runc_ ? "ck-created-r" : "ck-created-b";
    ASSERT_EQ((*rt)({"create", "--bundle", b.path(), id}).code, 0);
    TempDir img;
    auto r = (*rt)({"checkpoint", "--image-path", img.path(), id});
    EXPECT_EQ(r.code, 1) << rt->binary();
    EXPECT_NE(r.err.find("Container cannot be checkpointed in created state"), std::string::npos) << r.err;
    EXPECT_EQ((*rt)({"delete", "-f", id}).code, 0);
  }
}

TEST_F(Checkpoint, FlagErrorsComeAfterTheContainerAsInRunc) {
  TempDir img;
  for (const Runtime* rt : {&berth_, &runc_}) {
    if (rt == &runc_ && !have_runc()) continue;
    auto r = (*rt)({"checkpoint", "--image-path", img.path(), "--manage-cgroups-mode", "loose", "nosuch"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("container does not exist"), std::string::npos) << rt->binary() << ": " << r.err;
  }
  Container c(berth_, "ck-flags");
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  auto mode = berth_({"checkpoint", "--image-path", img.path(), "--manage-cgroups-mode", "loose", c.id()});
  EXPECT_EQ(mode.code, 1);
  EXPECT_NE(mode.err.find("Invalid manage cgroups mode"), std::string::npos) << mode.err;
  // --lazy-pages is passed to CRIU; a status fd that is not open is refused first.
  auto lazy = berth_({"checkpoint", "--image-path", img.path(), "--lazy-pages", "--status-fd", "99", c.id()});
  EXPECT_EQ(lazy.code, 1);
  EXPECT_NE(lazy.err.find("invalid --status-fd argument 99"), std::string::npos) << lazy.err;
  auto parent = berth_({"checkpoint", "--image-path", img.path(), "--parent-path", "/abs", c.id()});
  EXPECT_NE(parent.err.find("--parent-path must be relative"), std::string::npos) << parent.err;
  // Nothing was written for a refused request, and the container runs on.
  EXPECT_EQ(file_text(img.path() + "/descriptors.json"), "");
  EXPECT_EQ(state_status(berth_, c.id()), "running");
}

TEST_F(Checkpoint, GpuContainerIsRefusedNamingTheNode) {
  Container c(berth_, "ck-gpu", [](spec::Spec& s) {
    // The node is all CRIU would see: a GPU's major, no driver needed to make it.
    s.linux->devices.push_back({"/dev/nvidia0", "c", 195, 0, 0666u, 0u, 0u});
    if (!s.linux->resources) s.linux->resources.emplace();
    s.linux->resources->devices.push_back({true, "c", 195, 0, "rw"});
  });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  TempDir img;
  auto r = berth_({"checkpoint", "--image-path", img.path(), c.id()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot checkpoint a container with NVIDIA GPUs (/dev/nvidia0)"), std::string::npos) << r.err;
  EXPECT_EQ(state_status(berth_, c.id()), "running");
}

TEST_F(Checkpoint, CriuFailureNamesTheMissingFeatureAndKeepsTheContainer) {
  std::string why;
  if (!have_criu()) GTEST_SKIP() << "no criu binary (Debian package criu)";
  if (!criu_fails_here(&why)) GTEST_SKIP() << "CRIU works on this kernel: the VM suite covers this host too";
  Container c(berth_, "ck-fail");
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  TempDir img;
  auto r = berth_({"checkpoint", "--image-path", img.path(), c.id()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("criu failed: type DUMP errno"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("log file: " + img.path() + "/dump.log"), std::string::npos) << r.err;
  // CRIU's own first error (what `criu check` also says) is in the message.
  // (`criu check` prints nothing when a CRIU configuration file sends its log elsewhere.)
  if (auto at = why.find("): "); at != std::string::npos) {
    std::string first = why.substr(at + 3);
    first = first.substr(0, first.find('\n'));
    EXPECT_NE(r.err.find("criu: " + first), std::string::npos) << r.err << "\ncriu check: " << why;
  }
  EXPECT_EQ(state_status(berth_, c.id()), "running");
  EXPECT_NE(file_text(img.path() + "/descriptors.json"), "");
}

// org.criu.config reaches CRIU as the fd berth checked (/proc/self/fd/N, which the worker
// inherits), never as the path, which could be swapped after the checks: CRIU's log names
// what it parsed and says it applied it (issue 31 §3). CRIU gets that far on this host too.
TEST_F(Checkpoint, ConfigFileReachesCriuThroughTheCheckedFd) {
  if (!have_criu()) GTEST_SKIP() << "no criu binary (Debian package criu)";
  TempDir conf;
  std::string file = conf.path() + "/app.conf";
  write_text(file, "# berth test\ntcp-established\n");
  ::chmod(file.c_str(), 0644);
  Bundle b;
  b.spec().process->args = {"sleep", "100"};
  b.spec().annotations["org.criu.config"] = file;
  b.spec().linux->cgroups_path = "/berth-test/ck-conf";
  b.write();
  ASSERT_EQ(berth_({"run", "-d", "--bundle", b.path(), "ck-conf"}).code, 0);
  TempDir img;
  auto r = berth_({"checkpoint", "--image-path", img.path(), "ck-conf"});
  std::string log = file_text(img.path() + "/dump.log");
  EXPECT_NE(log.find("Parsing config file /proc/self/fd/"), std::string::npos) << r.err << "\n" << log;
  EXPECT_NE(log.find("Would overwrite RPC settings with values from /proc/self/fd/"), std::string::npos) << log;
  EXPECT_EQ(log.find(file), std::string::npos) << "CRIU was given the path: " << log;
  (void)berth_({"delete", "-f", "ck-conf"});
}

// berth starts `criu swrk <fd>` itself: a fake CRIU records what it was given. Beyond stdio
// it holds only its socket end (no state-directory lock, no store, no container fd), and
// an answerless worker is one clear error; the container runs on.
TEST_F(Checkpoint, CriuWorkerGetsOnlyItsSocket) {
  TempDir d;
  std::string fake = d.path() + "/criu";
  // `exec ls`: the listing is of the worker's own fds (plus ls's directory handle).
  ASSERT_EQ(run_cmd({"sh", "-c", "printf '%s\\n' '#!/bin/sh' 'echo \"$*\" > " + d.path() +
                                     "/args' 'exec ls -l /proc/self/fd/ > " + d.path() + "/fds' > " + fake +
                                     " && chmod 755 " + fake})
                .code,
            0);
  Container c(berth_, "ck-swrk");
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  TempDir img;
  auto r = berth_({"--criu", fake, "checkpoint", "--image-path", img.path(), c.id()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("criu: " + fake + " swrk ended without an answer"), std::string::npos) << r.err;
  std::string args = file_text(d.path() + "/args");
  ASSERT_EQ(args.rfind("swrk ", 0), 0u) << args;
  std::string sock = args.substr(5, args.find('\n') - 5);
  std::string fds = file_text(d.path() + "/fds");
  std::vector<std::string> others;
  bool saw_sock = false;
  size_t at = 0;
  while (at < fds.size()) {
    std::string line = fds.substr(at, fds.find('\n', at) - at);
    at += line.size() + 1;
    auto arrow = line.find(" -> ");
    if (arrow == std::string::npos) continue;  // "total 0"
    std::string num = line.substr(line.rfind(' ', arrow - 1) + 1, arrow - line.rfind(' ', arrow - 1) - 1);
    std::string target = line.substr(arrow + 4);
    if (num == "0" || num == "1" || num == "2" || target.find("/proc/") == 0) continue;  // stdio, ls's handle
    if (num == sock && target.find("socket:[") == 0) {
      saw_sock = true;
      continue;
    }
    others.push_back(num + " -> " + target);
  }
  EXPECT_TRUE(saw_sock) << fds;
  EXPECT_EQ(others, std::vector<std::string>{}) << fds;
  EXPECT_EQ(state_status(berth_, c.id()), "running");
}

TEST_F(Checkpoint, FailedRestoreLeavesNothingBehind) {
  std::string why;
  if (!have_criu()) GTEST_SKIP() << "no criu binary (Debian package criu)";
  if (!criu_fails_here(&why)) GTEST_SKIP() << "CRIU works on this kernel: the VM suite covers this host too";
  Bundle b;
  b.spec().process->args = {"sleep", "100"};
  b.spec().linux->cgroups_path = "/berth-test/ck-restore";
  b.write();
  TempDir img;
  ASSERT_EQ(run_cmd({"sh", "-c", "echo '[\"/dev/null\",\"/dev/null\",\"/dev/null\"]' > " + img.path() + "/descriptors.json"}).code, 0);
  auto r = berth_({"restore", "-d", "--image-path", img.path(), "--bundle", b.path(), "ck-restore"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("criu failed: type RESTORE"), std::string::npos) << r.err;
  EXPECT_NE(berth_({"state", "ck-restore"}).code, 0);
  struct stat st;
  for (const char* h : {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified"})
    EXPECT_NE(::stat((std::string(h) + "/berth-test/ck-restore").c_str(), &st), 0) << h;
  EXPECT_EQ(mount_lines(berth_.root()), std::vector<std::string>{});
  EXPECT_EQ(mount_lines(b.rootfs()), std::vector<std::string>{});
}

// Issue 32: restore puts CRIU's worker in the container's cgroups, never berth itself (with
// the systemd driver the scope is started with the worker's pid; berth inside it was killed
// by systemd when a failure stopped the unit). A stand-in for criu answers the VERSION
// request, then, at the restore request (sent only once the worker is placed), records its
// own cgroups and berth's, and exits without an answer: the restore fails as CRIU's death
// makes it fail, and must leave nothing.
TEST_F(Checkpoint, RestorePlacesCriusWorkerNeverItself) {
  // criu_resp {type: VERSION, success: true, version {major 3, minor 17}} (rpc.proto)
  const std::string version_resp = "\x08\x0a\x10\x01\x52\x04\x08\x03\x10\x11";
  auto parsed = container::criu::unpack_response(reinterpret_cast<const uint8_t*>(version_resp.data()),
                                                   version_resp.size());
  ASSERT_TRUE(parsed) << parsed.error().message();
  ASSERT_EQ(parsed->version, 31700);
  TempDir fake;
  const std::string d = fake.path();
  // bash: the worker's socket can be above fd 9, which dash cannot redirect
  std::string script = "#!/bin/bash\n"
                       "n=$(cat " + d + "/n 2>/dev/null || echo 0); echo $((n + 1)) > " + d + "/n\n"
                       "dd bs=65536 count=1 <&\"$2\" >/dev/null 2>&1\n"
                       "if [ \"$n\" = 0 ]; then cat " + d + "/version >&\"$2\"; exit 0; fi\n"
                       "cat /proc/self/cgroup > " + d + "/worker; cat /proc/$PPID/cgroup > " + d + "/berth\n"
                       "exit 1\n";
  ASSERT_EQ(run_cmd({"sh", "-c", "cat > " + d + "/criu && chmod 755 " + d + "/criu"}, script).code, 0);
  // one write(2), one packet (bash's printf would split it at the \n byte)
  ASSERT_EQ(run_cmd({"sh", "-c", "cat > " + d + "/version"}, version_resp).code, 0);
  Bundle b;
  b.spec().process->args = {"sleep", "100"};
  b.spec().linux->cgroups_path = "/berth-test/ck-place";
  b.write();
  TempDir img;
  ASSERT_EQ(run_cmd({"sh", "-c", "echo '[\"/dev/null\",\"/dev/null\",\"/dev/null\"]' > " + img.path() + "/descriptors.json"}).code, 0);
  auto r = berth_({"--criu", d + "/criu", "restore", "-d", "--image-path", img.path(), "--bundle", b.path(), "ck-place"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("criu failed: type RESTORE"), std::string::npos) << r.err;
  std::string worker = run_cmd({"cat", d + "/worker"}).out, berth = run_cmd({"cat", d + "/berth"}).out;
  ASSERT_FALSE(worker.empty()) << "the stand-in never got the restore request: " << r.err;
  EXPECT_NE(worker.find("/berth-test/ck-place\n"), std::string::npos) << worker;
  EXPECT_FALSE(berth.empty());
  EXPECT_EQ(berth.find("/berth-test/ck-place"), std::string::npos) << "berth joined the container's cgroups:\n" << berth;
  EXPECT_NE(berth_({"state", "ck-place"}).code, 0);
  struct stat st;
  for (const char* h : {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified"})
    EXPECT_NE(::stat((std::string(h) + "/berth-test/ck-place").c_str(), &st), 0) << h;
  EXPECT_EQ(mount_lines(berth_.root()), std::vector<std::string>{});
  EXPECT_EQ(mount_lines(b.rootfs()), std::vector<std::string>{});
}

}  // namespace
}  // namespace berth::test
