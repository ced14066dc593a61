// What berth asks of CRIU (the RPC request's options), computed from the flags, the config
// (mounts of type bind and cgroup, linux.maskedPaths, linux.devices, linux.namespaces[].path,
// the org.criu.config annotation)
// and the container's record, with no system call: unit tests compare it as text. Also
// descriptors.json, runc's record of the init's stdio in the image directory.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "berth/checkpoint.h"
#include "berth/result.h"
#include "berth/spec.h"
#include "berth/state.h"

namespace berth::container::criu {

enum class Kind { kDump, kPreDump, kRestore };
// CRIU's cg_mode values (rpc.proto criu_cg_mode).
enum class CgroupsMode { kNone, kSoft, kFull, kStrict };

struct ExtMount {
  std::string key;
  std::string val;
};

struct InheritFd {
  std::string key;
  int fd = -1;
};

struct Request {
  Kind kind = Kind::kDump;
  int pid = 0;                 // dump: the init
  std::string images_dir;      // opened by the driver
  std::string work_dir;        // "" = images_dir
  std::string parent_img;      // relative to images_dir
  std::string root;            // the container's root on the host
  std::string log_file;        // in the work directory
  std::string freeze_cgroup;   // the freezer cgroup (v1) or the cgroup (v2) to freeze with
  bool leave_running = false;
  bool tcp_established = false;
  bool ext_unix_sk = false;
  bool shell_job = false;
  bool file_locks = false;
  bool auto_dedup = false;
  bool track_mem = false;       // pre-dump
  bool evasive_devices = false; // restore
  bool orphan_pts_master = true;
  bool manage_cgroups = true;
  bool lazy_pages = false;
  CgroupsMode cg_mode = CgroupsMode::kNone;
  uint32_t empty_ns = 0;        // CLONE_NEW* flags
  std::string page_server_address;
  int page_server_port = 0;
  int status_fd = -1;
  std::string config_file;       // CRIU's own configuration file (org.criu.config)
  int config_fd = -1;            // use_config_file: the checked file, kept open in the worker
  std::string config_named;      // ... as the config names it (errors name this)
  std::string config_text;       // ... its content, which errors never quote
  std::string lsm_profile;
  std::string lsm_mount_context;
  std::vector<ExtMount> ext_mounts;
  std::vector<std::string> externals;   // "net[<inode>]:extRootNetNS"
  std::vector<InheritFd> inherit_fds;   // restore: stdio pipes, joined namespaces
  std::vector<std::pair<std::string, std::string>> cg_roots;  // controller → cgroup path
};

// The CRIU config file the spec names: org.criu.config ("" = none), else runc's
// /etc/criu/runc.conf. Checked before use (config_file.h).
std::string config_file(const spec::Spec& spec);

// One option a line ("leave_running", "ext_mount /data:/data"), for tests and --debug.
std::string describe(const Request& r);

// The flags' common checks, with runc's texts: "Invalid manage cgroups mode",
// "namespace \"ipc\" is not supported".
Result<CgroupsMode> parse_cgroups_mode(const std::string& mode);
Result<uint32_t> parse_empty_ns(const std::vector<std::string>& types);

// What the host says about the container at checkpoint time.
struct DumpFacts {
  int pid = 0;
  std::string rootfs;                                   // record.rootfs
  std::map<std::string, std::string> cgroup_paths;      // record.cgroup_paths
  std::map<std::string, uint64_t> joined_ns_inodes;     // "network"/"pid" joined by path → inode
  std::set<std::string> masked_dirs;                    // masked paths that are directories
};

Result<Request> dump_request(const CheckpointOptions& o, const spec::Spec& spec, const DumpFacts& facts);

struct RestoreFacts {
  std::string root;                                     // where the rootfs is bound for CRIU
  std::string bundle;                                   // relative bind sources
  std::map<std::string, std::string> cgroup_paths;      // the new container's cgroups
  std::map<std::string, int> joined_ns_fds;             // "network"/"pid" → open fd (joined by
                                                        // path, or a new empty network one)
  std::vector<std::string> descriptors;                 // descriptors.json
  std::vector<std::pair<std::string, std::string>> cg_roots;  // from /proc/self/cgroup
};

Result<Request> restore_request(const RestoreOptions& o, const spec::Spec& spec, const RestoreFacts& facts);

// descriptors.json: a JSON array of the init's fd 0, 1 and 2 as /proc/<pid>/fd shows them
// ("/dev/null", "pipe:[1234]"), written at checkpoint so restore can hand pipes back.
std::string descriptors_json(const std::vector<std::string>& fds);
Result<std::vector<std::string>> parse_descriptors(std::string_view text);

// Why CRIU cannot checkpoint this container (NVIDIA GPU or RDMA device nodes present), or ""
// when it can. `dev_paths`: the device paths the container has (config and /dev).
std::string native_device_refusal(const std::vector<std::string>& dev_paths);

// The first "Error (file:line): text" line of a CRIU log, as "text" ("" when none): what
// names the missing kernel feature when CRIU cannot run.
std::string first_log_error(std::string_view log);

}  // namespace berth::container::criu
