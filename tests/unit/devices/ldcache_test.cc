// ld.so.cache parsing: the real ldconfig's output (fixture), our writer, the old+new
// combined format, and refusal of truncated or corrupt files.
#include "devices/nvidia/ldcache.h"

#include <gtest/gtest.h>

#include <cstring>

#include "unit/devices/gpu_fixture.h"
#include "util/file.h"

namespace berth::devices::nvidia {
namespace {

TEST(NvidiaLdcache, ParsesTheRealLdconfigOutput) {
  const std::string& f = test::gpu_fixture();
  ASSERT_FALSE(f.empty());
  auto data = file::read(f + "/driver/etc/ld.so.cache");
  ASSERT_TRUE(data);
  auto entries = parse_ldcache(*data);
  ASSERT_TRUE(entries) << entries.error().message();
  std::vector<std::string> cuda;
  for (const auto& e : *entries) {
    EXPECT_EQ(classify(e.flags), LibArch::kNative) << e.key;
    if (e.key == "libcuda.so.1") cuda.push_back(e.value);
  }
  EXPECT_EQ(cuda, (std::vector<std::string>{"/usr/lib/nvidia-old/libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}))
      << "both installs are in the cache, the stale one first";
}

TEST(NvidiaLdcache, HostCacheParses) {
  auto data = file::read("/etc/ld.so.cache");
  if (!data) GTEST_SKIP() << "no /etc/ld.so.cache on this host";
  auto entries = parse_ldcache(*data);
  ASSERT_TRUE(entries) << entries.error().message();
  bool libc = false;
  for (const auto& e : *entries) libc = libc || e.key == "libc.so.6";
  EXPECT_TRUE(libc);
}

TEST(NvidiaLdcache, WriterRoundTripAndArchitectures) {
  std::vector<LdcacheEntry> in = {{0x0303, "libcuda.so.1", "/usr/lib64/libcuda.so.1", 0},
                                  {0x0003, "libcuda.so.1", "/usr/lib32/libcuda.so.1", 0},
                                  {0x0a03, "libfoo.so.1", "/usr/lib/aarch64/libfoo.so.1", 0},
                                  {0x0001, "libold.so.1", "/lib/libold.so.1", 0}};
  auto out = parse_ldcache(build_ldcache(in));
  ASSERT_TRUE(out) << out.error().message();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[1].value, "/usr/lib32/libcuda.so.1");
  EXPECT_EQ(classify((*out)[0].flags), LibArch::kNative);
  EXPECT_EQ(classify((*out)[1].flags), LibArch::kCompat32);
  EXPECT_EQ(classify((*out)[2].flags), LibArch::kOther) << "another architecture";
  EXPECT_EQ(classify((*out)[3].flags), LibArch::kOther) << "not an ELF glibc library";
}

TEST(NvidiaLdcache, OldFormatPrefix) {
  std::string fresh = build_ldcache({{0x0303, "libnvidia-ml.so.1", "/usr/lib/libnvidia-ml.so.1", 0}});
  // "ld.so-1.7.0" + nlibs + nlibs 12-byte entries, then the new table at an 8-byte boundary.
  std::string old(16 + 2 * 12, '\0');
  std::memcpy(old.data(), "ld.so-1.7.0", 11);
  old[12] = 2;
  old.resize((old.size() + 7) & ~size_t{7}, '\0');
  // In the combined format, new-table string offsets count from the new header.
  auto entries = parse_ldcache(old + fresh);
  ASSERT_TRUE(entries) << entries.error().message();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].key, "libnvidia-ml.so.1");
}

TEST(NvidiaLdcache, RefusesCorruptFiles) {
  std::string good = build_ldcache({{0x0303, "libcuda.so.1", "/usr/lib/libcuda.so.1", 0}});
  EXPECT_FALSE(parse_ldcache(""));
  EXPECT_FALSE(parse_ldcache("not a cache at all, not at all"));
  EXPECT_FALSE(parse_ldcache(good.substr(0, 40))) << "truncated header";
  EXPECT_FALSE(parse_ldcache(good.substr(0, 60))) << "truncated entries";
  std::string bad = good;
  uint32_t far = 1u << 30;
  std::memcpy(bad.data() + 48 + 8, &far, 4);
  auto r = parse_ldcache(bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("string offset past the end"), std::string::npos);
  std::string unterminated = good;
  unterminated.pop_back();  // the last string loses its NUL
  EXPECT_FALSE(parse_ldcache(unterminated));
  std::string huge = good;
  uint32_t n = 1u << 28;
  std::memcpy(huge.data() + 20, &n, 4);
  EXPECT_FALSE(parse_ldcache(huge)) << "entry count past the end";
}

}  // namespace
}  // namespace berth::devices::nvidia
