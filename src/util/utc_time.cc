// UTC date arithmetic and RFC3339Nano formatting (see utc_time.h).
#include "util/utc_time.h"

#include <cstdio>

namespace berth::utc {

// Days to a civil date in eras of 400 years (146097 days), each starting on 1 March so
// that the leap day ends the year: the well-known day-count inversion.
Date civil_from_days(int64_t days) {
  const int64_t z = days + 719468;  // days since 0000-03-01
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;                                   // [0, 146096]
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);            // [0, 365]
  const int64_t mp = (5 * doy + 2) / 153;                                 // [0, 11], March first
  Date d;
  d.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  d.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  d.year = yoe + era * 400 + (d.month <= 2 ? 1 : 0);
  return d;
}

std::string rfc3339_nano(const struct timespec& ts) {
  int64_t secs = ts.tv_sec;
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  const Date d = civil_from_days(days);
  char buf[80];
  int n = std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02d", static_cast<long long>(d.year), d.month,
                        d.day, static_cast<int>(rem / 3600), static_cast<int>(rem / 60 % 60),
                        static_cast<int>(rem % 60));
  std::string out(buf, n > 0 ? static_cast<size_t>(n) : 0);
  if (ts.tv_nsec > 0 && ts.tv_nsec < 1000000000) {
    std::string f(10, '0');
    f[0] = '.';
    for (long v = ts.tv_nsec, i = 9; i >= 1; --i, v /= 10) f[static_cast<size_t>(i)] = static_cast<char>('0' + v % 10);
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "Z";
}

}  // namespace berth::utc
