// The bundle as create, run and restore take it: config.json read and checked, the terminal
// flags (process.terminal, --console-socket) checked against it, --rootless resolved, the
// state directory with its first record and config copy, and the container's cgroups
// (linux.cgroupsPath, linux.resources) recorded before they exist and undone on failure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "berth/state.h"
#include "container/cgroup_setup.h"
#include "container/state_store.h"
#include "util/rollback.h"

namespace berth::container {

// What a new container is made of while create or restore sets it up.
struct Staged {
  spec::Spec spec;
  ContainerRecord record;
  std::optional<ContainerDir> dir;
  CgroupSetup cg;
  bool rootless = false;  // --rootless resolved: cgroups we may not write are left out
};

// What the caller asked for, in the words create and restore share.
struct StageRequest {
  std::string root, id, bundle;  // bundle as given ("" = the current directory)
  std::string console_socket;
  std::string rootless = "auto";  // --rootless
  bool systemd_cgroup = false;
  bool detached = true;           // no foreground berth keeps a pty master
  const char* verb = "create";    // "create" or "restore", for the errors
};

// From CreateOptions or RestoreOptions, which name these fields alike.
template <class Options>
StageRequest stage_request(const Options& o, bool detached, const char* verb) {
  StageRequest r;
  r.root = o.root;
  r.id = o.id;
  r.bundle = o.bundle;
  r.console_socket = o.console_socket;
  r.rootless = o.rootless;
  r.systemd_cgroup = o.systemd_cgroup;
  r.detached = detached;
  r.verb = verb;
  return r;
}

// config.json of the bundle at `bundle` (absolute), parsed, validated, and refused where
// this build cannot honour a field.
Result<spec::Spec> load_bundle(const std::string& bundle, const char* verb);
// runc's two refusals of a terminal that nobody would receive or a socket that would get none.
Status check_terminal(const spec::Spec& spec, const std::string& console_socket, bool detached);
// load_bundle, check_terminal and the rootless resolution: nothing exists yet, so a refused
// config leaves nothing behind.
Status load_staged(const StageRequest& r, Staged& s);
// The locked state directory, state.json (pid 0, the planned cgroups) and config.json.
Status prepare_state(const StageRequest& r, Staged& s, Rollback& undo);
// The cgroups made (extra_rules: device modules' device rules), an undo step that removes
// them, and their real paths recorded.
Status make_cgroups(const StageRequest& r, Staged& s, const std::vector<spec::DeviceRule>& extra_rules,
                    Rollback& undo);

}  // namespace berth::container
