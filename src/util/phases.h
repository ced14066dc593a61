// Phase timing for --debug: "create: cgroups +0.412 ms". Where the time of a call goes is
// measured this way for docs/performance.md; nothing is read or printed without --debug.
#pragma once

#include <time.h>

#include <string>

#include "util/log.h"

namespace berth {

class Phases {
 public:
  explicit Phases(const char* op) : op_(op), on_(log::debug_enabled()) {
    if (on_) clock_gettime(CLOCK_MONOTONIC, &last_);
  }
  void mark(const char* phase) {
    if (!on_) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double ms = static_cast<double>(now.tv_sec - last_.tv_sec) * 1e3 +
                static_cast<double>(now.tv_nsec - last_.tv_nsec) / 1e6;
    last_ = now;
    char buf[32];
    snprintf(buf, sizeof buf, "%.3f", ms);
    log::debug(std::string(op_) + ": " + phase + " +" + buf + " ms");
  }

 private:
  const char* op_;
  bool on_;
  struct timespec last_ {};
};

}  // namespace berth
