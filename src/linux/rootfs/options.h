// mounts[].options: every option runc accepts, sorted into what the kernel wants — mount(2)
// flags to set/clear, propagation changes, recursive attributes for mount_setattr
// (rro, rnosuid, ...), berth extensions (tmpcopyup, idmap, ridmap) and filesystem data.
#pragma once

#include <linux/mount.h>

#include <string>
#include <vector>

#include "berth/result.h"

namespace berth::linux::rootfs {

struct MountOptions {
  unsigned long flags = 0;        // MS_* to set
  unsigned long clear = 0;        // MS_* the options explicitly clear (rw, suid, ...)
  std::vector<unsigned long> propagation;  // MS_SHARED, MS_PRIVATE|MS_REC, ... in order
  mount_attr recursive{};         // rro, rnosuid, ... (attr_set / attr_clr / propagation unused)
  bool has_recursive = false;
  bool tmpcopyup = false;
  bool idmap = false;             // idmap / ridmap
  bool idmap_recursive = false;   // ridmap
  std::vector<std::string> data;  // passed to the filesystem ("mode=755", "size=64k")

  bool bind() const;
  std::string data_string() const;  // data joined with ','
};

// Parses one mount's options. Never fails on unknown words: they are filesystem data,
// as with runc. (Conflicts such as "ro,rw": the last one wins, as with mount(8).)
MountOptions parse_mount_options(const std::vector<std::string>& options);

// Every option name berth understands (for `features`.mountOptions).
std::vector<std::string> known_mount_options();

}  // namespace berth::linux::rootfs
