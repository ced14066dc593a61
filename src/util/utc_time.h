// UTC timestamps without glibc's time zone machinery: Go's RFC3339Nano for state.json's
// "created". gmtime_r itself needs no zone, but glibc's first call of it in a process
// reads and parses /etc/localtime (tzset), which every create paid for nothing.
#pragma once

#include <time.h>

#include <cstdint>
#include <string>

namespace berth::utc {

struct Date {
  int64_t year;
  int month;  // 1-12
  int day;    // 1-31
};

// The proleptic Gregorian date of a day counted from 1970-01-01 (negative: before).
Date civil_from_days(int64_t days);

// "2026-12-06T10:41:28.123456789Z": UTC, fractional seconds without trailing zeros (none
// at all on a whole second), as Go's time.RFC3339Nano formats it.
std::string rfc3339_nano(const struct timespec& ts);

}  // namespace berth::utc
