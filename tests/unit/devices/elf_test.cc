// ELF facts: static vs dynamic programs, the CUDA forward-compat note, hostile input.
#include "devices/nvidia/elf.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "unit/devices/gpu_fixture.h"
#include "util/unique_fd.h"

namespace berth::devices::nvidia {
namespace {

UniqueFd open_ro(const std::string& p) { return UniqueFd(::open(p.c_str(), O_RDONLY | O_CLOEXEC)); }

TEST(NvidiaElf, StaticAndDynamicPrograms) {
  UniqueFd sh = open_ro("/bin/sh");
  ASSERT_TRUE(sh);
  auto info = read_elf_info(sh.get());
  ASSERT_TRUE(info) << info.error().message();
  EXPECT_TRUE(info->is_64);
  EXPECT_TRUE(info->has_interp) << "/bin/sh is dynamically linked";
  UniqueFd bb = open_ro("/bin/busybox");
  if (!bb) GTEST_SKIP() << "no busybox";
  auto b = read_elf_info(bb.get());
  ASSERT_TRUE(b);
  // Debian's busybox package is dynamic, busybox-static is not; which one is installed is
  // the host's choice. The static reading is what this asserts.
  if (b->has_interp) GTEST_SKIP() << "/bin/busybox is the dynamically linked busybox, not busybox-static";
  EXPECT_TRUE(b->is_64);
}

TEST(NvidiaElf, ReadsTheForwardCompatNote) {
  const std::string& f = test::gpu_fixture();
  UniqueFd with = open_ro(f + "/images/compat-note/usr/local/cuda/compat/libcuda.so.570.86.10");
  ASSERT_TRUE(with);
  auto note = read_elf_note(with.get(), ".note.cuda.fwd_compatibility", "NVIDIA Corporation");
  ASSERT_TRUE(note) << note.error().message();
  ASSERT_TRUE(note->has_value());
  EXPECT_EQ(**note, R"({"format":1,"CUDA version":"12.8","driver":[535,550,560,565]})");
  auto other_owner = read_elf_note(with.get(), ".note.cuda.fwd_compatibility", "GNU");
  ASSERT_TRUE(other_owner);
  EXPECT_FALSE(other_owner->has_value());
  UniqueFd without = open_ro(f + "/images/compat-plain/usr/local/cuda/compat/libcuda.so.560.35.03");
  auto none = read_elf_note(without.get(), ".note.cuda.fwd_compatibility", "NVIDIA Corporation");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
}

TEST(NvidiaElf, HostileFiles) {
  std::string dir = test::temp_dir("berth-elf");
  std::ofstream(dir + "/text") << "#!/bin/sh\necho hi\n";
  std::ofstream(dir + "/short") << "\x7f" "ELF\x02\x01";
  std::string bad = dir + "/badsh";
  {
    // A real header whose section table points far past the end of the file.
    std::ifstream in("/bin/true", std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), {});
    uint64_t off = 1ull << 40;
    data.replace(0x28, 8, reinterpret_cast<const char*>(&off), 8);
    std::ofstream(bad, std::ios::binary) << data;
  }
  EXPECT_FALSE(read_elf_info(open_ro(dir + "/text").get()));
  EXPECT_FALSE(read_elf_info(open_ro(dir + "/short").get()));
  EXPECT_FALSE(read_elf_note(open_ro(bad).get(), ".note.cuda.fwd_compatibility", "NVIDIA Corporation"));
}

}  // namespace
}  // namespace berth::devices::nvidia
