// The spec's closed vocabularies (namespace types, rlimits, seccomp actions, ...), shared by
// validation (refuse unknown values, naming the property) and `features` (list what works).
#pragma once

#include <string_view>
#include <vector>

namespace berth::spec::names {

using List = std::vector<std::string_view>;

const List& namespaces();          // pid network mount ipc uts user cgroup time
const List& rlimits();             // RLIMIT_AS ... RLIMIT_STACK
const List& capabilities();        // CAP_CHOWN ... CAP_CHECKPOINT_RESTORE (kernel order)
const List& seccomp_actions();     // SCMP_ACT_*
const List& seccomp_operators();   // SCMP_CMP_*
const List& seccomp_archs();       // SCMP_ARCH_*
const List& seccomp_flags();       // SECCOMP_FILTER_FLAG_*
const List& scheduler_policies();  // SCHED_*
const List& scheduler_flags();     // SCHED_FLAG_*
const List& ioprio_classes();      // IOPRIO_CLASS_*
const List& personality_domains(); // LINUX LINUX32
const List& mempolicy_modes();     // MPOL_*
const List& mempolicy_flags();     // MPOL_F_*
const List& propagations();        // rootfsPropagation values
const List& time_clocks();         // timeOffsets keys
const List& hooks();               // hook kinds

bool contains(const List& list, std::string_view name);

}  // namespace berth::spec::names
