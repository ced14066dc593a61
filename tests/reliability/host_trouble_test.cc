// Host trouble around the state root: a cgroup controller that is not mounted (simulated in
// a private mount namespace: the host's hierarchies are never touched) and a bundle removed
// between create and start or delete. A failing command exits 1 with one line naming the
// cause; a second running container comes through untouched; the census after equals the
// one before.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reliability/trouble.h"

namespace berth::test {
namespace {

namespace fs = std::filesystem;

// The filesystem type mounted at `path` in this mount namespace ("" if none).
std::string fstype_at(const std::string& path) {
  std::ifstream f("/proc/self/mountinfo");
  std::string line, found;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string id, parent, dev, root, mountpoint;
    in >> id >> parent >> dev >> root >> mountpoint;
    std::istringstream tail(line.substr(line.find(" - ") + 3));
    if (mountpoint == path) tail >> found;
  }
  return found;
}

// berth in a private mount namespace where the pids hierarchy is unmounted.
CmdResult berth_without_pids(const RelEnv& env, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"unshare", "-m", "--propagation", "private", "sh", "-c",
                                   "umount -l /sys/fs/cgroup/pids && exec \"$0\" \"$@\"", berth_binary(), "--root",
                                   env.rt().root()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_cmd(argv, "", 30);
}

TEST(HostTrouble, MissingCgroupController) {
  RelEnv env;
  // The hybrid layout of the CI host: the pids controller is a v1 hierarchy of its own.
  ASSERT_EQ(fstype_at("/sys/fs/cgroup/pids"), "cgroup") << "this test needs the pids controller mounted (cgroup v1)";
  Census before = env.census();
  Bystander by(env, env.rt().root());
  ASSERT_TRUE(by.started());

  std::string limited = env.bundle("limited", {"true"}, [](spec::Spec& s) {
    if (!s.linux->resources) s.linux->resources.emplace();
    s.linux->resources->pids = spec::Pids{64};
  });
  expect_clear_failure(berth_without_pids(env, {"run", "--bundle", limited, "limited"}), "no pids cgroup controller",
                       "run with a pids limit");
  EXPECT_NE(berth_at(env.rt().root(), {"state", "limited"}).err.find("container does not exist"), std::string::npos);
  // A container that asks nothing of the missing controller runs without it.
  std::string plain = env.bundle("plain", {"sh", "-c", "echo ran"});
  auto r = berth_without_pids(env, {"run", "--bundle", plain, "plain"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ran"), std::string::npos);
  by.expect_untouched("missing controller");

  by.remove();
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

// runc keeps a copy of what it needs from the bundle: start, exec and delete work on.
TEST(HostTrouble, BundleRemovedAfterCreate) {
  RelEnv env;
  Census before = env.census();
  Bystander by(env, env.rt().root());
  ASSERT_TRUE(by.started());
  const Runtime& rt = env.rt();
  std::string started = env.bundle("started", {"sleep", "300"});
  std::string deleted = env.bundle("deleted", {"sleep", "300"});
  ASSERT_EQ(rt({"create", "--bundle", started, "started"}).code, 0);
  ASSERT_EQ(rt({"create", "--bundle", deleted, "deleted"}).code, 0);
  fs::remove_all(started);
  fs::remove_all(deleted);

  auto s = rt({"start", "started"});
  EXPECT_EQ(s.code, 0) << s.err;
  auto e = rt({"exec", "started", "sh", "-c", "echo inside"});
  EXPECT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("inside"), std::string::npos);
  auto d = rt({"delete", "deleted"});
  EXPECT_EQ(d.code, 0) << d.err;
  auto k = rt({"delete", "--force", "started"});
  EXPECT_EQ(k.code, 0) << k.err;
  by.expect_untouched("bundles removed");

  by.remove();
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

}  // namespace
}  // namespace berth::test
