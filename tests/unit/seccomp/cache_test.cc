// The compiled-filter cache: miss then hit (through the debug log), the entry format and
// its checks (tampered, truncated, swapped, loose mode, symlink), the directory policy,
// the bound, concurrent writers, and the compile-versus-hit timing of Docker's profile.
#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <dirent.h>

#include "seccomp/cache.h"
#include "seccomp/seccomp.h"
#include "unit/seccomp/seccomp_test_util.h"

namespace berth::seccomp {
namespace {

using namespace testing;

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.emplace_back(e->d_name);
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

spec::Seccomp small(uint32_t errno_ret) {
  return profile("SCMP_ACT_ALLOW", {rule({"mkdir"}, "SCMP_ACT_ERRNO", errno_ret)});
}

class SeccompCache : public ::testing::Test {
 protected:
  std::string entry(const spec::Seccomp& p) const { return dir_ + "/" + cache::key(p) + ".bpf"; }
  bool hit(const spec::Seccomp& p) {
    log_.clear();
    auto prog = compile_cached(p, dir_);
    EXPECT_TRUE(prog) << prog.error().message();
    std::string text = log_.text();
    bool h = text.find("seccomp: cache hit " + cache::key(p)) != std::string::npos;
    bool m = text.find("seccomp: cache miss " + cache::key(p)) != std::string::npos;
    EXPECT_NE(h, m) << text;
    return h;
  }
  std::string last_log() const { return log_.text(); }

  TempDir tmp_;
  std::string dir_ = tmp_.path() + "/seccomp";
  LogCapture log_;
};

TEST_F(SeccompCache, MissThenHit) {
  spec::Seccomp docker = fixture("docker-default-seccomp.json");
  auto fresh = compile(docker);
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(hit(docker));
  EXPECT_TRUE(hit(docker));
  auto cached = compile_cached(docker, dir_);
  ASSERT_TRUE(cached);
  EXPECT_TRUE(*cached == *fresh);

  struct stat st {};
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(stat(entry(docker).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, geteuid());
  EXPECT_EQ(size_t(st.st_size), cache::kHeaderSize + fresh->bytes().size());
  EXPECT_EQ(list_dir(dir_), std::vector<std::string>{cache::key(docker) + ".bpf"});
}

TEST_F(SeccompCache, KeyCoversTheFilterButNotLoadTimeFields) {
  spec::Seccomp a = small(42);
  std::string k = cache::key(a);
  EXPECT_EQ(k.size(), 64u);
  spec::Seccomp load_only = a;
  load_only.flags = {"SECCOMP_FILTER_FLAG_LOG"};
  load_only.listener_path = "/run/agent.sock";
  load_only.listener_metadata = "x";
  EXPECT_EQ(cache::key(load_only), k);
  EXPECT_NE(cache::key(small(43)), k);
  spec::Seccomp arch = a;
  arch.architectures = {"SCMP_ARCH_X86"};
  EXPECT_NE(cache::key(arch), k);
  spec::Seccomp args = a;
  args.syscalls[0].args = {arg(1, "SCMP_CMP_MASKED_EQ", 1, 2)};
  spec::Seccomp args2 = a;
  args2.syscalls[0].args = {arg(1, "SCMP_CMP_MASKED_EQ", 1, 3)};
  EXPECT_NE(cache::key(args), cache::key(args2));
}

TEST(SeccompCacheFormat, Crc32cKnownVectors) {
  EXPECT_EQ(cache::crc32c(""), 0u);
  EXPECT_EQ(cache::crc32c("123456789"), 0xe3069283u);  // the standard check value
  EXPECT_EQ(cache::crc32c(std::string(32, '\0')), 0x8a9136aau);  // RFC 3720 B.4
}

TEST_F(SeccompCache, DecodeChecksEveryHeaderField) {
  auto prog = compile(small(42));
  ASSERT_TRUE(prog);
  std::string k = cache::key(small(42));
  std::string good = cache::encode(k, *prog);
  auto back = cache::decode(k, good);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_TRUE(*back == *prog);
  auto why = [&](const std::string& key, std::string bytes) {
    auto r = cache::decode(key, bytes);
    return r ? std::string("accepted") : r.error().message();
  };
  EXPECT_EQ(why(k, good.substr(0, 20)), "truncated header");
  EXPECT_EQ(why(k, "XERTHBPF" + good.substr(8)), "bad magic");
  std::string version = good;
  version[8] ^= 1;
  EXPECT_EQ(why(k, version).rfind("format version", 0), 0u);
  std::string zero = good;
  std::memset(zero.data() + 12, 0, 4);
  EXPECT_EQ(why(k, zero), "bad instruction count 0");
  EXPECT_NE(why(k, good + "12345678").find("does not match the header"), std::string::npos);
  std::string body = good;
  body.back() ^= 0x40;
  EXPECT_EQ(why(k, body), "checksum mismatch");
  // A valid entry of another key (a renamed file) does not pass either.
  EXPECT_EQ(why(cache::key(small(43)), good), "entry of another key");
}

void overwrite(const std::string& path, const std::function<void(std::string&)>& edit) {
  auto bytes = file::read(path);
  ASSERT_TRUE(bytes);
  edit(*bytes);
  int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(file::write_all(fd, *bytes));
  close(fd);
}

TEST_F(SeccompCache, TamperedOrTruncatedEntryIsAMissAndRewritten) {
  spec::Seccomp p = fixture("docker-default-seccomp.json");
  EXPECT_FALSE(hit(p));
  std::string path = entry(p);
  auto original = file::read(path);
  ASSERT_TRUE(original);

  overwrite(path, [](std::string& b) { b[cache::kHeaderSize + 100] ^= 1; });  // one bit of one insn
  EXPECT_FALSE(hit(p));
  EXPECT_NE(last_log().find("checksum mismatch"), std::string::npos) << last_log();
  EXPECT_EQ(*file::read(path), *original);  // rewritten
  EXPECT_TRUE(hit(p));

  overwrite(path, [](std::string& b) { b.resize(b.size() - 5); });
  EXPECT_FALSE(hit(p));
  EXPECT_NE(last_log().find("does not match the header"), std::string::npos) << last_log();
  EXPECT_TRUE(hit(p));

  overwrite(path, [](std::string& b) { b.clear(); });
  EXPECT_FALSE(hit(p));
  EXPECT_TRUE(hit(p));
}

TEST_F(SeccompCache, EntryWithLooseModeOrSymlinkIsNotTrusted) {
  spec::Seccomp p = small(42);
  EXPECT_FALSE(hit(p));
  std::string path = entry(p);
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  EXPECT_FALSE(hit(p));
  EXPECT_NE(last_log().find("not a regular 0600 file"), std::string::npos) << last_log();
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  // A symlink to a valid entry elsewhere is not followed.
  std::string elsewhere = tmp_.path() + "/elsewhere.bpf";
  ASSERT_EQ(rename(path.c_str(), elsewhere.c_str()), 0);
  ASSERT_EQ(symlink(elsewhere.c_str(), path.c_str()), 0);
  EXPECT_FALSE(hit(p));
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));  // replaced by a real entry
  EXPECT_TRUE(hit(p));
}

TEST_F(SeccompCache, EntryOfAnotherUserIsNotTrusted) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown a file to another uid";
  spec::Seccomp p = small(42);
  EXPECT_FALSE(hit(p));
  ASSERT_EQ(chown(entry(p).c_str(), 12345, 12345), 0);
  EXPECT_FALSE(hit(p));
  EXPECT_TRUE(hit(p));
}

TEST_F(SeccompCache, DirectoryWritableByOthersIsNotUsed) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  spec::Seccomp p = small(42);
  auto prog = compile_cached(p, dir_);
  ASSERT_TRUE(prog) << prog.error().message();
  EXPECT_NE(last_log().find("cache not used"), std::string::npos) << last_log();
  EXPECT_TRUE(list_dir(dir_).empty());
  auto fresh = compile(p);
  ASSERT_TRUE(fresh);
  EXPECT_TRUE(*prog == *fresh);
}

void set_age(const std::string& path, time_t seconds_ago) {
  struct timespec t[2];
  clock_gettime(CLOCK_REALTIME, &t[0]);
  t[0].tv_sec -= seconds_ago;
  t[1] = t[0];
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), t, 0), 0) << path;
}

TEST_F(SeccompCache, BoundedAndLeastRecentlyUsedGoesFirst) {
  for (uint32_t e = 1; e <= 3; ++e) {
    ASSERT_TRUE(cache::compile_cached(small(e), dir_, 3));
    set_age(entry(small(e)), 100 - e * 10);  // 1 oldest, 3 newest
  }
  ASSERT_TRUE(cache::compile_cached(small(1), dir_, 3));  // a hit refreshes 1
  std::string dead_tmp = dir_ + "/." + cache::key(small(9)) + ".bpf.tmp99999";
  std::string live_tmp = dir_ + "/." + cache::key(small(8)) + ".bpf.tmp99998";
  for (const auto& t : {dead_tmp, live_tmp}) {
    int fd = open(t.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  set_age(dead_tmp, 3600);
  ASSERT_TRUE(cache::compile_cached(small(4), dir_, 3));  // evicts 2, the least recently used

  std::vector<std::string> want = {"." + cache::key(small(8)) + ".bpf.tmp99998"};
  for (uint32_t e : {1, 3, 4}) want.push_back(cache::key(small(e)) + ".bpf");
  std::sort(want.begin(), want.end());
  EXPECT_EQ(list_dir(dir_), want);
}

TEST_F(SeccompCache, ConcurrentWriters) {
  spec::Seccomp a = fixture("docker-default-seccomp.json");
  spec::Seccomp b = small(42);
  auto want_a = compile(a), want_b = compile(b);
  ASSERT_TRUE(want_a && want_b);
  int gate[2];
  ASSERT_EQ(pipe2(gate, O_CLOEXEC), 0);
  std::vector<pid_t> kids;
  for (int i = 0; i < 8; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      close(gate[1]);
      char c;
      if (read(gate[0], &c, 1) != 0) _exit(kChildSetupFailed);  // EOF: everyone starts at once
      const auto& p = i % 2 ? a : b;
      const auto& want = i % 2 ? *want_a : *want_b;
      for (int round = 0; round < 5; ++round) {
        auto got = compile_cached(p, dir_);
        if (!got || !(*got == want)) _exit(1);
      }
      _exit(0);
    }
    ASSERT_GT(pid, 0);
    kids.push_back(pid);
  }
  close(gate[0]);
  close(gate[1]);
  for (pid_t pid : kids) {
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << describe_status(st);
  }
  std::vector<std::string> want = {cache::key(a) + ".bpf", cache::key(b) + ".bpf"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(list_dir(dir_), want);  // no temp file left behind
  EXPECT_TRUE(hit(a));
  EXPECT_TRUE(hit(b));
}

// Not a timed assertion: prints what the cache saves on the Docker profile.
TEST_F(SeccompCache, DockerProfileCompileVersusHitTiming) {
  using Clock = std::chrono::steady_clock;
  spec::Seccomp docker = fixture("docker-default-seccomp.json");
  auto median_us = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  auto time_us = [](const std::function<void()>& f) {
    auto t0 = Clock::now();
    f();
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  };
  std::vector<double> compiles, hits;
  Program compiled, cached;
  for (int i = 0; i < 15; ++i) compiles.push_back(time_us([&] { compiled = *compile(docker); }));
  ASSERT_TRUE(compile_cached(docker, dir_));
  for (int i = 0; i < 100; ++i) hits.push_back(time_us([&] { cached = *compile_cached(docker, dir_); }));
  EXPECT_TRUE(cached == compiled);
  // And what the kernel takes to load it, measured in the child that loads it.
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  int status = run_child([&] {
    double us = time_us([&] { (void)load(cached, docker); });
    return write(pipe_fds[1], &us, sizeof us) == sizeof us ? 0 : 1;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  double load_us = -1;
  EXPECT_EQ(read(pipe_fds[0], &load_us, sizeof load_us), ssize_t(sizeof load_us));
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  std::printf("[ timing   ] docker profile (%zu insns): compile median %.0f us, cache hit median %.0f us, "
              "load %.0f us\n",
              compiled.insns.size(), median_us(compiles), median_us(hits), load_us);
  RecordProperty("compile_us", static_cast<int>(median_us(compiles)));
  RecordProperty("cache_hit_us", static_cast<int>(median_us(hits)));
}

}  // namespace
}  // namespace berth::seccomp
