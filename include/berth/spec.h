// The OCI runtime-spec v1.3.0 configuration model (Linux and common fields): config.json,
// and the parts reused by `exec --process` (Process) and `update --resources` (Resources).
// Names follow the JSON properties; src/spec/schema.h lists every property once, for both
// parsing and serializing. Optional properties are std::optional; absent arrays are empty.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "berth/result.h"

namespace berth::spec {

struct IdMapping {
  uint32_t container_id = 0;  // containerID
  uint32_t host_id = 0;       // hostID
  uint32_t size = 0;          // size
  bool operator==(const IdMapping&) const = default;
};

struct Box {
  uint32_t height = 0;
  uint32_t width = 0;
  bool operator==(const Box&) const = default;
};

struct User {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::optional<uint32_t> umask;
  std::vector<uint32_t> additional_gids;  // additionalGids
  std::string username;                   // windows only; kept for round trips
  bool operator==(const User&) const = default;
};

struct Capabilities {
  std::vector<std::string> bounding, effective, inheritable, permitted, ambient;
  bool operator==(const Capabilities&) const = default;
};

struct Rlimit {
  std::string type;  // RLIMIT_NOFILE ...
  uint64_t hard = 0;
  uint64_t soft = 0;
  bool operator==(const Rlimit&) const = default;
};

struct Scheduler {
  std::string policy;  // SCHED_OTHER ...
  int32_t nice = 0;
  int32_t priority = 0;
  std::vector<std::string> flags;
  uint64_t runtime = 0, deadline = 0, period = 0;
  bool operator==(const Scheduler&) const = default;
};

struct IoPriority {
  std::string klass;  // class: IOPRIO_CLASS_RT | _BE | _IDLE
  int32_t priority = 0;
  bool operator==(const IoPriority&) const = default;
};

struct CpuAffinity {
  std::string initial;  // cpu list applied before joining the container's cgroup
  std::string final;    // cpu list applied after
  bool operator==(const CpuAffinity&) const = default;
};

struct Process {
  bool terminal = false;
  std::optional<Box> console_size;  // consoleSize
  User user;
  std::vector<std::string> args;
  std::string command_line;  // commandLine (windows only; kept)
  std::vector<std::string> env;
  std::string cwd;
  std::optional<Capabilities> capabilities;
  std::vector<Rlimit> rlimits;
  bool no_new_privileges = false;  // noNewPrivileges
  std::string apparmor_profile;    // apparmorProfile
  std::optional<int64_t> oom_score_adj;  // oomScoreAdj
  std::optional<Scheduler> scheduler;
  std::string selinux_label;  // selinuxLabel
  std::optional<IoPriority> io_priority;          // ioPriority
  std::optional<CpuAffinity> exec_cpu_affinity;   // execCPUAffinity
  bool operator==(const Process&) const = default;
};

struct Root {
  std::string path;
  bool readonly = false;
  bool operator==(const Root&) const = default;
};

struct Mount {
  std::string destination;
  std::string type;
  std::string source;
  std::vector<std::string> options;
  std::vector<IdMapping> uid_mappings;  // uidMappings
  std::vector<IdMapping> gid_mappings;  // gidMappings
  bool operator==(const Mount&) const = default;
};

struct Hook {
  std::string path;
  std::vector<std::string> args;
  // Absent: the environment of whoever runs the hook, as in runc (Go's exec with a nil
  // Env): the runtime's own for the runtime's hooks, the process's for startContainer;
  // createContainer gets none (CVE-2025-23266). Present, even empty: exactly this.
  std::optional<std::vector<std::string>> env;
  std::optional<int64_t> timeout;  // seconds
  bool operator==(const Hook&) const = default;
};

struct Hooks {
  std::vector<Hook> prestart;          // deprecated, still run
  std::vector<Hook> create_runtime;    // createRuntime
  std::vector<Hook> create_container;  // createContainer
  std::vector<Hook> start_container;   // startContainer
  std::vector<Hook> poststart;
  std::vector<Hook> poststop;
  bool operator==(const Hooks&) const = default;
};

struct Namespace {
  std::string type;  // pid network mount ipc uts user cgroup time
  std::string path;
  bool operator==(const Namespace&) const = default;
};

struct TimeOffset {
  int64_t secs = 0;
  uint32_t nanosecs = 0;
  bool operator==(const TimeOffset&) const = default;
};

struct Device {
  std::string path;
  std::string type;  // c b u p
  int64_t major = 0;
  int64_t minor = 0;
  std::optional<uint32_t> file_mode;  // fileMode
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  bool operator==(const Device&) const = default;
};

struct DeviceRule {  // linux.resources.devices[]
  bool allow = false;
  std::string type;  // a c b; empty = a
  std::optional<int64_t> major;
  std::optional<int64_t> minor;
  std::string access;  // rwm
  bool operator==(const DeviceRule&) const = default;
};

struct Memory {
  std::optional<int64_t> limit, reservation, swap, kernel, kernel_tcp;  // kernelTCP
  std::optional<uint64_t> swappiness;
  std::optional<bool> disable_oom_killer;   // disableOOMKiller
  std::optional<bool> use_hierarchy;        // useHierarchy
  std::optional<bool> check_before_update;  // checkBeforeUpdate
  bool operator==(const Memory&) const = default;
};

struct Cpu {
  std::optional<uint64_t> shares;
  std::optional<int64_t> quota;
  std::optional<uint64_t> burst;
  std::optional<uint64_t> period;
  std::optional<int64_t> realtime_runtime;   // realtimeRuntime
  std::optional<uint64_t> realtime_period;   // realtimePeriod
  std::string cpus;
  std::string mems;
  std::optional<int64_t> idle;
  bool operator==(const Cpu&) const = default;
};

struct Pids {
  int64_t limit = 0;
  bool operator==(const Pids&) const = default;
};

struct WeightDevice {
  int64_t major = 0, minor = 0;
  std::optional<uint16_t> weight;
  std::optional<uint16_t> leaf_weight;  // leafWeight
  bool operator==(const WeightDevice&) const = default;
};

struct ThrottleDevice {
  int64_t major = 0, minor = 0;
  uint64_t rate = 0;
  bool operator==(const ThrottleDevice&) const = default;
};

struct BlockIo {
  std::optional<uint16_t> weight;
  std::optional<uint16_t> leaf_weight;  // leafWeight
  std::vector<WeightDevice> weight_device;                 // weightDevice
  std::vector<ThrottleDevice> throttle_read_bps_device;    // throttleReadBpsDevice
  std::vector<ThrottleDevice> throttle_write_bps_device;   // throttleWriteBpsDevice
  std::vector<ThrottleDevice> throttle_read_iops_device;   // throttleReadIOPSDevice
  std::vector<ThrottleDevice> throttle_write_iops_device;  // throttleWriteIOPSDevice
  bool operator==(const BlockIo&) const = default;
};

struct HugepageLimit {
  std::string page_size;  // pageSize
  uint64_t limit = 0;
  bool operator==(const HugepageLimit&) const = default;
};

struct InterfacePriority {
  std::string name;
  uint32_t priority = 0;
  bool operator==(const InterfacePriority&) const = default;
};

struct Network {
  std::optional<uint32_t> class_id;  // classID
  std::vector<InterfacePriority> priorities;
  bool operator==(const Network&) const = default;
};

struct Rdma {
  std::optional<uint32_t> hca_handles;  // hcaHandles
  std::optional<uint32_t> hca_objects;  // hcaObjects
  bool operator==(const Rdma&) const = default;
};

struct Resources {
  std::vector<DeviceRule> devices;
  std::optional<Memory> memory;
  std::optional<Cpu> cpu;
  std::optional<Pids> pids;
  std::optional<BlockIo> block_io;  // blockIO
  std::vector<HugepageLimit> hugepage_limits;  // hugepageLimits
  std::optional<Network> network;
  std::map<std::string, Rdma> rdma;
  std::map<std::string, std::string> unified;
  bool operator==(const Resources&) const = default;
};

struct SeccompArg {
  uint32_t index = 0;
  uint64_t value = 0;
  uint64_t value_two = 0;  // valueTwo
  std::string op;          // SCMP_CMP_*
  bool operator==(const SeccompArg&) const = default;
};

struct Syscall {
  std::vector<std::string> names;
  std::string action;
  std::optional<uint32_t> errno_ret;  // errnoRet
  std::vector<SeccompArg> args;
  bool operator==(const Syscall&) const = default;
};

struct Seccomp {
  std::string default_action;               // defaultAction
  std::optional<uint32_t> default_errno_ret;  // defaultErrnoRet
  std::vector<std::string> architectures;
  std::vector<std::string> flags;
  std::string listener_path;      // listenerPath
  std::string listener_metadata;  // listenerMetadata
  std::vector<Syscall> syscalls;
  bool operator==(const Seccomp&) const = default;
};

struct IntelRdt {
  std::string clos_id;  // closID
  std::vector<std::string> schemata;  // one resctrl schemata line each (1.3)
  std::string l3_cache_schema;        // l3CacheSchema
  std::string mem_bw_schema;          // memBwSchema
  bool enable_monitoring = false;     // enableMonitoring (1.3)
  bool enable_cmt = false;            // enableCMT (before 1.3)
  bool enable_mbm = false;            // enableMBM (before 1.3)
  bool operator==(const IntelRdt&) const = default;
};

struct Personality {
  std::string domain;  // LINUX | LINUX32
  std::vector<std::string> flags;
  bool operator==(const Personality&) const = default;
};

struct MemoryPolicy {
  std::string mode;  // MPOL_*
  std::string nodes;
  std::vector<std::string> flags;  // MPOL_F_*
  bool operator==(const MemoryPolicy&) const = default;
};

struct NetDevice {
  std::string name;  // name inside the container; empty keeps the host name
  bool operator==(const NetDevice&) const = default;
};

struct Linux {
  std::vector<IdMapping> uid_mappings;  // uidMappings
  std::vector<IdMapping> gid_mappings;  // gidMappings
  std::map<std::string, std::string> sysctl;
  std::optional<Resources> resources;
  std::string cgroups_path;  // cgroupsPath
  std::vector<Namespace> namespaces;
  std::vector<Device> devices;
  std::optional<Seccomp> seccomp;
  std::string rootfs_propagation;  // rootfsPropagation
  std::vector<std::string> masked_paths;    // maskedPaths
  std::vector<std::string> readonly_paths;  // readonlyPaths
  std::string mount_label;                  // mountLabel
  std::optional<IntelRdt> intel_rdt;        // intelRdt
  std::optional<Personality> personality;
  std::map<std::string, TimeOffset> time_offsets;  // timeOffsets
  std::optional<MemoryPolicy> memory_policy;       // memoryPolicy
  std::map<std::string, NetDevice> net_devices;    // netDevices
  bool operator==(const Linux&) const = default;
};

struct Spec {
  std::string oci_version;  // ociVersion
  std::optional<Process> process;
  std::optional<Root> root;
  std::string hostname;
  std::string domainname;
  std::vector<Mount> mounts;
  std::optional<Hooks> hooks;
  std::map<std::string, std::string> annotations;
  std::optional<Linux> linux;
  bool operator==(const Spec&) const = default;
};

// Parsing. `source` names the input in errors ("config.json"); every error names the JSON
// path of the offending property. Unknown properties are ignored, as the spec requires.
Result<Spec> parse_spec(std::string_view json, std::string_view source = "config.json");
Result<Process> parse_process(std::string_view json, std::string_view source = "process.json");
Result<Resources> parse_resources(std::string_view json, std::string_view source = "resources");

// Serializing; pretty = tab-indented as runc's `spec` writes config.json.
std::string to_json(const Spec& spec, bool pretty = false);
std::string to_json(const Process& process, bool pretty = false);
std::string to_json(const Resources& resources, bool pretty = false);

// Checks what parsing cannot: ociVersion range, known enum values, duplicate namespaces,
// absolute paths... Errors name the property. See src/spec/validate.cc.
Status validate(const Spec& spec, std::string_view source = "config.json");
Status validate_process(const Process& process, std::string_view where);

// `update` semantics: copies the set, non-zero values of `update` into `base` (zero or
// absent means unchanged, as Docker sends zeros for what it does not change).
void merge_resources(Resources& base, const Resources& update);

// The config.json `berth spec` writes (as runc's: sh in a rootfs/ directory).
Spec default_spec(bool rootless);

}  // namespace berth::spec
