// The CUDA forward-compatibility rule (ELF note first, driver major otherwise).
#include "devices/nvidia/compat.h"

#include <gtest/gtest.h>

namespace berth::devices::nvidia {
namespace {

const std::string kNote = R"({"format":1,"CUDA version":"12.8","driver":[535,550,560,565]})";

TEST(NvidiaCompat, NoteListsTheBranchAndIsNewer) {
  auto d = decide_compat("550.54.15", "12.4", "570.86.10", kNote);
  EXPECT_TRUE(d.use) << d.reason;
  EXPECT_FALSE(decide_compat("570.10.01", "12.8", "570.86.10", kNote).use) << "branch 570 not listed";
  EXPECT_FALSE(decide_compat("550.54.15", "12.8", "570.86.10", kNote).use) << "not newer than the host's CUDA";
  EXPECT_TRUE(decide_compat("550.54.15", "", "570.86.10", kNote).use) << "host CUDA unknown: the branch decides";
  EXPECT_FALSE(decide_compat("550.54.15", "12.4", "570.86.10", std::string("{not json")).use);
}

TEST(NvidiaCompat, WithoutNoteOnlyANewerMajor) {
  EXPECT_TRUE(decide_compat("550.54.15", "12.4", "560.35.03", std::nullopt).use);
  EXPECT_FALSE(decide_compat("550.54.15", "12.4", "550.90.07", std::nullopt).use) << "same major";
  EXPECT_FALSE(decide_compat("550.54.15", "12.4", "535.104.05", std::nullopt).use);
}

TEST(NvidiaCompat, NoteParsing) {
  auto n = parse_compat_note(R"({"format":1,"CUDA version":"12.9","driver":[535,"550.54"]})");
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_EQ(n->cuda_version, "12.9");
  EXPECT_EQ(n->driver_branches, (std::vector<unsigned>{535, 550}));
  EXPECT_FALSE(parse_compat_note(R"({"format":1})"));
  EXPECT_FALSE(parse_compat_note("[]"));
}

}  // namespace
}  // namespace berth::devices::nvidia
