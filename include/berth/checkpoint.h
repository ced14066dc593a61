// libberth's checkpoint and restore (CRIU): the options of `berth checkpoint` and
// `berth restore`, named as runc names its flags.
#pragma once

#include <string>
#include <vector>

#include "berth/result.h"

namespace berth {

// Flags both commands share.
struct CriuCommonOptions {
  std::string root;         // state root (--root)
  std::string id;
  std::string criu_binary = "criu";  // global --criu
  std::string image_path;   // "" = <cwd>/checkpoint, as runc
  std::string work_path;    // "" = the image directory (CRIU's default)
  bool tcp_established = false;
  bool ext_unix_sk = false;
  bool shell_job = false;
  bool file_locks = false;
  bool lazy_pages = false;
  bool auto_dedup = false;
  std::string manage_cgroups_mode;     // "" soft full strict
  std::vector<std::string> empty_ns;   // namespace types: only "network", as runc
};

struct CheckpointOptions : CriuCommonOptions {
  std::string parent_path;  // relative to image_path
  bool leave_running = false;
  bool pre_dump = false;
  int status_fd = -1;
  std::string page_server;  // ADDRESS:PORT
};

struct RestoreOptions : CriuCommonOptions {
  std::string bundle;
  std::string pid_file;
  std::string console_socket;
  bool detach = false;
  bool no_subreaper = false;
  bool no_pivot = false;
  std::string lsm_profile;
  std::string lsm_mount_context;
  bool systemd_cgroup = false;
  std::string rootless = "auto";
};

// Whether this berth was built with CRIU (libcriu); without it both operations fail with
// "berth was built without CRIU support".
bool criu_supported();

Status checkpoint_container(const CheckpointOptions& options);
// The exit code: 0 when detached, else the restored init's status (128+signal when killed).
Result<int> restore_container(const RestoreOptions& options);

}  // namespace berth
