// The state root (--root, default /run/berth): one directory per container holding
// state.json (atomically replaced), a copy of the config, and exec.fifo until `start`.
// A per-container flock serializes commands on one id; `state` and `list` read without it.
// The root, every directory above it and each container directory must be the caller's
// (root, or the rootless user) and writable by nobody else (issue 31; util/trusted_path.h).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "berth/state.h"
#include "util/rollback.h"
#include "util/unique_fd.h"

namespace berth::container {

// runc's rule: [\w+-.]+, and not "." or "..". Error: "invalid id format: <id>".
Status validate_id(const std::string& id);

class ContainerDir {
 public:
  ContainerDir(std::string id, std::string path, UniqueFd dirfd)
      : id_(std::move(id)), path_(std::move(path)), dirfd_(std::move(dirfd)) {}

  const std::string& id() const { return id_; }
  const std::string& path() const { return path_; }  // absolute
  int fd() const { return dirfd_.get(); }

  // Exclusive lock for the lifetime of this object (flock on the directory fd).
  Status lock();
  Result<ContainerRecord> read_record() const;
  Status write_record(const ContainerRecord& record);
  Result<spec::Spec> read_config() const;
  // One kind of hooks of the config copy (key "poststart" with &spec::Hooks::poststart),
  // parsed only when the copy's text names the key: `start` and `delete` need nothing else
  // of it, and parsing a Docker-shaped copy (366 seccomp names) takes most of a millisecond.
  Result<std::vector<spec::Hook>> read_hooks(const char* key, std::vector<spec::Hook> spec::Hooks::*which) const;
  Status write_config(const spec::Spec& spec);
  bool has_fifo() const;
  // create records the init while it still sets up (its rootfs not yet its root): the
  // file "setting-up" says so until its kReady, the container is "creating" meanwhile, and
  // exec, which would join it there, refuses. A file, not a field of state.json: made
  // once and removed with one unlink, where a state.json rewrite on a disk-backed /run
  // started writeback (docs/performance.md, "Why the code is shaped so").
  // Marking again (a second stage's pid) or clearing an absent mark is no error.
  Status mark_setting_up();
  Status clear_setting_up();
  bool setting_up() const;

 private:
  std::string id_;
  std::string path_;
  UniqueFd dirfd_;
  std::string last_record_;  // what write_record last put on disk: an unchanged record is not rewritten
};

class StateStore {
 public:
  // Opens (creating it 0700 if needed) the state root, refused unless it and its parents
  // are trusted: "state root /x: owned by uid 1000, not by the caller (uid 0)".
  static Result<StateStore> open(const std::string& root);
  // Opens the root only if it exists (for read-only commands); a missing root is empty.
  static Result<StateStore> open_existing(const std::string& root);

  const std::string& root() const { return root_; }
  // New container directory; EEXIST gives "container with id exists: <id>".
  Result<ContainerDir> create(const std::string& id);
  // create() + lock, for create and restore: the directory's removal is pushed on `undo`
  // before anything else, so a failed call leaves no state behind.
  Result<ContainerDir> create_locked(const std::string& id, Rollback& undo);
  // Existing container; a missing one gives "container does not exist"; one owned by
  // another uid or writable by others is refused ("container directory <path>: ...").
  Result<ContainerDir> open_container(const std::string& id) const;
  // Removes a container's directory and what is in it (not following symlinks).
  Status remove(const std::string& id);
  Result<std::vector<std::string>> list_ids() const;

 private:
  StateStore(std::string root, UniqueFd fd) : root_(std::move(root)), fd_(std::move(fd)) {}
  std::string root_;
  UniqueFd fd_;  // invalid when the root does not exist (open_existing)
};

// --pid-file of create, run, exec and restore: the pid written atomically (a temp file
// renamed in the pid file's directory), so an engine never reads half a number.
Status write_pid_file(const std::string& path, pid_t pid);

}  // namespace berth::container
