// linux.namespaces: type names ↔ CLONE_* flags, the order namespaces are joined in, and
// opening a namespace path checked to be of the right type (the runtime-spec requires an
// error otherwise).
#pragma once

#include <sched.h>

#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "util/unique_fd.h"

// The one fallback definition: glibc defines CLONE_NEWTIME only since 2.36 (Linux 5.6's
// flag); a file that names it includes this header rather than defining it again.
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

namespace berth::linux {

int ns_flag(const std::string& type);          // CLONE_NEWPID ... ; 0 if unknown
const char* ns_proc_name(const std::string& type);  // "pid", "net", "mnt", ...

struct NsJoin {
  std::string type;
  int flag = 0;
  UniqueFd fd;
};

struct NamespacePlan {
  int new_flags = 0;            // namespaces to create
  std::vector<NsJoin> joins;    // namespaces to join, in join order (user first)
  bool has(int flag) const;     // created or joined
  bool creates(int flag) const { return (new_flags & flag) != 0; }
  bool joins_any() const { return !joins.empty(); }
};

// Opens every path (O_RDONLY, checked with NS_GET_NSTYPE) and sorts the joins.
Result<NamespacePlan> plan_namespaces(const std::vector<spec::Namespace>& namespaces);

}  // namespace berth::linux
