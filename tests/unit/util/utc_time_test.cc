// util/utc_time: the civil date and RFC3339Nano string agree with glibc's gmtime_r.
#include "util/utc_time.h"

#include <gtest/gtest.h>
#include <time.h>

#include <cstdio>
#include <string>

namespace berth::utc {
namespace {

// What the formatting did before: gmtime_r + strftime, the fraction as Go trims it.
std::string reference(const struct timespec& ts) {
  struct tm tm;
  time_t t = ts.tv_sec;
  gmtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out = buf;
  if (ts.tv_nsec) {
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%09ld", ts.tv_nsec);
    std::string f = frac;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "Z";
}

TEST(UtcTime, KnownInstants) {
  EXPECT_EQ(rfc3339_nano({0, 0}), "1970-01-01T00:00:00Z");
  EXPECT_EQ(rfc3339_nano({951782400, 0}), "2000-02-29T00:00:00Z");  // a 400-year leap day
  EXPECT_EQ(rfc3339_nano({1796553377, 654221710}), "2026-12-06T10:36:17.65422171Z");
  EXPECT_EQ(rfc3339_nano({1796553377, 1}), "2026-12-06T10:36:17.000000001Z");
  EXPECT_EQ(rfc3339_nano({-1, 500000000}), "1969-12-31T23:59:59.5Z");
  EXPECT_EQ(rfc3339_nano({4107542399, 0}), "2100-02-28T23:59:59Z");  // 2100: no leap day
  EXPECT_EQ(rfc3339_nano({4107542400, 0}), "2100-03-01T00:00:00Z");
}

TEST(UtcTime, CivilFromDaysAroundTheEpoch) {
  Date d = civil_from_days(0);
  EXPECT_EQ(d.year, 1970);
  EXPECT_EQ(d.month, 1);
  EXPECT_EQ(d.day, 1);
  d = civil_from_days(-1);
  EXPECT_EQ(d.year, 1969);
  EXPECT_EQ(d.month, 12);
  EXPECT_EQ(d.day, 31);
}

// Every day from 1900 to 2200 at a few times of day, and odd seconds over a wider span.
TEST(UtcTime, MatchesGmtimeEverywhere) {
  int checked = 0;
  for (int64_t day = -25567; day <= 84006; ++day) {
    for (int64_t sec : {0L, 1L, 43199L, 86399L}) {
      struct timespec ts = {static_cast<time_t>(day * 86400 + sec), day % 7 == 0 ? 0L : 123456000L};
      ASSERT_EQ(rfc3339_nano(ts), reference(ts)) << "at " << ts.tv_sec;
      ++checked;
    }
  }
  // from the year 1000: strftime writes earlier years without four digits, Go and we with
  for (int64_t t = -30610224000; t < 253402300799; t += 9999991) {  // years 1000 to 9999
    struct timespec ts = {static_cast<time_t>(t), 999999999};
    ASSERT_EQ(rfc3339_nano(ts), reference(ts)) << "at " << t;
    ++checked;
  }
  EXPECT_GT(checked, 400000);
}

}  // namespace
}  // namespace berth::utc
