// `run`: create + start, and in the foreground supervise the container (see run.cc).
#pragma once

#include "berth/container.h"

namespace berth {

struct RunOptions {
  bool detach = false;
  bool keep = false;
  bool no_subreaper = false;
};

Result<int> run_container(const CreateOptions& options, const RunOptions& run);

}  // namespace berth
