// linux.namespaces (see namespaces.h).
#include "linux/namespaces.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>

#include <algorithm>

namespace berth::linux {
namespace {

struct NsInfo {
  const char* type;
  const char* proc;
  int flag;
  int join_rank;  // user first; mount last so the other paths resolve on the host
};

const NsInfo kNs[] = {
    {"user", "user", CLONE_NEWUSER, 0},   {"ipc", "ipc", CLONE_NEWIPC, 1},
    {"uts", "uts", CLONE_NEWUTS, 2},      {"network", "net", CLONE_NEWNET, 3},
    {"pid", "pid", CLONE_NEWPID, 4},      {"cgroup", "cgroup", CLONE_NEWCGROUP, 5},
    {"time", "time", CLONE_NEWTIME, 6},   {"mount", "mnt", CLONE_NEWNS, 7},
};

const NsInfo* find(const std::string& type) {
  for (const auto& n : kNs)
    if (type == n.type) return &n;
  return nullptr;
}

}  // namespace

int ns_flag(const std::string& type) {
  const NsInfo* n = find(type);
  return n ? n->flag : 0;
}

const char* ns_proc_name(const std::string& type) {
  const NsInfo* n = find(type);
  return n ? n->proc : "";
}

bool NamespacePlan::has(int flag) const {
  if (new_flags & flag) return true;
  return std::any_of(joins.begin(), joins.end(), [&](const NsJoin& j) { return j.flag == flag; });
}

Result<NamespacePlan> plan_namespaces(const std::vector<spec::Namespace>& namespaces) {
  NamespacePlan plan;
  for (size_t i = 0; i < namespaces.size(); ++i) {
    const auto& ns = namespaces[i];
    const NsInfo* info = find(ns.type);
    std::string where = "linux.namespaces[" + std::to_string(i) + "]";
    if (!info) return Error::invalid_spec("config.json: " + where + ".type: unknown namespace " + ns.type);
    if (ns.path.empty()) {
      plan.new_flags |= info->flag;
      continue;
    }
    UniqueFd fd(::open(ns.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return Error::sys(errno, where + ".path: open " + ns.path);
    int type = ::ioctl(fd.get(), NS_GET_NSTYPE);
    if (type < 0 || type != info->flag)
      return Error::invalid_spec(where + ".path: " + ns.path + " is not a " + ns.type + " namespace");
    plan.joins.push_back(NsJoin{ns.type, info->flag, std::move(fd)});
  }
  std::stable_sort(plan.joins.begin(), plan.joins.end(), [](const NsJoin& a, const NsJoin& b) {
    return find(a.type)->join_rank < find(b.type)->join_rank;
  });
  return plan;
}

}  // namespace berth::linux
