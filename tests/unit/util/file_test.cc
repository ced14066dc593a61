// file::read_regular: a file someone else controls is read only if it is a regular file of
// bounded size; a FIFO is refused at once (never waited on), a link refused with O_NOFOLLOW.
#include "util/file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

namespace berth {
namespace {

class ReadRegular : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-read-regular.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const char* n : {"file", "fifo", "link", "big"}) ::unlink((dir_ + "/" + n).c_str());
    ::rmdir(dir_.c_str());
  }
  void write(const std::string& name, const std::string& text) {
    int fd = ::open((dir_ + "/" + name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(file::write_all(fd, text).ok());
    ::close(fd);
  }
  std::string dir_;
};

TEST_F(ReadRegular, ReadsARegularFile) {
  write("file", "root:x:0:0::/root:/bin/sh\n");
  auto text = file::read_regular(AT_FDCWD, dir_ + "/file", 1024);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(*text, "root:x:0:0::/root:/bin/sh\n");
}

TEST_F(ReadRegular, AFifoIsRefusedWithoutWaiting) {
  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0644), 0);
  auto text = file::read_regular(AT_FDCWD, dir_ + "/fifo", 1024);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message(), "read " + dir_ + "/fifo: not a regular file");
}

TEST_F(ReadRegular, ADirectoryOrADeviceIsRefused) {
  EXPECT_FALSE(file::read_regular(AT_FDCWD, dir_, 1024).ok());
  EXPECT_FALSE(file::read_regular(AT_FDCWD, "/dev/zero", 1024).ok());  // would never end
}

TEST_F(ReadRegular, TooLargeIsRefusedBeforeReading) {
  write("big", std::string(4096, 'x'));
  auto text = file::read_regular(AT_FDCWD, dir_ + "/big", 100);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().err(), EFBIG);
}

TEST_F(ReadRegular, ALinkIsRefusedWithNoFollow) {
  write("file", "x");
  ASSERT_EQ(::symlink("file", (dir_ + "/link").c_str()), 0);
  EXPECT_TRUE(file::read_regular(AT_FDCWD, dir_ + "/link", 100).ok());
  auto text = file::read_regular(AT_FDCWD, dir_ + "/link", 100, O_NOFOLLOW);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().err(), ELOOP);
}

}  // namespace
}  // namespace berth
