// file::write_atomic under SIGKILL: a writer killed at random moments while creating files
// leaves complete files only, never a temp file (the pid file of a killed `create` used to
// stay as ".pid.tmpN"); replacing keeps the mode and the content whole. (Replacing keeps a
// window of one syscall between link and rename: see docs/reliability.md.)
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "util/file.h"
#include "util/unique_fd.h"

namespace berth {
namespace {

namespace fs = std::filesystem;

struct TmpDir {
  TmpDir() {
    char t[] = "/tmp/berth-atomic.XXXXXX";
    path = ::mkdtemp(t);
    fd.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  ~TmpDir() { fs::remove_all(path); }
  std::string path;
  UniqueFd fd;
};

TEST(AtomicWrite, CreatesAndReplacesWithTheMode) {
  TmpDir d;
  ASSERT_TRUE(file::write_atomic(d.fd.get(), "f", "one", 0640));
  ASSERT_TRUE(file::write_atomic(d.fd.get(), "f", "two two", 0600));
  auto text = file::read(d.fd.get(), "f");
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "two two");
  struct stat st;
  ASSERT_EQ(::fstatat(d.fd.get(), "f", &st, 0), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path), fs::directory_iterator()), 1);
}

// The replacement is an exchange plus an unlink of the old file (no ext4 writeback from a
// rename over it): a reader holding the old file still reads it whole, the name gives the
// new content, and nothing else is left in the directory.
TEST(AtomicWrite, AReaderOfTheOldFileKeepsItWhole) {
  TmpDir d;
  ASSERT_TRUE(file::write_atomic(d.fd.get(), "state.json", "old", 0600));
  UniqueFd old(::openat(d.fd.get(), "state.json", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(old);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(file::write_atomic(d.fd.get(), "state.json", "new " + std::to_string(i), 0600));
  char buf[16] = {};
  ASSERT_EQ(::pread(old.get(), buf, sizeof buf - 1, 0), 3);
  EXPECT_STREQ(buf, "old");
  struct stat st;
  ASSERT_EQ(::fstat(old.get(), &st), 0);
  EXPECT_EQ(st.st_nlink, 0u) << "the old content must have no name left";
  EXPECT_EQ(*file::read(d.fd.get(), "state.json"), "new 2");
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path), fs::directory_iterator()), 1);
}

// A directory in the way (a --pid-file naming one) is refused, as a rename over it would
// be, and stays where it was with what it holds.
TEST(AtomicWrite, ADirectoryInTheWayStaysAndIsRefused) {
  TmpDir d;
  ASSERT_EQ(::mkdirat(d.fd.get(), "pid", 0755), 0);
  ASSERT_TRUE(file::write_atomic(d.fd.get(), "pid/inside", "x", 0644));
  auto st = file::write_atomic(d.fd.get(), "pid", "123", 0644);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().err(), EISDIR) << st.error().message();
  EXPECT_TRUE(fs::is_directory(d.path + "/pid"));
  EXPECT_EQ(*file::read(d.fd.get(), "pid/inside"), "x");
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path), fs::directory_iterator()), 1);
}

TEST(AtomicWrite, KilledWritersLeaveNoTempFile) {
  TmpDir d;
  std::mt19937 rng(12345);
  const std::string big(1 << 20, 'x');
  int killed_mid_run = 0;
  for (int round = 0; round < 40; ++round) {
    pid_t pid = ::fork();
    if (pid == 0) {
      // New names, as pid files and seccomp cache entries are written.
      for (int i = 0;; ++i)
        (void)file::write_atomic(d.fd.get(), "r" + std::to_string(round) + "-" + std::to_string(i), big, 0644);
    }
    ASSERT_GT(pid, 0);
    ::usleep(static_cast<useconds_t>(rng() % 20000));
    ::kill(pid, SIGKILL);
    int status;
    ::waitpid(pid, &status, 0);
    killed_mid_run += WIFSIGNALED(status);
  }
  EXPECT_EQ(killed_mid_run, 40);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(d.path)) {
    std::string name = e.path().filename();
    ++files;
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "left behind: " << name;
    EXPECT_EQ(e.file_size(), big.size()) << name << " is incomplete";
  }
  EXPECT_GT(files, 1u);
}

}  // namespace
}  // namespace berth
