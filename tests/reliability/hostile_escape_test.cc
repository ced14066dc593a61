// A hostile container's escapes: through an fd that a leaky caller (a shim) held open
// without close-on-exec, and through mount propagation to a host directory that is a shared
// mount. Each attempt fails; in both a control shows that the attempt would be seen: the fd
// asked for with --preserve-fds is there, and with rshared asked for explicitly the mount
// does reach the host.
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <thread>

#include "reliability/child.h"
#include "reliability/hostile.h"

namespace berth::test {
namespace {

// For fd 3..9 of the shell: where it leads (readlink runs with the shell's fds as they are:
// no pipe of a command substitution among them), and an attempt to create a file through
// it; then what the asked-for fd 3 holds.
std::string fd_probe(const std::string& tag) {
  return "for n in 3 4 5 6 7 8 9; do echo -n \"$n \"; readlink /proc/$$/fd/$n 2>/dev/null || echo none; "
         "touch /proc/$$/fd/$n/escaped-" + tag + "-$n 2>/dev/null; done; cat <&3";
}

std::string expected(const std::string& passed) {
  return "3 " + passed + "\n4 none\n5 none\n6 none\n7 none\n8 none\n9 none\nasked-for\n";
}

// Runs berth with `fds` at 3, 4, ...: fd 3 is asked for (--preserve-fds 1), the others are
// what a leaky caller would hand down. Returns what it printed, or why it failed.
std::string berth_with_fds(const RelEnv& env, std::vector<std::string> args, const std::vector<int>& fds) {
  std::vector<std::string> argv = {berth_binary(), "--root", env.rt().root()};
  argv.insert(argv.end(), args.begin(), args.end());
  Child c(argv, fds);
  if (!c.wait_for(30000)) return "hung";
  return c.code() == 0 ? c.output() : "failed (" + std::to_string(c.code()) + "): " + c.output();
}

TEST(HostileContainer, EscapesThroughNoLeakedFd) {
  RelEnv env;
  Census before = env.census();
  TempDir host("berth-relfd");
  std::string passed = host.path() + "/passed";
  std::ofstream(passed) << "asked-for\n";
  // Two descriptions of the passed file, so that each process reads it from the start; a
  // directory fd and an O_PATH one on the host directory, leaked.
  int for_init = ::open(passed.c_str(), O_RDONLY | O_CLOEXEC);
  int for_exec = ::open(passed.c_str(), O_RDONLY | O_CLOEXEC);
  int dir = ::open(host.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int path = ::open(host.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);

  std::string b = env.bundle("fds", {"sh", "-c", "{ " + fd_probe("init") + "; } > /tmp/fds.init; sleep 300"});
  EXPECT_EQ(berth_with_fds(env, {"create", "--preserve-fds", "1", "--bundle", b, "fds"}, {for_init, dir, path, dir}), "");
  EXPECT_EQ(env.rt()({"start", "fds"}).code, 0);
  std::vector<std::string> exec = {"exec", "--preserve-fds", "1", "fds", "sh", "-c", fd_probe("exec")};
  EXPECT_EQ(berth_with_fds(env, exec, {for_exec, dir, path, dir}), expected(passed));
  EXPECT_TRUE(wait_for_line(env.rootfs() + "/tmp/fds.init", "asked-for", 10000));
  EXPECT_EQ(read_text(env.rootfs() + "/tmp/fds.init"), expected(passed));
  EXPECT_EQ(run_cmd({"ls", "-A", host.path()}).out, "passed\n") << "a file was created through a leaked fd";

  for (int fd : {for_init, for_exec, dir, path}) ::close(fd);
  EXPECT_EQ(env.rt()({"delete", "--force", "fds"}).code, 0);
  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
}

// A host directory made a shared mount (as systemd makes "/"), bound into the container
// with the default propagation, or (`ask_shared`) with rshared and rootfsPropagation
// "shared"; the container, given CAP_SYS_ADMIN, mounts a tmpfs under it and one under its
// own /mnt. Returns the host's mount lines under both while the container runs.
std::vector<std::string> mounts_seen_on_host(RelEnv& env, const std::string& shared, const std::string& id,
                                             bool ask_shared) {
  std::string marker = "/tmp/" + id + ".mounted";
  std::string script = "mkdir -p /shared/sub /mnt/x && mount -t tmpfs tmpfs /shared/sub && "
                       "mount -t tmpfs tmpfs /mnt/x && echo mounted > " + marker + "; sleep 300";
  std::string b = env.bundle(id, {"sh", "-c", script}, [&](spec::Spec& s) {
    s.mounts.push_back({"/shared", "bind", shared, {"rbind"}, {}, {}});
    if (ask_shared) {
      s.mounts.back().options.push_back("rshared");
      s.linux->rootfs_propagation = "shared";
    }
    for (auto* set : {&s.process->capabilities->bounding, &s.process->capabilities->effective,
                      &s.process->capabilities->permitted})
      set->push_back("CAP_SYS_ADMIN");
  });
  if (env.rt()({"run", "-d", "--bundle", b, id}).code != 0) return {"the container did not run"};
  if (!wait_for_line(env.rootfs() + marker, "mounted", 10000)) return {"the container could not mount"};
  auto seen = mount_lines(shared + "/");
  for (const auto& l : mount_lines(env.rootfs() + "/mnt/")) seen.push_back(l);
  env.rt()({"delete", "--force", id});
  return seen;
}

TEST(HostileContainer, MountsDoNotPropagateToTheHost) {
  RelEnv env;
  TempDir shared("berth-relprop");
  ASSERT_EQ(::mount(shared.path().c_str(), shared.path().c_str(), nullptr, MS_BIND, nullptr), 0);
  ASSERT_EQ(::mount(nullptr, shared.path().c_str(), nullptr, MS_SHARED, nullptr), 0);
  Census before = env.census();

  // Default rootfsPropagation and bind options: the container's mounts stay its own.
  auto leaked = mounts_seen_on_host(env, shared.path(), "prop", false);
  EXPECT_TRUE(leaked.empty()) << "a container mount reached the host: " << leaked.front();
  // Control: asked for explicitly, the same mount does propagate (then it is the host's).
  auto asked = mounts_seen_on_host(env, shared.path(), "prop-asked", true);
  EXPECT_EQ(asked.size(), 1u) << "the control mount did not propagate: the test would see nothing";
  ::umount2((shared.path() + "/sub").c_str(), MNT_DETACH);

  reap_children(5000);
  EXPECT_EQ(before.leftovers(env.census()), "");
  EXPECT_EQ(::umount2(shared.path().c_str(), 0), 0);
}

}  // namespace
}  // namespace berth::test
