// RecordingSys, the process engine's calls (see recording_sys.h): identity, prctl,
// capabilities, seccomp, process attributes, the end of a payload. None changes the model;
// each is one log line. execve "succeeds" by returning ok: the caller would be replaced.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

#include <cstdio>

#include "support/fakes/recording_sys.h"
#include "util/strings.h"

namespace berth::test {
namespace {

std::string prctl_name(int option) {
  switch (option) {
    case PR_SET_PDEATHSIG: return "PR_SET_PDEATHSIG";
    case PR_SET_DUMPABLE: return "PR_SET_DUMPABLE";
    case PR_SET_KEEPCAPS: return "PR_SET_KEEPCAPS";
    case PR_SET_NO_NEW_PRIVS: return "PR_SET_NO_NEW_PRIVS";
    case PR_SET_CHILD_SUBREAPER: return "PR_SET_CHILD_SUBREAPER";
    default: return std::to_string(option);
  }
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string list(char* const* v) {
  std::vector<std::string> parts;
  for (; v && *v; ++v) parts.push_back(std::string("\"") + *v + "\"");
  return "[" + str::join(parts, ", ") + "]";
}

std::string last_text(unsigned last) { return last == ~0U ? "~0" : std::to_string(last); }

}  // namespace

Status RecordingSys::set_groups(const std::vector<gid_t>& groups) {
  int err = begin("set_groups");
  std::vector<std::string> ids;
  for (gid_t g : groups) ids.push_back(std::to_string(g));
  return finish("set_groups([" + str::join(ids, ", ") + "])", err);
}

Status RecordingSys::setsid() { return finish("setsid()", begin("setsid")); }

Status RecordingSys::prctl(int option, unsigned long arg2) {
  int err = begin("prctl");
  return finish("prctl(" + prctl_name(option) + ", " + std::to_string(arg2) + ")", err);
}

Status RecordingSys::drop_bounding_caps(uint64_t keep) {
  int err = begin("drop_bounding_caps");
  return finish("drop_bounding_caps(keep " + hex(keep) + ")", err);
}

Status RecordingSys::capset(const linux::CapSets& c) {
  int err = begin("capset");
  return finish("capset(effective " + hex(c.effective) + ", permitted " + hex(c.permitted) + ", inheritable " +
                    hex(c.inheritable) + ")",
                err);
}

Status RecordingSys::set_ambient_caps(uint64_t ambient) {
  int err = begin("set_ambient_caps");
  return finish("set_ambient_caps(" + hex(ambient) + ")", err);
}

Result<UniqueFd> RecordingSys::seccomp_set_filter(std::string_view program, unsigned flags) {
  int err = begin("seccomp_set_filter");
  std::string line = "seccomp_set_filter(" + std::to_string(program.size() / sizeof(sock_filter)) + " insns, " +
                     hex(flags) + ")";
  if (!err && !(flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)) {
    log_.push_back(line);
    return UniqueFd();
  }
  if (!err && listener_) {
    log_.push_back(line + " = listener");
    return std::move(listener_);
  }
  return new_fd(line, err, "/[seccomp listener]");
}

Status RecordingSys::set_rlimits(const std::vector<spec::Rlimit>& rlimits) {
  int err = begin("set_rlimits");
  std::vector<std::string> parts;
  for (const auto& r : rlimits) parts.push_back(r.type + "=" + std::to_string(r.soft) + ":" + std::to_string(r.hard));
  return finish("set_rlimits([" + str::join(parts, ", ") + "])", err);
}

Status RecordingSys::set_oom_score_adj(int64_t value) {
  int err = begin("set_oom_score_adj");
  return finish("set_oom_score_adj(" + std::to_string(value) + ")", err);
}

Status RecordingSys::join_session_keyring(const std::string& container_id) {
  int err = begin("join_session_keyring");
  return finish("join_session_keyring(" + q(container_id) + ")", err);
}

Status RecordingSys::set_scheduler(const spec::Scheduler& s) {
  int err = begin("set_scheduler");
  return finish("set_scheduler(" + s.policy + ", nice " + std::to_string(s.nice) + ")", err);
}

Status RecordingSys::set_io_priority(const spec::IoPriority& p) {
  int err = begin("set_io_priority");
  return finish("set_io_priority(" + p.klass + ", " + std::to_string(p.priority) + ")", err);
}

Status RecordingSys::set_personality(const spec::Personality& p) {
  int err = begin("set_personality");
  return finish("set_personality(" + p.domain + ")", err);
}

Status RecordingSys::set_memory_policy(const spec::MemoryPolicy& m) {
  int err = begin("set_memory_policy");
  return finish("set_memory_policy(" + m.mode + ", " + q(m.nodes) + ")", err);
}

Status RecordingSys::set_controlling_tty(int peer_fd) {
  int err = begin("set_controlling_tty");
  return finish("set_controlling_tty(" + show_fd(peer_fd) + ")", err);
}

Status RecordingSys::close_range(unsigned first, unsigned last) {
  int err = begin("close_range");
  return finish("close_range(" + std::to_string(first) + ", " + last_text(last) + ")", err);
}

Status RecordingSys::clear_cloexec(int fd) {
  int err = begin("clear_cloexec");
  return finish("clear_cloexec(" + show_fd(fd) + ")", err);
}

Status RecordingSys::dup_onto(int from, int to) {
  int err = begin("dup_onto");
  return finish("dup_onto(" + show_fd(from) + ", " + std::to_string(to) + ")", err);
}

Status RecordingSys::execve(const char* path, char* const* argv, char* const* envp) {
  int err = begin("execve");
  return finish("execve(" + q(path) + ", " + list(argv) + ", " + list(envp) + ")", err);
}

// "set_affinity(0, [0, 2])": the CPUs in the set.
Status RecordingSys::set_affinity(pid_t pid, const cpu_set_t& cpus) {
  int err = begin("set_affinity");
  std::string list;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &cpus)) list += (list.empty() ? "" : ", ") + std::to_string(cpu);
  return finish("set_affinity(" + std::to_string(pid) + ", [" + list + "])", err);
}

Status RecordingSys::pidfd_kill(int pidfd) {
  int err = begin("pidfd_kill");
  return finish("pidfd_kill(" + show_fd(pidfd) + ")", err);
}

}  // namespace berth::test
