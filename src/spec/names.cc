// The spec's closed vocabularies (see names.h).
#include "spec/names.h"

#include <algorithm>

namespace berth::spec::names {

const List& namespaces() {
  static const List k = {"pid", "network", "mount", "ipc", "uts", "user", "cgroup", "time"};
  return k;
}

const List& rlimits() {
  static const List k = {"RLIMIT_AS",     "RLIMIT_CORE",    "RLIMIT_CPU",        "RLIMIT_DATA",
                         "RLIMIT_FSIZE",  "RLIMIT_LOCKS",   "RLIMIT_MEMLOCK",    "RLIMIT_MSGQUEUE",
                         "RLIMIT_NICE",   "RLIMIT_NOFILE",  "RLIMIT_NPROC",      "RLIMIT_RSS",
                         "RLIMIT_RTPRIO", "RLIMIT_RTTIME",  "RLIMIT_SIGPENDING", "RLIMIT_STACK"};
  return k;
}

const List& capabilities() {
  // Index = capability number.
  static const List k = {
      "CAP_CHOWN",          "CAP_DAC_OVERRIDE",   "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
      "CAP_FSETID",         "CAP_KILL",           "CAP_SETGID",          "CAP_SETUID",
      "CAP_SETPCAP",        "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
      "CAP_NET_ADMIN",      "CAP_NET_RAW",        "CAP_IPC_LOCK",        "CAP_IPC_OWNER",
      "CAP_SYS_MODULE",     "CAP_SYS_RAWIO",      "CAP_SYS_CHROOT",      "CAP_SYS_PTRACE",
      "CAP_SYS_PACCT",      "CAP_SYS_ADMIN",      "CAP_SYS_BOOT",        "CAP_SYS_NICE",
      "CAP_SYS_RESOURCE",   "CAP_SYS_TIME",       "CAP_SYS_TTY_CONFIG",  "CAP_MKNOD",
      "CAP_LEASE",          "CAP_AUDIT_WRITE",    "CAP_AUDIT_CONTROL",   "CAP_SETFCAP",
      "CAP_MAC_OVERRIDE",   "CAP_MAC_ADMIN",      "CAP_SYSLOG",          "CAP_WAKE_ALARM",
      "CAP_BLOCK_SUSPEND",  "CAP_AUDIT_READ",     "CAP_PERFMON",         "CAP_BPF",
      "CAP_CHECKPOINT_RESTORE"};
  return k;
}

const List& seccomp_actions() {
  static const List k = {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO",        "SCMP_ACT_KILL",
                         "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG",
                         "SCMP_ACT_NOTIFY", "SCMP_ACT_TRACE",       "SCMP_ACT_TRAP"};
  return k;
}

const List& seccomp_operators() {
  static const List k = {"SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE",
                         "SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE"};
  return k;
}

const List& seccomp_archs() {
  static const List k = {"SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM",        "SCMP_ARCH_MIPS",
                         "SCMP_ARCH_MIPS64",  "SCMP_ARCH_MIPS64N32",  "SCMP_ARCH_MIPSEL",
                         "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
                         "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",    "SCMP_ARCH_RISCV64",
                         "SCMP_ARCH_S390",    "SCMP_ARCH_S390X",      "SCMP_ARCH_X32",
                         "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",     "SCMP_ARCH_PARISC",
                         "SCMP_ARCH_PARISC64"};
  return k;
}

const List& seccomp_flags() {
  static const List k = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
                         "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"};
  return k;
}

const List& scheduler_policies() {
  static const List k = {"SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH",
                         "SCHED_ISO",   "SCHED_IDLE", "SCHED_DEADLINE"};
  return k;
}

const List& scheduler_flags() {
  static const List k = {"SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_RECLAIM",
                         "SCHED_FLAG_DL_OVERRUN",    "SCHED_FLAG_KEEP_POLICY",
                         "SCHED_FLAG_KEEP_PARAMS",   "SCHED_FLAG_UTIL_CLAMP_MIN",
                         "SCHED_FLAG_UTIL_CLAMP_MAX"};
  return k;
}

const List& ioprio_classes() {
  static const List k = {"IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE", "IOPRIO_CLASS_IDLE"};
  return k;
}

const List& personality_domains() {
  static const List k = {"LINUX", "LINUX32"};
  return k;
}

const List& mempolicy_modes() {
  static const List k = {"MPOL_DEFAULT", "MPOL_PREFERRED", "MPOL_BIND", "MPOL_INTERLEAVE",
                         "MPOL_LOCAL", "MPOL_PREFERRED_MANY", "MPOL_WEIGHTED_INTERLEAVE"};
  return k;
}

const List& mempolicy_flags() {
  static const List k = {"MPOL_F_NUMA_BALANCING", "MPOL_F_RELATIVE_NODES", "MPOL_F_STATIC_NODES"};
  return k;
}

const List& propagations() {
  static const List k = {"private", "rprivate", "shared", "rshared", "slave", "rslave",
                         "unbindable", "runbindable"};
  return k;
}

const List& time_clocks() {
  static const List k = {"monotonic", "boottime"};
  return k;
}

const List& hooks() {
  static const List k = {"prestart", "createRuntime", "createContainer", "startContainer",
                         "poststart", "poststop"};
  return k;
}

bool contains(const List& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace berth::spec::names
