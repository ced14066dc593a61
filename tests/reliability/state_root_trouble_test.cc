// Host trouble with the state root (--root): read-only, full, and a lock left by a berth
// killed while holding it. Each failing command exits 1 with one line naming the cause; a
// second running container in the same root comes through untouched; the census after
// equals the one before.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "reliability/child.h"
#include "reliability/trouble.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

bool exists(const std::string& p) { return ::access(p.c_str(), F_OK) == 0; }

TEST(StateRootTrouble, ReadOnly) {
  RelEnv env;
  TmpfsDir root("4m");
  ASSERT_TRUE(root.mounted());
  Census before = env.census_at(root.path());
  Bystander by(env, root.path());
  ASSERT_TRUE(by.started());
  std::string victim = env.bundle("victim", {"sleep", "300"});
  ASSERT_EQ(berth_at(root.path(), {"run", "-d", "--bundle", victim, "victim"}).code, 0);
  ASSERT_TRUE(root.set_readonly(true));

  std::string fresh = env.bundle("fresh", {"true"});
  expect_clear_failure(berth_at(root.path(), {"create", "--bundle", fresh, "fresh"}), "read-only file system", "create");
  EXPECT_FALSE(exists(root.path() + "/fresh"));
  // Reading works; removing a container's state cannot, and says why.
  EXPECT_EQ(berth_at(root.path(), {"list"}).code, 0);
  expect_clear_failure(berth_at(root.path(), {"delete", "--force", "victim"}), "read-only file system", "delete");
  by.expect_untouched("read-only root");

  // Writable again, a second delete --force finishes the job.
  ASSERT_TRUE(root.set_readonly(false));
  auto again = berth_at(root.path(), {"delete", "--force", "victim"});
  EXPECT_EQ(again.code, 0) << again.err;
  by.expect_untouched("after the victim's delete");
  by.remove();
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census_at(root.path())), "");
}

// Fills the filesystem holding `dir` with one file; true once a write found no space.
bool fill(const std::string& dir) {
  int fd = ::open((dir + "/filler").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  std::string chunk(64 << 10, 'f');
  bool full = false;
  while (fd >= 0 && !full) full = ::write(fd, chunk.data(), chunk.size()) < 0 && errno == ENOSPC;
  if (fd >= 0) ::close(fd);
  return full;
}

TEST(StateRootTrouble, Full) {
  RelEnv env;
  TmpfsDir root("512k");
  ASSERT_TRUE(root.mounted());
  Census before = env.census_at(root.path());
  Bystander by(env, root.path());
  ASSERT_TRUE(by.started());
  ASSERT_TRUE(fill(root.path()));

  std::string fresh = env.bundle("fresh", {"true"});
  expect_clear_failure(berth_at(root.path(), {"create", "--bundle", fresh, "fresh"}), "no space left on device", "create");
  EXPECT_FALSE(exists(root.path() + "/fresh")) << "the failed create left its state";
  // The running container is still served: exec writes nothing into the root.
  auto ex = berth_at(root.path(), {"exec", Bystander::kId, "sh", "-c", "echo still-here"});
  EXPECT_EQ(ex.code, 0) << ex.err;
  EXPECT_NE(ex.out.find("still-here"), std::string::npos);
  by.expect_untouched("full root");

  fs::remove(root.path() + "/filler");
  by.remove();
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census_at(root.path())), "");
}

// Runs `create` until its hook has written `marker`, then SIGKILLs berth (which holds the
// container's lock all through create); returns the hook's pid (0: it never ran).
pid_t kill_create_in_hook(const RelEnv& env, const std::string& bundle, const std::string& id,
                          const std::string& marker) {
  Child create({berth_binary(), "--root", env.rt().root(), "create", "--bundle", bundle, id});
  for (int i = 0; i < 1000 && read_text(marker).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  create.kill_now();
  return static_cast<pid_t>(std::atoi(read_text(marker).c_str()));
}

// The lock is an flock on the container's directory: it goes with the berth that held it,
// and nothing berth started (here a createRuntime hook still running) may inherit it.
TEST(StateRootTrouble, LockOfAKilledBerth) {
  RelEnv env;
  Census before = env.census();
  Bystander by(env, env.rt().root());
  ASSERT_TRUE(by.started());
  std::string marker = env.bundles() + "/hook.pid";
  std::string bundle = env.bundle("locked", {"true"}, [&](spec::Spec& s) {
    s.hooks.emplace();
    s.hooks->create_runtime.push_back({"/bin/sh", {"sh", "-c", "echo $$ > " + marker + "; exec sleep 300"}, {}, {}});
  });
  pid_t hook = kill_create_in_hook(env, bundle, "locked", marker);
  ASSERT_GT(hook, 0) << "the hook never ran";

  // Each command on the id gets the lock at once (30 s would mean it hangs).
  auto st = berth_at(env.rt().root(), {"state", "locked"}, 10);
  EXPECT_EQ(st.code, 0) << st.err;
  auto del = berth_at(env.rt().root(), {"delete", "--force", "locked"}, 10);
  EXPECT_EQ(del.code, 0) << del.err;
  std::string plain = env.bundle("locked2", {"true"});
  auto again = berth_at(env.rt().root(), {"run", "--bundle", plain, "locked"}, 10);
  EXPECT_EQ(again.code, 0) << "the id could not be used again: " << again.err;
  EXPECT_EQ(::kill(hook, 0), 0) << "the hook was meant to outlive the commands";
  by.expect_untouched("killed lock holder");

  ::kill(hook, SIGKILL);
  by.remove();
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

}  // namespace
}  // namespace berth::test
