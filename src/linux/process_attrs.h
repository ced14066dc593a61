// Per-process attributes applied in the container init (or an exec tenant) before execve:
// process.oomScoreAdj, process.scheduler, process.ioPriority, linux.personality,
// linux.memoryPolicy, and the session keyring (unless --no-new-keyring).
#pragma once

#include <sched.h>

#include <string>

#include "berth/result.h"
#include "berth/spec.h"

namespace berth::linux {

Status set_oom_score_adj(int64_t value);
Status set_scheduler(const spec::Scheduler& s);
Status set_io_priority(const spec::IoPriority& p);
Status set_personality(const spec::Personality& p);
Status set_memory_policy(const spec::MemoryPolicy& m);
// Joins a new session keyring named after the container ("_ses.<id>", as runc), made
// searchable by the user. Hosts without keyrings (ENOSYS) or with restricted ones (EACCES,
// EPERM) are skipped, as runc does.
Status join_session_keyring(const std::string& id);
// Parses "0-3,7" cpu lists (execCPUAffinity) into a mask; false on syntax errors.
bool parse_cpu_list(const std::string& list, cpu_set_t* set);

}  // namespace berth::linux
