// Every runc command and flag, as berth accepts them (runc 1.1-1.3 surface, plus the
// flags containerd and Docker pass). Handlers live in cmd_<name>.cc.
#include "cli/commands.h"

#include <iterator>

namespace berth::cli {
namespace {

using T = FlagType;

FlagSpec flag(std::vector<std::string> names, T type, std::string usage, std::string def = "") {
  return FlagSpec{std::move(names), type, std::move(usage), std::move(def), false};
}

const char* kConsoleSocket =
    "path to an AF_UNIX socket which will receive a file descriptor referencing the master end of the "
    "console's pseudoterminal";
const char* kPidfdSocket = "path to an AF_UNIX socket which will receive the pidfd of the container's process";
const char* kPreserveFds =
    "Pass N additional file descriptors to the container (stdio + $LISTEN_FDS + N in total)";
const char* kNoPivot =
    "do not use pivot root to jail process inside rootfs.  This should be used whenever the rootfs is on top "
    "of a ramdisk";
const char* kNoNewKeyring =
    "do not create a new session keyring for the container.  This will cause the container to inherit the "
    "calling processes session key";
const char* kIdOnly = "Where \"<container-id>\" is the name for the instance of the container.";

std::vector<FlagSpec> create_flags(bool run) {
  std::vector<FlagSpec> f = {
      flag({"bundle", "b"}, T::kString, "path to the root of the bundle directory, defaults to the current directory"),
      flag({"console-socket"}, T::kString, kConsoleSocket),
      flag({"pidfd-socket"}, T::kString, kPidfdSocket),
  };
  if (run) {
    f.push_back(flag({"detach", "d"}, T::kBool, "detach from the container's process"));
    f.push_back(flag({"keep"}, T::kBool, "do not delete the container after it exits"));
  } else {
    // go-runc may pass --detach to create; runc accepts and ignores it there.
    FlagSpec d = flag({"detach", "d"}, T::kBool, "accepted for compatibility; create always detaches");
    d.hidden = true;
    f.push_back(d);
  }
  f.push_back(flag({"pid-file"}, T::kString, "specify the file to write the process id to"));
  if (run) f.push_back(flag({"no-subreaper"}, T::kBool, "disable the use of the subreaper used to reap reparented processes"));
  f.push_back(flag({"no-pivot"}, T::kBool, kNoPivot));
  f.push_back(flag({"no-new-keyring"}, T::kBool, kNoNewKeyring));
  f.push_back(flag({"preserve-fds"}, T::kUint, kPreserveFds, "0"));
  return f;
}

std::vector<FlagSpec> criu_flags(bool restore) {
  std::vector<FlagSpec> f = {
      flag({"image-path"}, T::kString, restore ? "path to criu image files for restoring" : "path for saving criu image files"),
      flag({"work-path"}, T::kString, "path for saving work files and logs"),
      flag({"tcp-established"}, T::kBool, "allow open tcp connections"),
      flag({"ext-unix-sk"}, T::kBool, "allow external unix sockets"),
      flag({"shell-job"}, T::kBool, "allow shell jobs"),
      flag({"file-locks"}, T::kBool, "handle file locks, for safety"),
      flag({"lazy-pages"}, T::kBool, "use userfaultfd to lazily restore memory pages"),
      flag({"manage-cgroups-mode"}, T::kString, "cgroups mode: 'soft' (default), 'full' and 'strict'"),
      flag({"empty-ns"}, T::kStringSlice, "create a namespace, but don't restore its properties"),
      flag({"auto-dedup"}, T::kBool, "enable auto deduplication of memory images"),
  };
  if (restore) {
    f.push_back(flag({"console-socket"}, T::kString, kConsoleSocket));
    f.push_back(flag({"bundle", "b"}, T::kString, "path to the root of the bundle directory"));
    f.push_back(flag({"detach", "d"}, T::kBool, "detach from the container's process"));
    f.push_back(flag({"pid-file"}, T::kString, "specify the file to write the process id to"));
    f.push_back(flag({"no-subreaper"}, T::kBool, "disable the use of the subreaper used to reap reparented processes"));
    f.push_back(flag({"no-pivot"}, T::kBool, kNoPivot));
    f.push_back(flag({"lsm-profile"}, T::kString, "Specify an LSM profile to be used during restore in the form of TYPE:NAME."));
    f.push_back(flag({"lsm-mount-context"}, T::kString, "Specify an LSM mount context to be used during restore."));
  } else {
    f.push_back(flag({"parent-path"}, T::kString, "path for previous criu image files in pre-dump"));
    f.push_back(flag({"leave-running"}, T::kBool, "leave the process running after checkpointing"));
    f.push_back(flag({"status-fd"}, T::kInt, "criu writes \\0 to this FD once lazy-pages is ready", "-1"));
    f.push_back(flag({"page-server"}, T::kString, "ADDRESS:PORT of the page server"));
    f.push_back(flag({"pre-dump"}, T::kBool, "dump container's memory information only, leave the container running after this"));
  }
  return f;
}

std::vector<FlagSpec> exec_flags() {
  return {
      flag({"console-socket"}, T::kString, kConsoleSocket),
      flag({"pidfd-socket"}, T::kString, kPidfdSocket),
      flag({"cwd"}, T::kString, "current working directory in the container"),
      flag({"env", "e"}, T::kStringSlice, "set environment variables"),
      flag({"tty", "t"}, T::kBool, "allocate a pseudo-TTY"),
      flag({"user", "u"}, T::kString, "UID (format: <uid>[:<gid>])"),
      flag({"additional-gids", "g"}, T::kStringSlice, "additional gids"),
      flag({"process", "p"}, T::kString, "path to the process.json"),
      flag({"detach", "d"}, T::kBool, "detach from the container's process"),
      flag({"pid-file"}, T::kString, "specify the file to write the process id to"),
      flag({"process-label"}, T::kString, "set the asm process label for the process commonly used with selinux"),
      flag({"apparmor"}, T::kString, "set the apparmor profile for the process"),
      flag({"no-new-privs"}, T::kBool, "set the no new privileges value for the process"),
      flag({"cap", "c"}, T::kStringSlice, "add a capability to the bounding set for the process"),
      flag({"preserve-fds"}, T::kUint, kPreserveFds, "0"),
      flag({"cgroup"}, T::kStringSlice, "run the process in an (existing) sub-cgroup(s). Format is [<controller>:]<cgroup>."),
      flag({"ignore-paused"}, T::kBool, "allow exec in a paused container"),
  };
}

std::vector<FlagSpec> update_flags() {
  return {
      flag({"resources", "r"}, T::kString,
           "path to the file containing the resources to update or '-' to read from the standard input"),
      flag({"blkio-weight"}, T::kUint, "Specifies per cgroup weight, range is from 10 to 1000", "0"),
      flag({"cpu-period"}, T::kString, "CPU CFS period to be used for hardcapping (in usecs). 0 to use system default"),
      flag({"cpu-quota"}, T::kString, "CPU CFS hardcap limit (in usecs). Allowed cpu time in a given period"),
      flag({"cpu-burst"}, T::kString, "CPU CFS hardcap burst limit (in usecs). Allowed accumulated cpu time additionally for burst a given period"),
      flag({"cpu-share", "cpu-shares"}, T::kString, "CPU shares (relative weight vs. other containers)"),
      flag({"cpu-rt-period"}, T::kString, "CPU realtime period to be used for hardcapping (in usecs). 0 to use system default"),
      flag({"cpu-rt-runtime"}, T::kString, "CPU realtime hardcap limit (in usecs). Allowed cpu time in a given period"),
      flag({"cpu-idle"}, T::kString, "set cgroup SCHED_IDLE or not, 0: default behavior, 1: SCHED_IDLE"),
      flag({"cpuset-cpus"}, T::kString, "CPU(s) to use"),
      flag({"cpuset-mems"}, T::kString, "Memory node(s) to use"),
      flag({"kernel-memory"}, T::kString, "(obsoleted; do not use)"),
      flag({"kernel-memory-tcp"}, T::kString, "(obsoleted; do not use)"),
      flag({"memory"}, T::kString, "Memory limit (in bytes)"),
      flag({"memory-reservation"}, T::kString, "Memory reservation or soft_limit (in bytes)"),
      flag({"memory-swap"}, T::kString, "Total memory usage (memory + swap); set '-1' to enable unlimited swap"),
      flag({"pids-limit"}, T::kInt, "Maximum number of pids allowed in the container", "0"),
      flag({"l3-cache-schema"}, T::kString, "The string of Intel RDT/CAT L3 cache schema"),
      flag({"mem-bw-schema"}, T::kString, "The string of Intel RDT/MBA memory bandwidth schema"),
  };
}

const char* kCreateDescription =
    "The create command sets up an instance of a container from a bundle: a directory\n"
    "holding a \"config.json\" specification and a root filesystem. The container's\n"
    "process is prepared and left waiting; \"berth start\" runs it.";

CommandSpec make_checkpoint() {
  return {"checkpoint", "checkpoint a running container", "<container-id>",
          "Saves the container's processes with CRIU into --image-path (default ./checkpoint).", criu_flags(false), ArgRule::kExactly, 1,
          true, cmd_checkpoint};
}

CommandSpec make_create() {
  return {"create", "create a container", "<container-id>",
          std::string(kCreateDescription), create_flags(false), ArgRule::kExactly, 1, true, cmd_create};
}

CommandSpec make_delete() {
  return {"delete", "delete any resources held by the container often used with detached container",
          "<container-id>", kIdOnly,
          {flag({"force", "f"}, T::kBool, "Forcibly deletes the container if it is still running (uses SIGKILL)")},
          ArgRule::kExactly, 1, true, cmd_delete};
}

CommandSpec make_events() {
  return {"events",
          "display container events such as OOM notifications, cpu, memory, and IO usage statistics",
          "<container-id>", "Prints the container's events as JSON lines; with --stats, one stats record.",
          {flag({"interval"}, T::kDuration, "set the stats collection interval", "5s"),
           flag({"stats"}, T::kBool, "display the container's stats then exit")},
          ArgRule::kExactly, 1, true, cmd_events};
}

CommandSpec make_exec() {
  return {"exec", "execute new process inside the container",
          "<container-id> <command> [command options]  || -p process.json <container-id>",
          "Runs <command> (or the process described by -p) inside a running container.", exec_flags(),
          ArgRule::kMinimum, 1, false, cmd_exec};
}

CommandSpec make_features() {
  return {"features", "show the enabled features", "",
          "Prints the OCI features document: what this berth supports, as JSON.", {}, ArgRule::kExactly, 0,
          true, cmd_features};
}

CommandSpec make_kill() {
  return {"kill", "kill sends the specified signal (default: SIGTERM) to the container's init process",
          "<container-id> [signal]", "The signal is a name (KILL, SIGKILL) or a number.",
          {flag({"all", "a"}, T::kBool, "send the specified signal to all processes inside the container")},
          ArgRule::kMinimum, 1, true, cmd_kill};
}

CommandSpec make_list() {
  return {"list", "lists containers started by berth with the given root", "",
          "Lists the containers under the state root given by --root.",
          {flag({"format", "f"}, T::kString, "select one of: table or json", "\"table\""),
           flag({"quiet", "q"}, T::kBool, "display only container IDs")},
          ArgRule::kExactly, 0, true, cmd_list};
}

CommandSpec make_pause() {
  return {"pause", "pause suspends all processes inside the container", "<container-id>",
          "Freezes every process of the container.", {}, ArgRule::kExactly, 1, true, cmd_pause};
}

CommandSpec make_ps() {
  return {"ps", "ps displays the processes running inside a container", "<container-id> [ps options]", "",
          {flag({"format", "f"}, T::kString, "select one of: table or json", "\"table\"")}, ArgRule::kMinimum,
          1, false, cmd_ps};
}

CommandSpec make_restore() {
  return {"restore", "restore a container from a previous checkpoint", "<container-id>",
          "Restores a checkpoint made by \"berth checkpoint\" as a new container of the bundle.", criu_flags(true), ArgRule::kExactly, 1,
          true, cmd_restore};
}

CommandSpec make_resume() {
  return {"resume", "resumes all processes that have been previously paused", "<container-id>",
          "Thaws every process of a paused container.", {}, ArgRule::kExactly, 1, true, cmd_resume};
}

CommandSpec make_run() {
  return {"run", "create and run a container", "<container-id>", std::string(kCreateDescription) +
          "\nrun creates and starts in one step, and by default waits for the container.",
          create_flags(true), ArgRule::kExactly, 1, true, cmd_run};
}

CommandSpec make_spec() {
  return {"spec", "create a new specification file", "",
          "Writes a starter config.json into the bundle directory: it runs \"sh\" from\n"
          "./rootfs. Edit process.args to run something else; --rootless writes a\n"
          "configuration for a container started without root privileges.",
          {flag({"bundle", "b"}, T::kString, "path to the root of the bundle directory"),
           flag({"rootless"}, T::kBool, "generate a configuration for a rootless container")},
          ArgRule::kAny, 0, true, cmd_spec};
}

CommandSpec make_start() {
  return {"start", "executes the user defined process in a created container", "<container-id>",
          "Runs the process of a container made by \"berth create\".", {}, ArgRule::kExactly, 1, true,
          cmd_start};
}

CommandSpec make_state() {
  return {"state", "output the state of a container", "<container-id>",
          "Prints the OCI state of the container as JSON.", {}, ArgRule::kExactly, 1, true, cmd_state};
}

CommandSpec make_update() {
  return {"update", "update container resource constraints", "<container-id>",
          "Changes the resources of a container: from a LinuxResources JSON document\n"
          "(--resources FILE, or - for standard input) or from the flags; zero or\n"
          "absent values leave a setting unchanged.",
          update_flags(), ArgRule::kExactly, 1, true, cmd_update};
}

// Every command's builder, in the order `help` lists them. Only the one a call names is
// built (find_command): building them all cost each call some 400 allocations of flags and
// help texts, and their code (docs/performance.md, "Where the time goes").
struct Entry {
  const char* name;
  CommandSpec (*make)();
};
constexpr Entry kCommands[] = {
    {"checkpoint", make_checkpoint},
    {"create", make_create},
    {"delete", make_delete},
    {"events", make_events},
    {"exec", make_exec},
    {"features", make_features},
    {"kill", make_kill},
    {"list", make_list},
    {"pause", make_pause},
    {"ps", make_ps},
    {"restore", make_restore},
    {"resume", make_resume},
    {"run", make_run},
    {"spec", make_spec},
    {"start", make_start},
    {"state", make_state},
    {"update", make_update},
};

}  // namespace

// The tables are never destroyed: freeing them at exit wrote to every heap page they hold,
// and after create's, run's or exec's clone each such write is a copy-on-write fault (the
// init shares those pages until its execve): faults for nothing (docs/performance.md).
const std::vector<CommandSpec>& commands() {
  static const auto* k = [] {
    auto* all = new std::vector<CommandSpec>;
    for (const Entry& e : kCommands) all->push_back(*find_command(e.name));
    return all;
  }();
  return *k;
}

const CommandSpec* find_command(const std::string& name) {
  static const CommandSpec* built[std::size(kCommands)] = {};
  for (size_t i = 0; i < std::size(kCommands); ++i) {
    if (name != kCommands[i].name) continue;
    if (!built[i]) built[i] = new CommandSpec(kCommands[i].make());
    return built[i];
  }
  return nullptr;
}

const std::vector<FlagSpec>& global_flags() {
  static const auto* k = new std::vector<FlagSpec>{
      flag({"debug"}, T::kBool, "enable debug logging"),
      flag({"log"}, T::kString, "set the log file to write berth logs to (default is '/dev/stderr')"),
      flag({"log-format"}, T::kString, "set the log format ('text' (default), or 'json')", "\"text\""),
      flag({"root"}, T::kString,
           "root directory for storage of container state (this should be located in tmpfs)", "\"/run/berth\""),
      flag({"criu"}, T::kString, "path to the criu binary used for checkpoint and restore", "\"criu\""),
      flag({"systemd-cgroup"}, T::kBool,
           "enable systemd cgroup support, expects cgroupsPath to be of form \"slice:prefix:name\" for e.g. "
           "\"system.slice:berth:434234\""),
      flag({"rootless"}, T::kString, "ignore cgroup permission errors ('true', 'false', or 'auto')", "\"auto\""),
      flag({"help", "h"}, T::kBool, "show help"),
      flag({"version", "v"}, T::kBool, "print the version"),
  };
  return *k;
}

}  // namespace berth::cli
