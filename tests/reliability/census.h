// Census: what a container may leave on the host, counted before and after a test so that
// "the host is as before" is one comparison. It lists mounts under the test's directories,
// cgroup directories under the test's cgroup parent in every hierarchy, the state root's
// entries, temp files (".*.tmp*") in watched directories, this process's descendants
// (zombies included), this process's own fds (the test plays the long-lived shim), and
// whether the watched host network devices are still in the host's namespace.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace berth::test {

struct CensusScope {
  std::vector<std::string> mount_prefixes;  // mountinfo lines whose mount point starts so
  std::string cgroup_parent;                // "/berth-rel-123": looked up in every hierarchy
  std::string state_root;                   // --root of the runtime under test
  std::vector<std::string> temp_dirs;       // scanned (recursively) for leftover temp files
  // Host network devices that must stay in the host's namespace. Named, not all: other
  // programs on a shared host add and remove their own devices at any time.
  std::vector<std::string> netdevs;
};

struct Census {
  std::vector<std::string> mounts;
  std::vector<std::string> cgroups;
  std::vector<std::string> state;
  std::vector<std::string> temp_files;
  std::vector<std::string> processes;  // "pid state comm" of every descendant
  std::vector<std::string> fds;        // "fd -> target" of this process
  std::vector<std::string> netdevs;

  // Empty when `after` left nothing that `this` (before) did not have; else one line per
  // difference.
  std::string leftovers(const Census& after) const;
};

Census take_census(const CensusScope& scope);

// Reaps every exited child (as a shim reaps adopted orphans) until none is left or
// `timeout_ms` passes waiting for live descendants to exit; returns how many it reaped.
int reap_children(int timeout_ms);

// Every cgroup hierarchy directory (v1 controllers, named hierarchies, the unified one).
std::vector<std::string> cgroup_mounts();
// rmdir of `rel` (and what is below it) in every hierarchy; for the end of a test.
void remove_cgroup_parent(const std::string& rel);

// The devices worth watching on this host: lo and the default route's device.
std::vector<std::string> stable_netdevs();

// Descendant pids of this process (children of children...), from /proc.
std::vector<pid_t> descendants();

// The text of a /proc or cgroup file read with read(2); "" or what came before an error. Not
// std::ifstream: libstdc++'s filebuf throws when read(2) fails, as it does with ESRCH for a
// process that exits between open and read.
std::string read_volatile(const std::string& path);

}  // namespace berth::test
