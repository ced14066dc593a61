// The rootless suite's frame (see rootless_support.h): the test user's creation and
// removal, commands as that user, and the Rootless fixture's census.
#include "rootless/rootless_support.h"

#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace berth::test::rootless {
namespace {

void remove_user() {
  run_cmd({"userdel", "-r", "-f", kUser});
  // userdel leaves /etc/subuid lines of some shadow versions behind: drop ours by name.
  for (const char* f : {"/etc/subuid", "/etc/subgid"})
    run_cmd({"sed", "-i", "/^" + std::string(kUser) + ":/d", f});
  if (!user().xdg.empty()) run_cmd({"rm", "-rf", user().xdg});
}

class UserEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    User& u = user();
    if (::geteuid() != 0) {
      u.why_not = "needs root to create the test user";
      return;
    }
    if (::access("/usr/bin/newuidmap", X_OK) != 0) {
      u.why_not = "newuidmap is not installed (Debian package uidmap)";
      return;
    }
    remove_user();  // a crashed earlier run
    auto made = run_cmd({"useradd", "-m", "-U", "-s", "/bin/sh", kUser});
    if (made.code != 0) {
      u.why_not = "useradd failed: " + made.err;
      return;
    }
    for (const char* f : {"/etc/subuid", "/etc/subgid"}) {
      run_cmd({"sed", "-i", "/^" + std::string(kUser) + ":/d", f});
      run_cmd({"sh", "-c", "echo '" + std::string(kUser) + ":" + std::to_string(kSubStart) + ":" +
                               std::to_string(kSubCount) + "' >> " + f});
    }
    struct passwd* pw = ::getpwnam(kUser);
    if (!pw) {
      u.why_not = "the new user is not in passwd";
      return;
    }
    u.uid = pw->pw_uid;
    u.gid = pw->pw_gid;
    u.home = pw->pw_dir;
    u.xdg = "/run/user/" + std::to_string(u.uid);
    ::mkdir("/run/user", 0755);
    ::mkdir(u.xdg.c_str(), 0700);
    (void)!::chown(u.xdg.c_str(), u.uid, u.gid);
    u.ready = true;
  }
  void TearDown() override {
    if (user().ready) remove_user();
  }
};

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new UserEnvironment);

}  // namespace

User& user() {
  static User u;
  return u;
}

CmdResult as_user(const std::vector<std::string>& argv, int timeout_s, const std::vector<std::string>& env) {
  const User& u = user();
  std::vector<std::string> full = {"setpriv", "--reuid", std::to_string(u.uid), "--regid", std::to_string(u.gid),
                                   "--clear-groups", "--", "env", "-C", "/", "-i",
                                   "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + u.home,
                                   "USER=" + std::string(kUser), "XDG_RUNTIME_DIR=" + u.xdg};
  full.insert(full.end(), env.begin(), env.end());
  full.insert(full.end(), argv.begin(), argv.end());
  return run_cmd(full, "", timeout_s);
}

std::vector<Twin> runtimes() {
  std::vector<Twin> out = {{"berth", berth_binary()}};
  if (have_runc()) out.push_back({"runc", ::access("/usr/sbin/runc", X_OK) == 0 ? "/usr/sbin/runc" : "/usr/bin/runc"});
  return out;
}

void Rootless::SetUp() {
  if (!user().ready) GTEST_SKIP() << "rootless tests: " << user().why_not;
}

void Rootless::TearDown() {
  if (!user().ready) return;
  for (const auto& rt : runtimes()) {
    for (const auto& id : ids_) as_user({rt.binary, "delete", "--force", id});
    auto left = as_user({rt.binary, "list", "-q"});
    EXPECT_EQ(left.out, "") << rt.name << " left containers behind";
  }
  census();
}

spec::Spec& Rootless::rootless_spec(Bundle& b, const std::string& script) {
  b.spec() = spec::default_spec(true);
  auto& s = b.spec();
  s.process->terminal = false;
  s.process->args = {"sh", "-c", script};
  s.linux->uid_mappings = {{0, user().uid, 1}};
  s.linux->gid_mappings = {{0, user().gid, 1}};
  return s;
}

CmdResult Rootless::run(const Twin& rt, const Bundle& b, const std::string& id, const std::vector<std::string>& flags) {
  ids_.push_back(id);
  b.write();
  std::vector<std::string> argv = {rt.binary, "run"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-b", b.path(), id});
  return as_user(argv);
}

void Rootless::census() {
  std::vector<std::string> alive;
  for (int i = 0; i < 50; ++i) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    alive.clear();
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      struct stat st;
      std::string n = e.path().filename();
      if (n.find_first_not_of("0123456789") == std::string::npos && ::stat(e.path().c_str(), &st) == 0 &&
          st.st_uid == user().uid)
        alive.push_back(n);
    }
    if (alive.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(alive.empty()) << "processes of the test user remain: " << alive.size();
  for (const auto& id : ids_) {
    auto found = run_cmd({"find", "/sys/fs/cgroup", "-maxdepth", "4", "-type", "d", "-name", id});
    EXPECT_EQ(found.out, "") << "cgroup left: " << found.out;
    for (const char* root : {"/berth/", "/runc/"})
      EXPECT_NE(::access((user().xdg + root + id).c_str(), F_OK), 0) << "state left: " << root << id;
  }
  EXPECT_TRUE(mount_lines().empty());
}

}  // namespace berth::test::rootless
