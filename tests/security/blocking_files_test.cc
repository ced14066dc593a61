// Files of the container, the bundle or an image that are FIFOs: each open(2) of one used
// to block berth for good (run, create and exec on a `#!` interpreter, exec --user on
// /etc/passwd, create on config.json, restore on descriptors.json; a direct run then
// ignored SIGTERM). Every one must now fail, or go on without the file, at once. Each
// runtime call has a deadline well below the harness's kill: a regression fails as a
// timeout (code 137) instead of hanging the suite.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "integration/rootfs_test_support.h"
#include "security/security_support.h"

namespace berth::test {
namespace {

using BlockingFiles = RootfsTest;

constexpr int kDeadline = 15;  // seconds; every answer below comes in well under one

void make_fifo(const std::string& path) {
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0) << path;
}

// A payload script whose interpreter is a FIFO of the container's.
void plant_fifo_interpreter(Bundle& b) {
  make_fifo(b.rootfs() + "/fifo");
  write_text(b.rootfs() + "/evil", "#!/fifo\n");
  ::chmod((b.rootfs() + "/evil").c_str(), 0755);
}

void expect_prompt_failure(const CmdResult& r, int code, const std::string& what) {
  EXPECT_NE(r.code, 137) << what << " blocked until killed";
  EXPECT_EQ(r.code, code) << what << ": " << r.err;
  EXPECT_NE(r.err.find("permission denied"), std::string::npos) << what << ": " << r.err;  // execve's EACCES, as runc
}

TEST_F(BlockingFiles, FifoInterpreterFailsRunCreateAndExecAtOnce) {
  Runtime rt;
  {
    Bundle b;
    plant_fifo_interpreter(b);
    b.spec().process->args = {"/evil"};
    // 1 where run's init starts the payload itself (direct_possible, as runc's run answers);
    // 127 where run goes through create and start (sanitizer builds, hooks, a terminal):
    // the execve fails after `start`, as in the create case below. Either way at once.
    auto r = run_container(rt, b, "fifo-interp-run", kDeadline);
    expect_prompt_failure(r, r.code == 127 ? 127 : 1, "run");
    EXPECT_NE(rt({"state", "fifo-interp-run"}).code, 0) << "a failed run left its container";
  }
  {
    Bundle b;
    plant_fifo_interpreter(b);
    b.spec().process->args = {"/evil"};
    b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/fifo-interp-create";
    b.write();
    // The init looks the payload up before it reports ready (where it used to block), and
    // its execve fails after `start`, whose answer does not wait for it (as runc's).
    auto r = rt({"create", "--bundle", b.path(), "fifo-interp-create"}, "", kDeadline);
    EXPECT_NE(r.code, 137) << "create blocked until killed";
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(rt({"start", "fifo-interp-create"}, "", kDeadline).code, 0);
    EXPECT_TRUE(eventually([&] { return rt({"state", "fifo-interp-create"}).out.find("stopped") != std::string::npos; }))
        << "the init did not end on the failed execve";
    EXPECT_EQ(rt({"delete", "--force", "fifo-interp-create"}, "", kDeadline).code, 0);
  }
  Container c(rt, "fifo-interp-exec", {}, [](Bundle& b) { plant_fifo_interpreter(b); });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  auto started = std::chrono::steady_clock::now();
  auto e = rt({"exec", "fifo-interp-exec", "/evil"}, "", kDeadline);
  expect_prompt_failure(e, 255, "exec");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

// /etc/passwd is read for exec --user NAME and for HOME: a FIFO there is no file of users.
TEST_F(BlockingFiles, FifoPasswdNeitherHoldsRunNorExecByName) {
  Runtime rt;
  Bundle b;
  make_fifo(b.rootfs() + "/etc/passwd");
  b.spec().process->args = {"sh", "-c", "echo home=$HOME"};
  auto r = run_container(rt, b, "fifo-passwd-run", kDeadline);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "home=/\n");  // runc's default for a user it cannot look up

  Container c(rt, "fifo-passwd-exec", {}, [](Bundle& cb) { make_fifo(cb.rootfs() + "/etc/passwd"); });
  ASSERT_EQ(c.started().code, 0) << c.started().err;
  auto e = rt({"exec", "--user", "daemon", "fifo-passwd-exec", "true"}, "", kDeadline);
  EXPECT_NE(e.code, 137) << "exec --user blocked on the FIFO until killed";
  EXPECT_EQ(e.code, 255) << e.err;
  EXPECT_NE(e.err.find("daemon"), std::string::npos) << e.err;
}

TEST_F(BlockingFiles, FifoConfigIsRefusedAndLeavesNothing) {
  Runtime rt;
  Bundle b;
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/fifo-config";
  b.write();
  make_fifo(b.path() + "/config.json");
  for (const char* cmd : {"create", "run"}) {
    auto r = rt({cmd, "--bundle", b.path(), "fifo-config"}, "", kDeadline);
    EXPECT_NE(r.code, 137) << cmd << " blocked on the FIFO until killed";
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("config.json: not a regular file"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_EQ(run_cmd({"ls", "-A", rt.root()}).out, "") << "something was left under the state root";
}

bool built_with_criu() {
  return run_cmd({berth_binary(), "features"}).out.find("\"org.berth.checkpoint.enabled\": \"true\"") != std::string::npos;
}

bool cgroup_left(const std::string& id) {
  struct stat st;
  return ::stat(("/sys/fs/cgroup/pids/berth-test/" + id).c_str(), &st) == 0 ||
         ::stat(("/sys/fs/cgroup/unified/berth-test/" + id).c_str(), &st) == 0;
}

// descriptors.json is read before CRIU runs: no working CRIU is needed to see it refused.
TEST_F(BlockingFiles, FifoDescriptorsJsonFailsRestoreAndLeavesNothing) {
  if (!built_with_criu()) GTEST_SKIP() << "berth was built without CRIU support";
  Runtime rt;
  Bundle b;
  b.spec().process->args = {"sleep", "100"};
  b.spec().linux->cgroups_path = "/berth-test/fifo-descriptors";
  b.write();
  TempDir img;
  make_fifo(img.path() + "/descriptors.json");
  auto r = rt({"restore", "-d", "--image-path", img.path(), "--bundle", b.path(), "fifo-descriptors"}, "", kDeadline);
  EXPECT_NE(r.code, 137) << "restore blocked on the FIFO until killed";
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("descriptors.json: not a regular file"), std::string::npos) << r.err;
  EXPECT_EQ(run_cmd({"ls", "-A", rt.root()}).out, "") << "restore left its state directory";
  EXPECT_EQ(mount_lines(rt.root()), std::vector<std::string>{}) << "restore left criu-root mounted";
  EXPECT_FALSE(cgroup_left("fifo-descriptors"));
}

// A restore killed while CRIU works (here a stand-in that never answers) leaves its state
// directory with the rootfs bound at criu-root: delete -f must remove both, and never the
// rootfs's files through that bind.
TEST_F(BlockingFiles, KilledRestoreIsUndoneByDeleteForce) {
  if (!built_with_criu()) GTEST_SKIP() << "berth was built without CRIU support";
  Runtime rt;
  Bundle b;
  b.spec().process->args = {"sleep", "100"};
  b.spec().linux->cgroups_path = "/berth-test/killed-restore";
  b.write();
  TempDir tools, img;
  std::string criu = tools.path() + "/criu", criu_pid = tools.path() + "/pid";
  write_text(criu, "#!/bin/sh\necho $$ > " + criu_pid + "\nexec sleep 60\n");
  ::chmod(criu.c_str(), 0755);
  write_text(img.path() + "/descriptors.json", "[\"/dev/null\",\"/dev/null\",\"/dev/null\"]\n");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(rt.binary().c_str(), rt.binary().c_str(), "--root", rt.root().c_str(), "--criu", criu.c_str(), "restore",
            "-d", "--image-path", img.path().c_str(), "--bundle", b.path().c_str(), "killed-restore", nullptr);
    ::_exit(127);
  }
  bool bound = eventually([&] { return !mount_lines(rt.root()).empty() && !read_text(criu_pid).empty(); }, 10000);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  if (int p = std::atoi(read_text(criu_pid).c_str()); p > 0) ::kill(p, SIGKILL);
  ASSERT_TRUE(bound) << "the restore never reached CRIU with its root bound";
  auto d = rt({"delete", "--force", "killed-restore"}, "", kDeadline);
  EXPECT_EQ(d.code, 0) << d.err;
  EXPECT_EQ(mount_lines(rt.root()), std::vector<std::string>{}) << "criu-root is still mounted";
  EXPECT_EQ(run_cmd({"ls", "-A", rt.root()}).out, "") << "the state directory is still there";
  EXPECT_TRUE(host_exists(b.rootfs() + "/bin/busybox")) << "delete removed the rootfs's files through criu-root";
  EXPECT_FALSE(cgroup_left("killed-restore"));
}

struct Interrupted {
  bool started = false, ended = false;
  int status = 0;
  std::string err;
};

// `run` in the foreground, sent `sig` once `marker` has content (a hook that never ends
// wrote it); waited for with a deadline.
Interrupted interrupt_run(const Runtime& rt, const Bundle& b, const std::string& id, const std::string& marker,
                          int sig) {
  Interrupted out;
  int err[2];
  if (::pipe2(err, O_CLOEXEC | O_NONBLOCK) < 0) return out;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(err[1], 2);
    ::execl(rt.binary().c_str(), rt.binary().c_str(), "--root", rt.root().c_str(), "run", "--bundle",
            b.path().c_str(), id.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(err[1]);
  out.started = eventually([&] { return !read_text(marker).empty(); }, 10000);
  ::kill(pid, sig);
  out.ended = eventually([&] { return ::waitpid(pid, &out.status, WNOHANG) == pid; }, 10000);
  if (!out.ended) ::kill(pid, SIGKILL), ::waitpid(pid, &out.status, 0);
  out.err = drain(err[0], 100);
  ::close(err[0]);
  return out;
}

void expect_undone(const Interrupted& r, const Runtime& rt, const std::string& id, const std::string& sig) {
  ASSERT_TRUE(r.started) << "the hook never started: " << r.err;
  EXPECT_TRUE(r.ended) << "run ignored " << sig << " until killed";
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1) << "status " << r.status << ": " << r.err;
  EXPECT_NE(r.err.find("interrupted by " + sig), std::string::npos) << r.err;
  EXPECT_EQ(run_cmd({"ls", "-A", rt.root()}).out, "") << "the interrupted create left its state";
  // The cgroup goes only once nothing runs in it: the init and what it started are gone.
  EXPECT_FALSE(host_exists("/sys/fs/cgroup/pids" + std::string(kTestCgroupParent) + "/" + id));
}

// Before the payload runs, a foreground run answers SIGTERM: it stops waiting (here on a
// createRuntime hook of its own that never ends), kills what it started and undoes the
// create. It used to hold the signal blocked (for forwarding later) and wait until SIGKILL.
TEST_F(BlockingFiles, SigtermBeforeThePayloadRunsEndsRunAndUndoesTheCreate) {
  Runtime rt;
  Bundle b;
  TempDir tools;
  std::string hook_pid = tools.path() + "/hook-pid";
  spec::Hooks h;
  h.create_runtime = {spec::Hook{"/bin/sh", {"sh", "-c", "echo $$ > " + hook_pid + "; exec sleep 1000"}, {}, {}}};
  b.spec().hooks = h;
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/sigterm-run";
  b.write();
  auto r = interrupt_run(rt, b, "sigterm-run", hook_pid, SIGTERM);
  int hook = std::atoi(read_text(hook_pid).c_str());
  bool hook_alive = hook > 0 && ::kill(hook, 0) == 0;
  if (hook_alive) ::kill(hook, SIGKILL);
  expect_undone(r, rt, "sigterm-run", "SIGTERM");
  EXPECT_FALSE(hook_alive) << "the hook outlived the interrupted run";
}

// The same while berth waits on its init (whose createContainer hook never ends): the wait
// on the sync socket ends too, here on SIGINT.
TEST_F(BlockingFiles, SigintWhileTheInitSetsUpEndsRunAndUndoesTheCreate) {
  Runtime rt;
  Bundle b;
  TempDir tools;
  std::string marker = tools.path() + "/hook-ran";  // before pivot_root: the host's path
  spec::Hooks h;
  h.create_container = {spec::Hook{"/bin/sh", {"sh", "-c", "echo ran > " + marker + "; exec sleep 1000"}, {}, {}}};
  b.spec().hooks = h;
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/sigint-run";
  b.write();
  expect_undone(interrupt_run(rt, b, "sigint-run", marker, SIGINT), rt, "sigint-run", "SIGINT");
}

}  // namespace
}  // namespace berth::test
