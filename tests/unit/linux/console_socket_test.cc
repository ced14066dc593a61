// open_named_socket / send_fd_to_socket: the --console-socket path rule (a link at the
// last component refused, a parent link only of root or the caller, a socket or refused)
// and the connect through the opened inode, which lifts sun_path's 108-byte limit.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "linux/console.h"

namespace berth::linux {
namespace {

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/berth-console-ut.XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~Dir() { std::filesystem::remove_all(path); }
};

// A listening socket at `path`, bound through `bind_as` (a shorter name for the same
// place) when the path is too long for sun_path.
int listen_at(const std::string& bind_as) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", bind_as.c_str());
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << bind_as;
  EXPECT_EQ(::listen(fd, 1), 0);
  return fd;
}

std::string message(const std::string& path) {
  auto r = open_named_socket(path);
  return r ? "" : r.error().message();
}

TEST(ConsoleSocketPath, LongPathsAndParentLinksOfTheCallerWork) {
  Dir d;
  std::string deep = d.path + "/" + std::string(60, 'a') + "/" + std::string(60, 'b');
  std::filesystem::create_directories(deep);
  ASSERT_EQ(::symlink(deep.c_str(), (d.path + "/short").c_str()), 0);  // the caller's own link
  int l = listen_at(d.path + "/short/s");
  std::string named = deep + "/../" + std::string(60, 'b') + "/s";
  ASSERT_GT(named.size(), sizeof(sockaddr_un{}.sun_path));
  for (const std::string& p : {named, d.path + "/short/s"}) {
    ASSERT_TRUE(send_fd_to_socket(p, 0, "payload").ok()) << p;
    int c = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
    ASSERT_GE(c, 0);
    char buf[16] = {};
    EXPECT_EQ(::recv(c, buf, sizeof buf, 0), 7);
    EXPECT_STREQ(buf, "payload");
    ::close(c);
  }
  ::close(l);
}

TEST(ConsoleSocketPath, LinkAtTheNameAFileAndAMissingPathAreRefused) {
  Dir d;
  int l = listen_at(d.path + "/s");
  ASSERT_EQ(::symlink((d.path + "/s").c_str(), (d.path + "/link").c_str()), 0);
  EXPECT_EQ(message(d.path + "/link"), d.path + "/link is a symbolic link (not followed: name the socket itself)");
  EXPECT_EQ(message(d.path + "/link/."), d.path + "/link/. is a symbolic link (not followed: name the socket itself)")
      << "trailing empty and . components do not make the link a parent";
  std::ofstream(d.path + "/file") << "x";
  EXPECT_EQ(message(d.path + "/file"), d.path + "/file is not a socket");
  EXPECT_EQ(message(d.path + "/gone/s"), d.path + "/gone: no such file or directory");
  EXPECT_EQ(message(""), "empty socket path");
  ::close(l);
}

TEST(ConsoleSocketPath, ParentLinkOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the link another owner";
  Dir d;
  int l = listen_at(d.path + "/s");
  ASSERT_EQ(::symlink(d.path.c_str(), (d.path + "/other").c_str()), 0);
  ASSERT_EQ(::lchown((d.path + "/other").c_str(), 65534, 65534), 0);
  EXPECT_EQ(message(d.path + "/other/s"),
            d.path + "/other is a symbolic link owned by uid 65534, neither root nor the caller: not followed");
  ::close(l);
}

}  // namespace
}  // namespace berth::linux
