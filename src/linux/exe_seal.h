// CVE-2019-5736: a container must never be able to write the runtime binary through
// /proc/<pid>/exe. berth never re-executes itself to start a container, so the binary it
// was started from is what the init and exec tenants show. When that binary already lives
// on a read-only mount (the recommended install, see docs/security.md: a read-only bind of
// the installed file, made at boot by contrib/systemd on systemd hosts), nothing is done.
// Otherwise the commands that enter containers re-execute once from a detached read-only
// clone of the binary (open_tree + mount_setattr: no copy, nothing left behind).
#pragma once

namespace berth::linux {

// Where the running binary stands: the kernel's answer (the mount's flags and whether the
// file is reachable by its path), never the environment.
enum class ExeSeal {
  kWritable,  // on a writable mount: create/run/exec re-execute from a clone
  kSealed,    // the installed file is on a read-only mount (a sealed install)
  kClone,     // running from the detached read-only clone that ensure_sealed_exe made
};
ExeSeal exe_seal();
// Re-executes from a read-only clone unless sealed (or unless that is impossible, e.g.
// without the new mount API; then it returns and the payload checks in the init remain).
// Says which with --debug.
void ensure_sealed_exe(char** argv);

}  // namespace berth::linux
