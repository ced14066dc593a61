// A state root someone else can write (issue 31 §4). Whoever can rename entries in --root
// swaps a container's directory for a forged state.json and config.json; root's
// `delete -f` then SIGKILLed the host process the forgery named and ran its poststop hook
// as uid 0 (runc 1.1.5 trusts any --root the same way). berth refuses a state root, a
// parent of it or a container directory that is not the caller's own or that group or
// others can write (src/util/trusted_path.cc, src/container/state_store.cc), before it
// reads anything there.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "berth/spec.h"
#include "container/record.h"
#include "integration/rootfs_test_support.h"
#include "linux/proc.h"
#include "support/exec_helpers.h"

namespace berth::test {
namespace {

using StateRoot = RootfsTest;

// A host process the forgery names: `sleep`, our child, killed and reaped at the end.
struct Victim {
  pid_t pid = -1;
  uint64_t start = 0;
  Victim() {
    pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sleep", "sleep", "1000", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::usleep(50000);
    if (auto st = linux::read_proc_stat(pid)) start = st->start_time;
  }
  ~Victim() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  bool alive() const {
    int status;
    return ::waitpid(pid, &status, WNOHANG) == 0 && ::kill(pid, 0) == 0;
  }
};

// A container directory `id` under `root` as the forger writes it: the victim as the init,
// a poststop hook that leaves `marker`, everything owned by `owner`.
void forge(const std::string& root, const std::string& id, const Victim& v, const std::string& marker, uid_t owner) {
  std::string dir = root + "/" + id;
  ASSERT_EQ(::mkdir(dir.c_str(), 0711), 0);
  Bundle b;
  b.spec().hooks.emplace();
  spec::Hook hook;
  hook.path = "/bin/sh";
  hook.args = {"sh", "-c", "touch " + marker};
  b.spec().hooks->poststop.push_back(hook);
  ContainerRecord r;
  r.oci_version = "1.0.2";
  r.id = id;
  r.pid = v.pid;
  r.pid_start_time = v.start;
  r.bundle = b.path();
  r.rootfs = b.rootfs();
  r.created = "2026-01-01T00:00:00.000000000Z";
  write_text(dir + "/state.json", record_to_json(r));
  write_text(dir + "/config.json", spec::to_json(b.spec()));
  for (const std::string& p : {dir, dir + "/state.json", dir + "/config.json"}) ASSERT_EQ(::chown(p.c_str(), owner, owner), 0);
}

// Every command that would act on the forgery is refused with `expect`, in one line, and
// neither the victim nor the hook is touched.
void expect_untouched(const std::string& root, const std::string& id, const std::string& expect, const Victim& v,
                      const std::string& marker) {
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"delete", "--force", id}, {"kill", id, "KILL"}, {"state", id}, {"delete", id}}) {
    std::vector<std::string> argv{berth_binary(), "--root", root};
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    auto r = run_cmd(argv);
    EXPECT_EQ(r.code, 1) << cmd[0] << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << cmd[0] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << cmd[0] << ": " << r.err;
    EXPECT_TRUE(v.alive()) << cmd[0] << " killed the host process the forgery named";
    EXPECT_FALSE(host_exists(marker)) << cmd[0] << " ran the forged poststop hook";
  }
}

TEST_F(StateRoot, ARootOfAnotherUserWithAForgedContainerIsRefused) {
  TempDir top{"berth-rt-stateroot"};
  std::string root = top.path() + "/root";
  std::string marker = top.path() + "/hook-ran";
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(::chown(root.c_str(), 65534, 65534), 0);
  Victim v;
  ASSERT_TRUE(v.alive());
  forge(root, "forged", v, marker, 65534);
  expect_untouched(root, "forged", "state root " + root + ": owned by uid 65534, not by the caller (uid 0)", v, marker);
  auto list = run_cmd({berth_binary(), "--root", root, "list"});
  EXPECT_EQ(list.code, 1) << list.out;
  EXPECT_NE(list.err.find("state root " + root + ": owned by uid 65534"), std::string::npos) << list.err;
}

// The same forgery in a root of root's own: the container directory is someone else's.
TEST_F(StateRoot, AContainerDirectoryOfAnotherUserIsRefused) {
  TempDir root{"berth-rt-stateroot"};
  std::string marker = root.path() + "/hook-ran";
  Victim v;
  forge(root.path(), "forged", v, marker, 65534);
  expect_untouched(root.path(), "forged",
                   "container directory " + root.path() + "/forged: owned by uid 65534, not by the caller (uid 0)", v,
                   marker);
  auto list = run_cmd({berth_binary(), "--root", root.path(), "list", "-q"});
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(list.out.find("forged"), std::string::npos) << "list shows a directory it does not trust";
}

TEST_F(StateRoot, ARootOrContainerDirectoryOthersCanWriteIsRefused) {
  TempDir top{"berth-rt-stateroot"};
  std::string root = top.path() + "/root";
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  for (mode_t mode : {0770, 0777, 01777, 0720}) {
    ASSERT_EQ(::chmod(root.c_str(), mode), 0);
    char m[8];
    std::snprintf(m, sizeof m, "%04o", static_cast<unsigned>(mode));
    std::string who = (mode & 02) ? "others" : "group";
    for (std::string cmd : {"list", "state"}) {
      std::vector<std::string> argv{berth_binary(), "--root", root, cmd};
      if (cmd == "state") argv.push_back("x");
      auto r = run_cmd(argv);
      EXPECT_EQ(r.code, 1) << m << " " << cmd;
      EXPECT_NE(r.err.find("state root " + root + ": writable by " + who + " (mode " + m + ")"), std::string::npos)
          << m << " " << cmd << ": " << r.err;
    }
  }
  ASSERT_EQ(::chmod(root.c_str(), 0700), 0);
  // A real container, then its directory opened to others.
  Bundle b;
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/open-dir";
  b.write();
  std::vector<std::string> base{berth_binary(), "--root", root};
  auto cmd = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), args.begin(), args.end());
    return run_cmd(argv);
  };
  ASSERT_EQ(cmd({"create", "--bundle", b.path(), "open-dir"}).code, 0);
  std::string dir = root + "/open-dir";
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  auto r = cmd({"delete", "--force", "open-dir"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("container directory " + dir + ": writable by others (mode 0777)"), std::string::npos) << r.err;
  EXPECT_TRUE(host_exists(dir + "/state.json")) << "the refused delete removed the directory";
  ASSERT_EQ(::chmod(dir.c_str(), 0711), 0);
  EXPECT_EQ(cmd({"delete", "--force", "open-dir"}).code, 0);
}

// Every directory above the root: one another user owns, or others can write without the
// sticky bit, can rename the root away. Root's own sticky /tmp is fine (the test's roots).
TEST_F(StateRoot, AParentOthersControlIsRefused) {
  TempDir top{"berth-rt-stateroot"};
  std::string parent = top.path() + "/parent";
  std::string root = parent + "/root";
  ASSERT_EQ(::mkdir(parent.c_str(), 0755), 0);
  ASSERT_EQ(::chown(parent.c_str(), 65534, 65534), 0);
  auto r = run_cmd({berth_binary(), "--root", root, "list"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("state root " + root + ": " + parent + ": owned by uid 65534, not by root"), std::string::npos)
      << r.err;
  EXPECT_FALSE(host_exists(root)) << "a root was made under another user's directory";
  ASSERT_EQ(::chown(parent.c_str(), 0, 0), 0);
  ASSERT_EQ(::chmod(parent.c_str(), 0777), 0);
  r = run_cmd({berth_binary(), "--root", root, "list"});
  EXPECT_NE(r.err.find(parent + ": writable by others (mode 0777) without the sticky bit"), std::string::npos) << r.err;
  ASSERT_EQ(::chmod(parent.c_str(), 01777), 0);
  r = run_cmd({berth_binary(), "--root", root, "list"});
  EXPECT_EQ(r.code, 0) << r.err;
}

}  // namespace
}  // namespace berth::test
