// The fds our caller passed us: those open when berth started, before it opened anything.
// Only these may reach a container through --preserve-fds or LISTEN_FDS; any other fd in
// that range would be one of berth's own (the state root, a container's directory, a
// cgroup), and a container holding one walks the host's tree from it (the CVE-2024-21626
// family; runc 1.1.5 hands over /sys/fs/cgroup this way, docs/security.md).
#pragma once

#include "berth/result.h"

namespace berth::caller_fds {

// Takes the record. Called by main before anything is opened (for create, run and exec,
// the commands that hand fds on); again in a process that re-executed itself (it inherits
// only the caller's fds, see cloexec_all_but_passed).
void record();
// Whether `fd` was open when the record was taken. Without a record (a program embedding
// the library), whether it is open now.
bool passed(int fd);
// Marks every fd >= 3 that the caller did not pass close-on-exec: before berth re-executes
// itself, so that the new process's record is the caller's fds and nothing of ours.
void cloexec_all_but_passed();
// fds 3 .. 3+listen+preserve-1 must all be the caller's; the count of fds that may be
// handed on, or an error naming the first fd that is not ("--preserve-fds 4: fd 5 was not
// passed by the caller").
Result<int> check(int listen_fds, int preserve_fds);

}  // namespace berth::caller_fds
