// Host paths berth trusts only when nobody but root and the caller can change what they
// lead to (issue 31): the state root (--root and its defaults) and the file of the
// org.criu.config annotation. The models are OpenSSH's StrictModes and sudo's checks: every
// directory on the way is walked from "/" one component at a time on fds (never a string
// re-resolved), each owned by root or the caller and writable by nobody else, so nobody
// else can rename an entry away and plant another in its place.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "berth/result.h"
#include "util/unique_fd.h"

namespace berth::trusted {

struct DirId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const DirId&) const = default;
};

struct WalkOptions {
  std::string what;       // names the refusal: "state root", "org.criu.config"
  uid_t caller = 0;       // geteuid(): root, or the rootless user
  bool create = false;    // directories: make missing components (0700, the caller's)
};

struct Walked {
  UniqueFd fd;                 // the last component: a directory O_RDONLY, a file O_RDONLY|O_NONBLOCK
  struct stat st {};           // its fstat
  std::string path;            // as resolved: no link, ".", ".." or empty component left
  std::vector<DirId> dirs;     // every directory walked through, "/" first; a directory's own id last
  bool missing = false;        // a component does not exist (never with `create` for directories)
};

// A directory: the parents as `check_parent`, the directory itself owned by the caller and
// writable by nobody else. A parent link is followed only when root or the caller owns it
// (the kernel's protected_symlinks rule, for every directory: /var/run -> /run is).
Result<Walked> open_dir(const std::string& path, const WalkOptions& o);
// A regular file: the parents as above; the file itself never a link, owned by root or the
// caller, not writable by group or others, opened O_RDONLY|O_NOFOLLOW|O_NONBLOCK (a FIFO
// cannot block) after an lstat said it is a regular file (a device is never opened).
Result<Walked> open_file(const std::string& path, const WalkOptions& o);

// "" when a directory the walk passes through is safe, else the problem: owned by someone
// other than root or the caller, or writable by group or others without the sticky bit
// (in a sticky directory only an entry's owner may rename it, and the walk checks the entry).
std::string check_parent(const struct stat& st, uid_t caller);
// "" when `st` (a state root, a container directory) is the caller's own and writable by
// nobody else, else the problem: "owned by uid 1000, not by the caller (uid 0)",
// "writable by others (mode 0777)".
std::string check_private(const struct stat& st, uid_t caller);

}  // namespace berth::trusted
