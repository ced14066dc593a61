// What the parent needs to know of the container's rootfs before planning, read with
// RESOLVE_IN_ROOT (the image controls every byte and every symlink there): the library
// directories (Debian-like → /usr/lib/<triplet>, else /usr/lib64), which libc the image
// has (glibc: run ldconfig; musl: extend its .path file; none: SONAME links only), whether
// /etc/ld.so.conf exists, and a CUDA forward-compat libcuda under /usr/local/cuda/compat.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "berth/result.h"

namespace berth::devices::nvidia {

enum class Libc { kGlibc, kMusl, kNone };

struct CompatLib {
  std::string dir = "/usr/local/cuda/compat";
  std::string version;               // 570.86.10
  std::optional<std::string> note;   // .note.cuda.fwd_compatibility payload
};

struct ContainerFacts {
  std::string lib_dir = "/usr/lib64";
  std::string lib32_dir = "/usr/lib32";
  // Missing or empty in the image (busybox, a distroless image): the driver's tmpfs can go
  // right there, hiding nothing (see plan_files.cc).
  bool lib_dir_empty = false, lib32_dir_empty = false;
  // Of the directories the driver's files go into (/usr/bin, /lib/firmware, the daemons'
  // socket directories), those missing or empty in the image: a tmpfs of the module's own
  // there.
  std::set<std::string> empty_own_dirs;
  // Where those directories and the spec's mount destinations lead inside the rootfs (the
  // image's symlinks followed, a missing tail kept as written): a tmpfs must hide no spec
  // mount, also one written as /run/x where the module writes /var/run/x.
  std::map<std::string, std::string> resolved;
  std::vector<std::string> spec_mounts;  // destinations, as written and as resolved
  Libc libc = Libc::kNone;
  std::string musl_path_file;                     // /etc/ld-musl-x86_64.path
  std::optional<std::string> musl_path_content;   // its content, when it exists
  bool has_ld_so_conf = false;
  std::optional<CompatLib> compat;                // the newest compat libcuda
};

// mounts: the spec's mount destinations (see ContainerFacts::spec_mounts).
Result<ContainerFacts> inspect_container(const std::string& rootfs, const std::vector<std::string>& mounts = {});

}  // namespace berth::devices::nvidia
