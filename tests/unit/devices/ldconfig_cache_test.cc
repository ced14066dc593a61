// The ld.so.cache cache (devices/nvidia/ldconfig_cache.h) on a small glibc-shaped rootfs: the key
// is stable, every input ldconfig reads changes it, what it cannot describe makes the
// container uncacheable, a value is checked against the key, entries on disk are bound to
// their key and payload, and a miss, a fill and a hit in a state root.
#include "devices/nvidia/ldconfig_cache.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>

#include "devices/nvidia/ldcache.h"
#include "util/file.h"

namespace berth::devices::nvidia {
namespace {

namespace fs = std::filesystem;
using nvidia::build_ldcache;
using nvidia::LdcacheEntry;

const std::string kLib = "/usr/lib/x86_64-linux-gnu";

class Tmp {
 public:
  Tmp() {
    char tmpl[] = "/tmp/berth-ldkey.XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~Tmp() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void put(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::trunc) << content;
}

class LdconfigKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    r = root.path() + "/rootfs";
    put(r + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    put(r + "/etc/ld.so.conf.d/libc.conf", "/usr/local/lib\n");
    put(r + kLib + "/libc.so.6", "elf");
    put(r + kLib + "/libz.so.1.2.13", "elf-z");
    fs::create_symlink("libz.so.1.2.13", r + kLib + "/libz.so.1");
    fs::create_symlink("usr/lib", r + "/lib");
    put(r + "/usr/local/lib/libextra.so.1", "extra");
    put(r + "/usr/lib/x86_64-linux-gnu/perl/unscanned.pm", "x");
    put(host.path() + "/libcuda.so.550.54.15", "host libcuda");
    e.mounts.push_back({host.path() + "/libcuda.so.550.54.15", kLib + "/libcuda.so.550.54.15", {"ro"}});
    e.symlinks.push_back({"libcuda.so.550.54.15", kLib + "/libcuda.so.1"});
    e.files.push_back({"/etc/ld.so.conf.d/01-berth-nvidia.conf", kLib + "\n", 0644});
    e.ldconfig.push_back({"/bin/sh", {"-f", "/etc/ld.so.conf", "-C", "/etc/ld.so.cache", kLib}});
  }

  std::string digest() {
    auto k = ldconfig_key(r, e, mounts);
    EXPECT_TRUE(k) << k.error().message();
    return k ? k->digest : "";
  }

  // The key after `change` differs from the key before.
  void changes(const std::string& what, const std::function<void()>& change) {
    std::string before = digest();
    change();
    EXPECT_NE(digest(), before) << what << " must change the key";
  }

  std::string valid_cache() {
    return build_ldcache({{0x0303, "libcuda.so.1", kLib + "/libcuda.so.1", 0},
                          {0x0303, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", 0},
                          {0x0303, "libextra.so.1", "/usr/local/lib/libextra.so.1", 0}});
  }

  Tmp root, host;
  std::string r;
  Edits e;
  std::vector<spec::Mount> mounts = {{"/proc", "proc", "proc", {}, {}, {}}, {"/etc/hosts", "bind", "/x", {}, {}, {}}};
};

TEST_F(LdconfigKeyTest, StableAndListsWhatLdconfigReads) {
  auto k = ldconfig_key(r, e, mounts);
  ASSERT_TRUE(k) << k.error().message();
  EXPECT_EQ(digest(), k->digest);
  EXPECT_EQ(k->digest.size(), 64u);
  for (const char* line : {"conf /etc/ld.so.conf.d/01-berth-nvidia.conf", "dir /lib/x86_64-linux-gnu = /usr/lib/x86_64-linux-gnu",
                           "  libcuda.so.550.54.15 mount ", "  libcuda.so.1 link libcuda.so.550.54.15",
                           "dir /usr/local/lib = /usr/local/lib", "  perl d", "aux-cache missing"})
    EXPECT_NE(k->text.find(line), std::string::npos) << line << " in\n" << k->text;
  EXPECT_EQ(k->text.find("unscanned.pm"), std::string::npos) << "ldconfig does not scan perl/";
  EXPECT_TRUE(k->names.at("/lib/x86_64-linux-gnu").count("libc.so.6"));
  EXPECT_TRUE(k->names.at(kLib).count("libcuda.so.1"));
}

TEST_F(LdconfigKeyTest, EveryInputChangesTheKey) {
  changes("the image's ld.so.conf", [&] { put(r + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n/opt/lib\n"); });
  changes("a drop-in of the image", [&] { put(r + "/etc/ld.so.conf.d/other.conf", "/opt/other\n"); });
  changes("a library in a configured directory", [&] { put(r + "/usr/local/lib/libmore.so.2", "more"); });
  changes("a drop-in's content", [&] { put(r + "/etc/ld.so.conf.d/libc.conf", "/usr/local/lib64\n"); });
  changes("berth's drop-in", [&] { e.files[0].content += "/usr/lib32\n"; });
  changes("a library rewritten (size)", [&] { put(r + kLib + "/libc.so.6", "elf, longer"); });
  changes("a library touched (mtime)", [&] {
    struct timespec t[2] = {{1, 0}, {1, 0}};
    ::utimensat(AT_FDCWD, (r + kLib + "/libc.so.6").c_str(), t, 0);
  });
  changes("a library replaced (inode)", [&] {
    put(r + kLib + "/libc.so.6.new", "elf, longer");
    fs::rename(r + kLib + "/libc.so.6.new", r + kLib + "/libc.so.6");
  });
  changes("a new library", [&] { put(r + kLib + "/libnew.so.1", "new"); });
  changes("a symlink's target", [&] {
    fs::remove(r + kLib + "/libz.so.1");
    fs::create_symlink("libc.so.6", r + kLib + "/libz.so.1");
  });
  changes("the file a symlink reaches", [&] { put(r + kLib + "/libc.so.6", "elf, rewritten again"); });
  changes("a glibc-hwcaps library", [&] { put(r + kLib + "/glibc-hwcaps/x86-64-v3/libz.so.1", "v3"); });
  changes("the injected library's identity", [&] { put(host.path() + "/libcuda.so.550.54.15", "another driver build"); });
  changes("the injected library set", [&] { e.mounts.push_back({host.path() + "/libcuda.so.550.54.15", kLib + "/libnvidia-ml.so.550.54.15", {"ro"}}); });
  changes("a SONAME link berth makes", [&] { e.symlinks[0].target = "libcuda.so.550.54.14"; });
  changes("ldconfig's arguments", [&] { e.ldconfig[0].args.push_back("/usr/local/cuda/compat"); });
  changes("the ldconfig binary", [&] { e.ldconfig[0].host_binary = "/bin/true"; });
  changes("the aux-cache", [&] { put(r + "/var/cache/ldconfig/aux-cache", "aux"); });
  changes("a system directory appearing", [&] { put(r + "/usr/lib64/libq.so.1", "q"); });
}

TEST_F(LdconfigKeyTest, WhatTheKeyCannotDescribeIsNotCached) {
  auto refused = [&](const std::string& what, const std::string& why) {
    auto k = ldconfig_key(r, e, mounts);
    ASSERT_FALSE(k) << what;
    EXPECT_NE(k.error().message().find(why), std::string::npos) << what << ": " << k.error().message();
  };
  auto saved = e;
  put(r + "/etc/ld.so.conf", "include /opt/*.conf\n");
  refused("an include berth does not follow", "include /opt/*.conf");
  put(r + "/etc/ld.so.conf", "hwcap 0 nosegneg\n");
  refused("a hwcap line", "hwcap");
  put(r + "/etc/ld.so.conf", "lib\n");
  refused("a relative directory", "relative directory lib");
  put(r + "/etc/ld.so.conf.d/nested.conf", "include /etc/ld.so.conf.d/*.conf\n");
  put(r + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  refused("a nested include", "nested.conf: include");
  fs::remove(r + "/etc/ld.so.conf.d/nested.conf");
  mounts.push_back({"/etc", "tmpfs", "tmpfs", {}, {}, {}});
  refused("a mount over /etc", "the mount at /etc covers");
  mounts.back().destination = "/usr/lib";
  refused("a mount over a scanned directory's parent", "the mount at /usr/lib covers");
  mounts.back().destination = "/usr/local/lib/sub";
  refused("a mount inside a configured directory", "the mount at /usr/local/lib/sub covers");
  mounts.pop_back();
  e.mounts.push_back({host.path(), "/usr/local/lib", {"ro"}});
  refused("a device mount of a whole scanned directory", "the device mount at /usr/local/lib covers");
  e = saved;
  e.ldconfig.push_back(e.ldconfig[0]);
  refused("two ldconfig runs", "2 ldconfig runs");
  e = saved;
  EXPECT_TRUE(ldconfig_key(r, e, mounts)) << "mounts elsewhere (/proc, /etc/hosts) do not matter";
}

TEST_F(LdconfigKeyTest, AValueMustNameFilesOfTheListingUnderTheirSoname) {
  auto k = ldconfig_key(r, e, mounts);
  ASSERT_TRUE(k) << k.error().message();
  EXPECT_TRUE(check_ldcache_value(valid_cache(), *k));
  auto bad = [&](const std::vector<LdcacheEntry>& entries, const std::string& what) {
    auto st = check_ldcache_value(build_ldcache(entries), *k);
    EXPECT_FALSE(st) << what;
  };
  bad({{0x0303, "libc.so.6", "/tmp/evil/libc.so.6", 0}}, "a directory ldconfig does not scan");
  bad({{0x0303, "libc.so.6", "/../../host/lib/libc.so.6", 0}}, "a path out of the rootfs");
  bad({{0x0303, "libc.so.6", kLib + "/libz.so.1", 0}}, "another file under a wanted soname");
  bad({{0x0303, "libgone.so.1", kLib + "/libgone.so.1", 0}}, "a file the listing does not have");
  bad({{0x0303, "libc.so.6", "libc.so.6", 0}}, "a relative path");
  EXPECT_FALSE(check_ldcache_value("not a cache", *k));
}

TEST(LdconfigCacheEntry, BoundToItsKeyAndPayload) {
  std::string digest(64, 'a'), other(64, 'b');
  std::string entry = encode_ldcache_entry(digest, "payload\0bytes");
  auto back = decode_ldcache_entry(digest, entry);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, std::string("payload\0bytes"));
  EXPECT_FALSE(decode_ldcache_entry(other, entry)) << "another key";
  std::string tampered = entry;
  tampered.back() ^= 1;
  EXPECT_FALSE(decode_ldcache_entry(digest, tampered)) << "a payload changed on disk";
  EXPECT_FALSE(decode_ldcache_entry(digest, "garbage")) << "no header";
}

TEST_F(LdconfigKeyTest, MissFillHitInAStateRoot) {
  Tmp state;
  Edits first = e;
  auto fill = use_ldconfig_cache(first, spec::Spec{}, r, state.path());
  ASSERT_TRUE(fill) << "an empty cache misses";
  EXPECT_EQ(first.ldconfig.size(), 1u) << "ldconfig still runs";
  // What the run would have written; the init's mount points and links exist by then.
  put(r + "/etc/ld.so.cache", valid_cache());
  put(r + kLib + "/libcuda.so.550.54.15", "");
  fs::create_symlink("libcuda.so.550.54.15", r + kLib + "/libcuda.so.1");
  put(r + "/etc/ld.so.conf.d/01-berth-nvidia.conf", kLib + "\n");
  fill_ldconfig_cache(*fill);
  std::string entry = ldconfig_cache_dir(state.path()) + "/" + fill->digest;
  struct stat st;
  ASSERT_EQ(::stat(entry.c_str(), &st), 0) << "stored";
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Edits second = e;
  EXPECT_FALSE(use_ldconfig_cache(second, spec::Spec{}, r, state.path()));
  EXPECT_TRUE(second.ldconfig.empty()) << "a hit: no ldconfig run";
  ASSERT_FALSE(second.files.empty());
  EXPECT_EQ(second.files.back().container_path, "/etc/ld.so.cache");
  EXPECT_TRUE(second.files.back().replace);
  EXPECT_EQ(second.files.back().content, valid_cache());
  // Tampered on disk: a changed payload fails its hash; a re-hashed one naming a file
  // outside the listing fails the check; a group-readable entry is not trusted.
  auto bytes = file::read(entry);
  ASSERT_TRUE(bytes);
  put(entry, bytes->substr(0, bytes->size() - 1) + "x");
  Edits third = e;
  EXPECT_TRUE(use_ldconfig_cache(third, spec::Spec{}, r, state.path()));
  EXPECT_EQ(third.ldconfig.size(), 1u);
  put(entry, encode_ldcache_entry(fill->digest, build_ldcache({{0x0303, "libc.so.6", "/tmp/evil/libc.so.6", 0}})));
  ::chmod(entry.c_str(), 0600);
  Edits fourth = e;
  EXPECT_TRUE(use_ldconfig_cache(fourth, spec::Spec{}, r, state.path()));
  EXPECT_EQ(fourth.ldconfig.size(), 1u);
  put(entry, encode_ldcache_entry(fill->digest, valid_cache()));
  ::chmod(entry.c_str(), 0640);
  Edits fifth = e;
  EXPECT_TRUE(use_ldconfig_cache(fifth, spec::Spec{}, r, state.path()));
  EXPECT_EQ(fifth.ldconfig.size(), 1u);
}

TEST_F(LdconfigKeyTest, NotFilledFromASymlinkOrAChangedImage) {
  Tmp state;
  Edits first = e;
  auto fill = use_ldconfig_cache(first, spec::Spec{}, r, state.path());
  ASSERT_TRUE(fill);
  put(host.path() + "/outside", valid_cache());
  fs::create_symlink(host.path() + "/outside", r + "/etc/ld.so.cache");
  fill_ldconfig_cache(*fill);
  EXPECT_FALSE(fs::exists(ldconfig_cache_dir(state.path()) + "/" + fill->digest)) << "a symlinked cache is not read";
  fs::remove(r + "/etc/ld.so.cache");
  put(r + "/etc/ld.so.cache", valid_cache());
  put(r + kLib + "/libz.so.1.2.13", "changed meanwhile");
  fill_ldconfig_cache(*fill);
  EXPECT_FALSE(fs::exists(ldconfig_cache_dir(state.path()) + "/" + fill->digest))
      << "the image changed between the key and the run";
}

}  // namespace
}  // namespace berth::devices::nvidia

namespace berth::devices::nvidia {
namespace {

// What the key costs on a distribution-sized library directory (1,000 libraries and 1,000
// SONAME links, as /usr/lib/x86_64-linux-gnu of a large image): printed, not asserted
// (docs/gpu.md "Create time").
TEST_F(LdconfigKeyTest, KeyTimingOnABigLibraryDirectory) {
  for (int i = 0; i < 1000; ++i) {
    std::string n = "libgen" + std::to_string(i) + ".so";
    put(r + kLib + "/" + n + ".1.0.0", "x");
    fs::create_symlink(n + ".1.0.0", r + kLib + "/" + n + ".1");
  }
  ASSERT_TRUE(ldconfig_key(r, e, mounts));
  struct timespec a, b;
  ::clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ldconfig_key(r, e, mounts));
  ::clock_gettime(CLOCK_MONOTONIC, &b);
  double ms = ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6) / 5;
  std::printf("ldconfig key over 2,000 entries: %.2f ms\n", ms);
}

}  // namespace
}  // namespace berth::devices::nvidia
