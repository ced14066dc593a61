// linux/paths: lexical cleaning, and in-root resolution and creation through the recording
// fake — symlinks of the image never lead out of the root, components are created
// dirfd-relative without following anything.
#include <gtest/gtest.h>

#include <linux/openat2.h>

#include "linux/paths.h"
#include "support/fakes/recording_sys.h"

namespace berth::linux {
namespace {

TEST(Paths, CleanPath) {
  EXPECT_EQ(clean_path(""), "/");
  EXPECT_EQ(clean_path("a//b/./c/"), "/a/b/c");
  EXPECT_EQ(clean_path("/../../etc"), "/etc");
  EXPECT_EQ(clean_path("/a/b/../../../c"), "/c");
  EXPECT_EQ(path_components("/a/b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(path_components("/").empty());
}

TEST(Paths, ResolveStaysInsideTheRoot) {
  test::RecordingSys sys;
  sys.add_dir("/r/etc");
  sys.add_symlink("/r/up", "../../../etc");  // climbs above the root: clamped to /r
  sys.add_symlink("/r/abs", "/etc");         // absolute: relative to the root
  int root = sys.fake_fd("/r");
  auto up = resolve_in_root(sys, root, "/up");
  ASSERT_TRUE(up);
  auto abs = resolve_in_root(sys, root, "/abs");
  ASSERT_TRUE(abs);
  EXPECT_EQ(sys.log_text(),
            "openat2(3, \"up\", O_PATH, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = 4\n"
            "openat2(3, \"abs\", O_PATH, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = 5\n");
  ASSERT_TRUE(sys.exists("/r/etc"));
  EXPECT_FALSE(sys.exists("/etc/passwd"));
}

TEST(Paths, NoSymlinksWhenAsked) {
  test::RecordingSys sys;
  sys.add_dir("/r/tmp");
  sys.add_symlink("/r/proc", "/tmp");
  int root = sys.fake_fd("/r");
  auto r = resolve_in_root(sys, root, "/proc", O_PATH, RESOLVE_NO_SYMLINKS);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err(), ELOOP);
}

TEST(Paths, MakeInRootCreatesMissingComponentsFromTheDeepestExisting) {
  test::RecordingSys sys;
  sys.add_dir("/r/a");
  int root = sys.fake_fd("/r");
  bool created = false;
  auto fd = make_in_root(sys, root, "/a/b/c", Leaf::kFile, 0750, &created);
  ASSERT_TRUE(fd) << fd.error().message();
  EXPECT_TRUE(created);
  EXPECT_EQ(sys.log_text(),
            "openat2(3, \"a/b/c\", O_PATH, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = -ENOENT\n"
            "openat2(3, \"a/b\", O_PATH|O_DIRECTORY, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = -ENOENT\n"
            "openat2(3, \"a\", O_PATH|O_DIRECTORY, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) = 4\n"
            "mkdirat(4, \"b\", 0750)\n"
            "openat(4, \"b\", O_PATH|O_DIRECTORY|O_NOFOLLOW) = 5\n"
            "mknodat(5, \"c\", reg 0644)\n"
            "openat(5, \"c\", O_PATH|O_NOFOLLOW) = 6\n");
  EXPECT_TRUE(sys.exists("/r/a/b/c"));
}

TEST(Paths, MakeInRootReturnsAnExistingLeafAsItIs) {
  test::RecordingSys sys;
  sys.add_file("/r/etc/hosts");
  int root = sys.fake_fd("/r");
  bool created = true;
  ASSERT_TRUE(make_in_root(sys, root, "/etc/hosts", Leaf::kDirectory, 0755, &created));
  EXPECT_FALSE(created);
  EXPECT_EQ(sys.log().size(), 1u);
}

TEST(Paths, MakeInRootRefusesASymlinkRacedIntoPlace) {
  test::RecordingSys sys;
  sys.add_dir("/r");
  int root = sys.fake_fd("/r");
  // The component appears as a symlink between our mkdir (EEXIST) and the re-open.
  sys.add_symlink("/r/x", "/etc");
  sys.fail("openat2", 1, ENOENT);  // the fast path did not see it yet
  auto fd = make_in_root(sys, root, "/x/y", Leaf::kDirectory);
  ASSERT_FALSE(fd);
  EXPECT_NE(fd.error().message().find("x is not a directory"), std::string::npos) << fd.error().message();
}

TEST(Paths, ErrorsOtherThanMissingStopTheWalk) {
  test::RecordingSys sys;
  sys.add_dir("/r");
  int root = sys.fake_fd("/r");
  sys.fail("openat2", 1, EACCES);
  auto fd = make_in_root(sys, root, "/a", Leaf::kDirectory);
  ASSERT_FALSE(fd);
  EXPECT_EQ(fd.error().err(), EACCES);
}

}  // namespace
}  // namespace berth::linux
