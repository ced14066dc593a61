// libberth's operations on a running container's cgroup: pause, resume, ps, kill --all,
// events, update.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth {

Status pause_container(const std::string& root, const std::string& id);
Status resume_container(const std::string& root, const std::string& id);
Result<std::vector<pid_t>> container_pids(const std::string& root, const std::string& id);
Status kill_all(const std::string& root, const std::string& id, int sig);
// One `{"type":"stats","id":...,"data":{...}}` document.
Result<std::string> stats_event(const std::string& root, const std::string& id);
// Stats every interval and `{"type":"oom"}` events as they happen, until the container stops.
Status stream_events(const std::string& root, const std::string& id, int64_t interval_ns,
                     const std::function<void(const std::string&)>& emit);
// linux.resources through `update`: zero or absent values are unchanged (Docker sends zeros).
Status update_container(const std::string& root, const std::string& id, const spec::Resources& r);

}  // namespace berth
