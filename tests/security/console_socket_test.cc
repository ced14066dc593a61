// --console-socket paths through symlinks (issue 21 §4). The caller makes the socket at
// the name it passes; whoever can write a directory on that path (a volume shared with a
// container, a directory of another user) may plant a link there. Followed, the runtime —
// root — connects where the link's owner chose: a socket that party cannot reach itself
// (a daemon's API socket) gets the container's pty master, or the pty goes to that party's
// listener. berth never follows a link at the last component and follows a parent link only
// when root or the caller owns it (src/linux/console.cc); the result must be a socket, and
// the connect goes through the opened inode. runc 1.1.5 dials the path as given: its
// results are printed, never asserted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "integration/rootfs_test_support.h"
#include "support/exec_helpers.h"

namespace berth::test {
namespace {

using ConsoleSocketPaths = RootfsTest;

// `create --console-socket path` of a terminal container; the result.
CmdResult create_with_console(const Runtime& rt, const std::string& path, const std::string& id) {
  Bundle b;
  b.spec().process->terminal = true;
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/" + id;
  b.write();
  auto r = rt({"create", "--bundle", b.path(), "--console-socket", path, id});
  rt({"delete", "--force", id});
  return r;
}

// A socket standing in for a daemon's (the victim), a host file, and the caller's
// directory where the hostile party plants its links.
struct Scene {
  FdSocket victim;
  TempDir dir{"berth-rt-console"};
  std::string file = dir.path() + "/host-file";
  Scene() { write_text(file, "keep\n"); }
  // Whether the victim got a connection (accepted and closed, so the next case starts clean).
  bool victim_reached() {
    int fd = victim.receive(nullptr, 0);
    if (fd >= 0) ::close(fd);
    return fd >= 0;
  }
};

TEST_F(ConsoleSocketPaths, LinkAtTheNameIsNeverFollowed) {
  Scene s;
  std::string named = s.dir.path() + "/tty.sock";
  for (const std::string& target : {s.victim.path(), s.file}) {
    ::unlink(named.c_str());
    ASSERT_EQ(::symlink(target.c_str(), named.c_str()), 0);
    for_each_runtime([&](const Runtime& rt, const std::string& name) {
      auto r = create_with_console(rt, named, "console-link");
      bool reached = s.victim_reached();
      if (name == "runc") {
        std::cout << "[ runc     ] link to " << target << ": exit " << r.code << ", victim socket reached: " << reached
                  << "\n";
        return;
      }
      EXPECT_EQ(r.code, 1) << target;
      EXPECT_NE(r.err.find(named + " is a symbolic link (not followed: name the socket itself)"), std::string::npos)
          << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_FALSE(reached) << "berth connected through the link";
      EXPECT_NE(rt({"state", "console-link"}).code, 0) << "a failed create leaves nothing";
    });
  }
  EXPECT_EQ(slurp(s.file), "keep\n");
}

// A parent directory replaced by a link of another user (uid 65534) leading to the
// victim's directory: refused. A root-owned parent link (as /var/run -> /run) is followed,
// and the pty arrives.
TEST_F(ConsoleSocketPaths, ParentLinkOfAnotherPartyIsNotFollowed) {
  Scene s;
  std::string victim_dir = s.victim.path().substr(0, s.victim.path().rfind('/'));
  std::string link = s.dir.path() + "/run";
  ASSERT_EQ(::symlink(victim_dir.c_str(), link.c_str()), 0);
  ASSERT_EQ(::lchown(link.c_str(), 65534, 65534), 0);
  std::string named = link + "/s.sock";
  for_each_runtime([&](const Runtime& rt, const std::string& name) {
    auto r = create_with_console(rt, named, "console-parent");
    bool reached = s.victim_reached();
    if (name == "runc") {
      std::cout << "[ runc     ] parent link of uid 65534: exit " << r.code << ", victim socket reached: " << reached
                << "\n";
      return;
    }
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find(link + " is a symbolic link owned by uid 65534, neither root nor the caller: not followed"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(reached) << "berth connected through another party's link";
  });
  ASSERT_EQ(::lchown(link.c_str(), 0, 0), 0);
  Runtime rt;
  auto ok = create_with_console(rt, named, "console-rootlink");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(s.victim_reached()) << "a root-owned parent link is followed";
}

}  // namespace
}  // namespace berth::test
