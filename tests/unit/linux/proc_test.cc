// parse_proc_stat: the fields `state` and the liveness checks rely on (state, ppid, start time).
#include <gtest/gtest.h>

#include <string>

#include "linux/proc.h"

namespace berth::linux {
namespace {

constexpr const char* kTail =
    " 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 2000000 200 18446744073709551615\n";

TEST(ProcStat, ReadsStateParentAndStartTime) {
  auto st = parse_proc_stat(std::string("1234 (sh) S") + kTail);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 1);
  EXPECT_EQ(st->start_time, 98765u);
}

TEST(ProcStat, CommandNameMayHoldSpacesAndParentheses) {
  auto st = parse_proc_stat(std::string("42 (a) Z (b)) Z") + kTail);
  ASSERT_TRUE(st) << st.error().message();
  EXPECT_EQ(st->state, 'Z');
  EXPECT_EQ(st->start_time, 98765u);
}

TEST(ProcStat, RefusesWhatTheKernelNeverWrites) {
  EXPECT_FALSE(parse_proc_stat("1234 (sh) S 1 2 3"));                       // too few fields
  EXPECT_FALSE(parse_proc_stat("1234 sh S 1"));                             // no comm
  EXPECT_FALSE(parse_proc_stat(std::string("1234 (sh) ") + '\0' + kTail));  // state not a letter (fuzz_host_text)
  EXPECT_FALSE(parse_proc_stat(std::string("1234 (sh) SS") + kTail));
  EXPECT_FALSE(parse_proc_stat(std::string("1234 (sh) S x") + std::string(kTail).substr(2)));  // ppid not a number
}

}  // namespace
}  // namespace berth::linux
