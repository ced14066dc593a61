// util/trusted_path: the walk that the state root and org.criu.config go through (issue 31),
// on a temporary tree owned by whoever runs the test. "The caller" is that uid, or another
// one (uid + 1) to see the refusal of a directory the caller does not own; root-owned
// parents ("/", /tmp) are trusted either way. Other owners need root: tests/security.
#include "util/trusted_path.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace berth::trusted {
namespace {

struct Tree {
  std::string top;
  Tree() {
    char tmpl[] = "/tmp/berth-trusted.XXXXXX";
    top = ::mkdtemp(tmpl);
  }
  ~Tree() { std::filesystem::remove_all(top); }
  std::string dir(const std::string& rel, mode_t mode = 0700) {
    std::string p = top + "/" + rel;
    ::mkdir(p.c_str(), mode);
    ::chmod(p.c_str(), mode);
    return p;
  }
  std::string file(const std::string& rel, const std::string& text, mode_t mode = 0644) {
    std::string p = top + "/" + rel;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }
};

WalkOptions mine(bool create = false) { return {"state root", ::geteuid(), create}; }

std::string refusal(const Result<Walked>& r) { return r ? std::string("accepted") : r.error().message(); }

TEST(TrustedPath, TheCallersPrivateDirectoryIsAccepted) {
  Tree t;
  auto r = open_dir(t.dir("root"), mine());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->fd);
  EXPECT_FALSE(r->missing);
  EXPECT_EQ(r->path, t.top + "/root");
  struct stat slash;
  ASSERT_EQ(::stat("/", &slash), 0);
  ASSERT_FALSE(r->dirs.empty());
  EXPECT_EQ(r->dirs.front(), (DirId{slash.st_dev, slash.st_ino}));
  EXPECT_EQ(r->dirs.back(), (DirId{r->st.st_dev, r->st.st_ino})) << "the directory's own id comes last";
}

TEST(TrustedPath, ARootWritableByGroupOrOthersIsRefused) {
  Tree t;
  std::string p = t.dir("root", 0777);
  EXPECT_EQ(refusal(open_dir(p, mine())), "state root " + p + ": writable by others (mode 0777)");
  ::chmod(p.c_str(), 0770);
  EXPECT_EQ(refusal(open_dir(p, mine())), "state root " + p + ": writable by group (mode 0770)");
  ::chmod(p.c_str(), 01777);
  EXPECT_EQ(refusal(open_dir(p, mine())), "state root " + p + ": writable by others (mode 1777)")
      << "sticky protects entries from others, not the root itself";
}

// Run as root, the temporary directory above is root's (trusted by every caller) and the
// root itself is refused; run as a user, that directory is refused first: its owner could
// rename the root away.
TEST(TrustedPath, ARootOfAnotherUidIsRefused) {
  Tree t;
  std::string p = t.dir("root");
  uid_t me = ::geteuid(), other = me + 1;
  std::string expect = me == 0 ? "state root " + p + ": owned by uid 0, not by the caller (uid 1)"
                               : "state root " + p + ": " + t.top + ": owned by uid " + std::to_string(me) +
                                     ", neither root nor the caller (uid " + std::to_string(other) + ")";
  EXPECT_EQ(refusal(open_dir(p, {"state root", other, false})), expect);
}

TEST(TrustedPath, AParentWritableByOthersIsRefusedUnlessSticky) {
  Tree t;
  std::string shared = t.dir("shared", 0777);
  std::string p = t.dir("shared/root");
  EXPECT_EQ(refusal(open_dir(p, mine())),
            "state root " + p + ": " + shared + ": writable by others (mode 0777) without the sticky bit");
  ::chmod(shared.c_str(), 0775);
  EXPECT_EQ(refusal(open_dir(p, mine())),
            "state root " + p + ": " + shared + ": writable by group (mode 0775) without the sticky bit");
  ::chmod(shared.c_str(), 01777);  // as /tmp: only our own entry's owner may rename it
  EXPECT_TRUE(open_dir(p, mine())) << refusal(open_dir(p, mine()));
}

TEST(TrustedPath, MissingComponentsAreMadePrivateOrReportedMissing) {
  Tree t;
  std::string p = t.top + "/a/b/root";
  auto absent = open_dir(p, mine());
  ASSERT_TRUE(absent) << absent.error().message();
  EXPECT_TRUE(absent->missing);
  EXPECT_FALSE(absent->fd);
  auto made = open_dir(p, mine(true));
  ASSERT_TRUE(made) << made.error().message();
  EXPECT_FALSE(made->missing);
  for (const std::string& d : {t.top + "/a", t.top + "/a/b", p}) {
    struct stat st;
    ASSERT_EQ(::stat(d.c_str(), &st), 0) << d;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << d;
  }
}

TEST(TrustedPath, LinksOfTheCallerAndDotDotResolveOnFds) {
  Tree t;
  t.dir("real");
  t.dir("real/root");
  ASSERT_EQ(::symlink("real", (t.top + "/link").c_str()), 0);
  auto r = open_dir(t.top + "/link/../link/./root", mine());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->path, t.top + "/real/root");
}

TEST(TrustedPath, AFileMustBeRegularNeverALinkAndWritableByNobodyElse) {
  Tree t;
  WalkOptions o{"org.criu.config", ::geteuid(), false};
  std::string good = t.file("good.conf", "tcp-established\n");
  auto r = open_file(good, o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(S_ISREG(r->st.st_mode));
  EXPECT_EQ(::fcntl(r->fd.get(), F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDONLY | O_NONBLOCK);

  std::string gw = t.file("gw.conf", "x\n", 0664);
  EXPECT_EQ(refusal(open_file(gw, o)), "org.criu.config " + gw + ": writable by group (mode 0664)");
  std::string link = t.top + "/link.conf";
  ASSERT_EQ(::symlink(good.c_str(), link.c_str()), 0);
  EXPECT_EQ(refusal(open_file(link, o)), "org.criu.config " + link + ": a symbolic link (not followed)");
  std::string fifo = t.top + "/fifo.conf";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(refusal(open_file(fifo, o)), "org.criu.config " + fifo + ": not a regular file");
  EXPECT_EQ(refusal(open_file(t.top, o)), "org.criu.config " + t.top + ": not a regular file");
  auto missing = open_file(t.top + "/none.conf", o);
  ASSERT_TRUE(missing) << missing.error().message();
  EXPECT_TRUE(missing->missing);
  // A directory above it of another uid than the caller's (nor root's): refused. (Run as
  // root, everything here is root's, which every caller trusts; tests/security covers it.)
  if (::geteuid() != 0) {
    uid_t other = ::geteuid() + 1;
    t.dir("sub", 0755);
    std::string in_sub = t.file("sub/c.conf", "x\n");
    EXPECT_EQ(refusal(open_file(in_sub, {"org.criu.config", other, false})),
              "org.criu.config " + in_sub + ": " + t.top + ": owned by uid " + std::to_string(::geteuid()) +
                  ", neither root nor the caller (uid " + std::to_string(other) + ")");
  }
}

TEST(TrustedPath, CheckPrivateNamesOwnerAndMode) {
  struct stat st {};
  st.st_uid = 1000;
  st.st_mode = S_IFDIR | 0700;
  EXPECT_EQ(check_private(st, 0), "owned by uid 1000, not by the caller (uid 0)");
  EXPECT_EQ(check_private(st, 1000), "");
  st.st_mode = S_IFDIR | 0757;
  EXPECT_EQ(check_private(st, 1000), "writable by others (mode 0757)");
  st.st_uid = 0;
  st.st_mode = S_IFDIR | 01777;
  EXPECT_EQ(check_parent(st, 1000), "") << "root's sticky /tmp";
  st.st_uid = 1000;
  st.st_mode = S_IFDIR | 0755;
  EXPECT_EQ(check_parent(st, 0), "owned by uid 1000, not by root");
}

}  // namespace
}  // namespace berth::trusted
