// Every property of runtime-spec v1.3.0 (Linux + common) listed once: each visit() names
// the JSON keys of one struct. The generic JSON reader and writer (util/json_schema.h) both
// walk these lists, so a field can never be parsed but not written, or the reverse.
// `grep '"fieldName"' src/spec/schema.h` finds a field; `grep fieldName src` finds its use.
// kAlways marks properties Go's bindings write without `omitempty`.
#pragma once

#include "berth/spec.h"
#include "util/json_schema.h"

namespace berth::spec {

using json::kAlways;

template <class V> void visit(V& v, IdMapping& m) {
  v("containerID", m.container_id, kAlways);
  v("hostID", m.host_id, kAlways);
  v("size", m.size, kAlways);
}

template <class V> void visit(V& v, Box& b) {
  v("height", b.height, kAlways);
  v("width", b.width, kAlways);
}

template <class V> void visit(V& v, User& u) {
  v("uid", u.uid, kAlways);
  v("gid", u.gid, kAlways);
  v("umask", u.umask);
  v("additionalGids", u.additional_gids);
  v("username", u.username);
}

template <class V> void visit(V& v, Capabilities& c) {
  v("bounding", c.bounding);
  v("effective", c.effective);
  v("inheritable", c.inheritable);
  v("permitted", c.permitted);
  v("ambient", c.ambient);
}

template <class V> void visit(V& v, Rlimit& r) {
  v("type", r.type, kAlways);
  v("hard", r.hard, kAlways);
  v("soft", r.soft, kAlways);
}

template <class V> void visit(V& v, Scheduler& s) {
  v("policy", s.policy, kAlways);
  v("nice", s.nice);
  v("priority", s.priority);
  v("flags", s.flags);
  v("runtime", s.runtime);
  v("deadline", s.deadline);
  v("period", s.period);
}

template <class V> void visit(V& v, IoPriority& p) {
  v("class", p.klass, kAlways);
  v("priority", p.priority, kAlways);
}

template <class V> void visit(V& v, CpuAffinity& a) {
  v("initial", a.initial);
  v("final", a.final);
}

template <class V> void visit(V& v, Process& p) {
  v("terminal", p.terminal);
  v("consoleSize", p.console_size);
  v("user", p.user, kAlways);
  v("args", p.args);
  v("commandLine", p.command_line);
  v("env", p.env);
  v("cwd", p.cwd, kAlways);
  v("capabilities", p.capabilities);
  v("rlimits", p.rlimits);
  v("noNewPrivileges", p.no_new_privileges);
  v("apparmorProfile", p.apparmor_profile);
  v("oomScoreAdj", p.oom_score_adj);
  v("scheduler", p.scheduler);
  v("selinuxLabel", p.selinux_label);
  v("ioPriority", p.io_priority);
  v("execCPUAffinity", p.exec_cpu_affinity);
}

template <class V> void visit(V& v, Root& r) {
  v("path", r.path, kAlways);
  v("readonly", r.readonly);
}

template <class V> void visit(V& v, Mount& m) {
  v("destination", m.destination, kAlways);
  v("type", m.type);
  v("source", m.source);
  v("options", m.options);
  v("uidMappings", m.uid_mappings);
  v("gidMappings", m.gid_mappings);
}

template <class V> void visit(V& v, Hook& h) {
  v("path", h.path, kAlways);
  v("args", h.args);
  v("env", h.env);
  v("timeout", h.timeout);
}

template <class V> void visit(V& v, Hooks& h) {
  v("prestart", h.prestart);
  v("createRuntime", h.create_runtime);
  v("createContainer", h.create_container);
  v("startContainer", h.start_container);
  v("poststart", h.poststart);
  v("poststop", h.poststop);
}

template <class V> void visit(V& v, Namespace& n) {
  v("type", n.type, kAlways);
  v("path", n.path);
}

template <class V> void visit(V& v, TimeOffset& t) {
  v("secs", t.secs);
  v("nanosecs", t.nanosecs);
}

template <class V> void visit(V& v, Device& d) {
  v("path", d.path, kAlways);
  v("type", d.type, kAlways);
  v("major", d.major, kAlways);
  v("minor", d.minor, kAlways);
  v("fileMode", d.file_mode);
  v("uid", d.uid);
  v("gid", d.gid);
}

template <class V> void visit(V& v, DeviceRule& d) {
  v("allow", d.allow, kAlways);
  v("type", d.type);
  v("major", d.major);
  v("minor", d.minor);
  v("access", d.access);
}

template <class V> void visit(V& v, Memory& m) {
  v("limit", m.limit);
  v("reservation", m.reservation);
  v("swap", m.swap);
  v("kernel", m.kernel);
  v("kernelTCP", m.kernel_tcp);
  v("swappiness", m.swappiness);
  v("disableOOMKiller", m.disable_oom_killer);
  v("useHierarchy", m.use_hierarchy);
  v("checkBeforeUpdate", m.check_before_update);
}

template <class V> void visit(V& v, Cpu& c) {
  v("shares", c.shares);
  v("quota", c.quota);
  v("burst", c.burst);
  v("period", c.period);
  v("realtimeRuntime", c.realtime_runtime);
  v("realtimePeriod", c.realtime_period);
  v("cpus", c.cpus);
  v("mems", c.mems);
  v("idle", c.idle);
}

template <class V> void visit(V& v, Pids& p) { v("limit", p.limit, kAlways); }

template <class V> void visit(V& v, WeightDevice& w) {
  v("major", w.major, kAlways);
  v("minor", w.minor, kAlways);
  v("weight", w.weight);
  v("leafWeight", w.leaf_weight);
}

template <class V> void visit(V& v, ThrottleDevice& t) {
  v("major", t.major, kAlways);
  v("minor", t.minor, kAlways);
  v("rate", t.rate, kAlways);
}

template <class V> void visit(V& v, BlockIo& b) {
  v("weight", b.weight);
  v("leafWeight", b.leaf_weight);
  v("weightDevice", b.weight_device);
  v("throttleReadBpsDevice", b.throttle_read_bps_device);
  v("throttleWriteBpsDevice", b.throttle_write_bps_device);
  v("throttleReadIOPSDevice", b.throttle_read_iops_device);
  v("throttleWriteIOPSDevice", b.throttle_write_iops_device);
}

template <class V> void visit(V& v, HugepageLimit& h) {
  v("pageSize", h.page_size, kAlways);
  v("limit", h.limit, kAlways);
}

template <class V> void visit(V& v, InterfacePriority& p) {
  v("name", p.name, kAlways);
  v("priority", p.priority, kAlways);
}

template <class V> void visit(V& v, Network& n) {
  v("classID", n.class_id);
  v("priorities", n.priorities);
}

template <class V> void visit(V& v, Rdma& r) {
  v("hcaHandles", r.hca_handles);
  v("hcaObjects", r.hca_objects);
}

template <class V> void visit(V& v, Resources& r) {
  v("devices", r.devices);
  v("memory", r.memory);
  v("cpu", r.cpu);
  v("pids", r.pids);
  v("blockIO", r.block_io);
  v("hugepageLimits", r.hugepage_limits);
  v("network", r.network);
  v("rdma", r.rdma);
  v("unified", r.unified);
}

template <class V> void visit(V& v, SeccompArg& a) {
  v("index", a.index, kAlways);
  v("value", a.value, kAlways);
  v("valueTwo", a.value_two);
  v("op", a.op, kAlways);
}

template <class V> void visit(V& v, Syscall& s) {
  v("names", s.names, kAlways);
  v("action", s.action, kAlways);
  v("errnoRet", s.errno_ret);
  v("args", s.args);
}

template <class V> void visit(V& v, Seccomp& s) {
  v("defaultAction", s.default_action, kAlways);
  v("defaultErrnoRet", s.default_errno_ret);
  v("architectures", s.architectures);
  v("flags", s.flags);
  v("listenerPath", s.listener_path);
  v("listenerMetadata", s.listener_metadata);
  v("syscalls", s.syscalls);
}

template <class V> void visit(V& v, IntelRdt& r) {
  v("closID", r.clos_id);
  v("schemata", r.schemata);
  v("l3CacheSchema", r.l3_cache_schema);
  v("memBwSchema", r.mem_bw_schema);
  v("enableMonitoring", r.enable_monitoring);
  v("enableCMT", r.enable_cmt);
  v("enableMBM", r.enable_mbm);
}

template <class V> void visit(V& v, Personality& p) {
  v("domain", p.domain, kAlways);
  v("flags", p.flags);
}

template <class V> void visit(V& v, MemoryPolicy& m) {
  v("mode", m.mode, kAlways);
  v("nodes", m.nodes, kAlways);
  v("flags", m.flags);
}

template <class V> void visit(V& v, NetDevice& n) { v("name", n.name); }

template <class V> void visit(V& v, Linux& l) {
  v("uidMappings", l.uid_mappings);
  v("gidMappings", l.gid_mappings);
  v("sysctl", l.sysctl);
  v("resources", l.resources);
  v("cgroupsPath", l.cgroups_path);
  v("namespaces", l.namespaces);
  v("devices", l.devices);
  v("seccomp", l.seccomp);
  v("rootfsPropagation", l.rootfs_propagation);
  v("maskedPaths", l.masked_paths);
  v("readonlyPaths", l.readonly_paths);
  v("mountLabel", l.mount_label);
  v("intelRdt", l.intel_rdt);
  v("personality", l.personality);
  v("timeOffsets", l.time_offsets);
  v("memoryPolicy", l.memory_policy);
  v("netDevices", l.net_devices);
}

template <class V> void visit(V& v, Spec& s) {
  v("ociVersion", s.oci_version, kAlways);
  v("process", s.process);
  v("root", s.root);
  v("hostname", s.hostname);
  v("domainname", s.domainname);
  v("mounts", s.mounts);
  v("hooks", s.hooks);
  v("annotations", s.annotations);
  v("linux", s.linux);
}

}  // namespace berth::spec
