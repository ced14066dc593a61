// A fake systemd Manager for unit tests: each call logged ("start x.scope", "wait 1
// 30000", ...), StartTransientUnit's properties kept, the job's end and failures chosen.
#pragma once

#include <cerrno>
#include <functional>
#include <string>
#include <vector>

#include "cgroups/systemd/bus.h"

namespace berth::cgroups::testing {

class FakeBus : public systemd::Bus {
 public:
  Result<std::string> start_transient_unit(const std::string& name, const std::vector<systemd::Property>& props) override {
    log.push_back("start " + name);
    if (exists_times > 0) {
      --exists_times;
      return Error::sys(EEXIST, "Unit " + name + " already exists.");
    }
    started = props;
    if (on_start) on_start();
    return "/org/freedesktop/systemd1/job/" + std::to_string(++jobs);
  }
  Result<std::string> stop_unit(const std::string& name) override {
    log.push_back("stop " + name);
    if (on_stop) on_stop();
    if (unknown_unit) return Error::sys(ENOENT, "Unit " + name + " not loaded.");
    return "/org/freedesktop/systemd1/job/" + std::to_string(++jobs);
  }
  Result<std::string> wait_job(const std::string& job, int timeout_ms) override {
    log.push_back("wait " + job.substr(job.rfind('/') + 1) + " " + std::to_string(timeout_ms));
    if (on_wait) on_wait();
    if (job_timeout) return Error::sys(ETIMEDOUT, "systemd did not finish job " + job);
    return job_result;
  }
  Status set_unit_properties(const std::string& name, const std::vector<systemd::Property>& props) override {
    log.push_back("set " + name);
    set = props;
    return ok();
  }
  Status reset_failed_unit(const std::string& name) override {
    log.push_back("reset-failed " + name);
    return ok();
  }
  Result<std::string> version() override {
    log.push_back("version");
    return version_text;
  }
  Result<std::string> control_group() override { return std::string("/"); }

  std::vector<std::string> log;
  std::vector<systemd::Property> started, set;
  int exists_times = 0;
  int jobs = 0;
  std::string job_result = "done";
  std::string version_text = "252.39-1~deb12u2";
  bool job_timeout = false;
  bool unknown_unit = false;
  std::function<void()> on_start, on_stop, on_wait;  // on_wait: the job runs
};

}  // namespace berth::cgroups::testing
