// One hook run: its working directory (runc's: the bundle, for the runtime's hooks) and
// the error when that directory is gone.
#include "container/hooks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace berth::container {
namespace {

spec::Hook pwd_into(const std::string& file) {
  spec::Hook h;
  h.path = "/bin/sh";
  h.args = {"sh", "-c", "pwd -P > " + file};
  return h;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class HookCwd : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-hookcwd.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = std::filesystem::canonical(tmpl).string();
    std::filesystem::create_directory(dir_ + "/bundle");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(HookCwd, RunsInTheGivenDirectory) {
  ASSERT_TRUE(run_hooks("prestart", {pwd_into(dir_ + "/out")}, "{}", dir_ + "/bundle"));
  EXPECT_EQ(slurp(dir_ + "/out"), dir_ + "/bundle\n");
}

TEST_F(HookCwd, WithoutOneItKeepsOurs) {
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_TRUE(run_hook(pwd_into(dir_ + "/out"), "{}"));
  EXPECT_EQ(slurp(dir_ + "/out"), std::filesystem::canonical(cwd).string() + "\n");
}

TEST_F(HookCwd, AMissingDirectoryFailsTheHook) {
  auto st = run_hooks("createRuntime", {pwd_into(dir_ + "/out")}, "{}", dir_ + "/gone");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "error running createRuntime hook #0: error running hook: exit status 127, stdout: , stderr: chdir " +
                                      dir_ + "/gone: no such file or directory\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/out"));
}

}  // namespace
}  // namespace berth::container
