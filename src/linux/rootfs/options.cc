// mounts[].options parsing (see options.h): the option tables.
#include "linux/rootfs/options.h"

#include <sys/mount.h>

#include <cstring>

#include "util/strings.h"

namespace berth::linux::rootfs {
namespace {

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

struct FlagOption {
  const char* name;
  bool clear;
  unsigned long flag;
};

const FlagOption kFlags[] = {
    {"async", true, MS_SYNCHRONOUS},   {"atime", true, MS_NOATIME},
    {"bind", false, MS_BIND},          {"defaults", false, 0},
    {"dev", true, MS_NODEV},           {"diratime", true, MS_NODIRATIME},
    {"dirsync", false, MS_DIRSYNC},    {"exec", true, MS_NOEXEC},
    {"iversion", false, MS_I_VERSION}, {"lazytime", false, MS_LAZYTIME},
    {"loud", true, MS_SILENT},         {"mand", false, MS_MANDLOCK},
    {"noatime", false, MS_NOATIME},    {"nodev", false, MS_NODEV},
    {"nodiratime", false, MS_NODIRATIME}, {"noexec", false, MS_NOEXEC},
    {"noiversion", true, MS_I_VERSION}, {"nolazytime", true, MS_LAZYTIME},
    {"nomand", true, MS_MANDLOCK},     {"norelatime", true, MS_RELATIME},
    {"nostrictatime", true, MS_STRICTATIME}, {"nosuid", false, MS_NOSUID},
    {"nosymfollow", false, MS_NOSYMFOLLOW}, {"rbind", false, MS_BIND | MS_REC},
    {"relatime", false, MS_RELATIME},  {"remount", false, MS_REMOUNT},
    {"ro", false, MS_RDONLY},          {"rw", true, MS_RDONLY},
    {"silent", false, MS_SILENT},      {"strictatime", false, MS_STRICTATIME},
    {"suid", true, MS_NOSUID},         {"sync", false, MS_SYNCHRONOUS},
    {"symfollow", true, MS_NOSYMFOLLOW},
};

struct PropagationOption {
  const char* name;
  unsigned long flag;
};

const PropagationOption kPropagation[] = {
    {"private", MS_PRIVATE},         {"rprivate", MS_PRIVATE | MS_REC},
    {"shared", MS_SHARED},           {"rshared", MS_SHARED | MS_REC},
    {"slave", MS_SLAVE},             {"rslave", MS_SLAVE | MS_REC},
    {"unbindable", MS_UNBINDABLE},   {"runbindable", MS_UNBINDABLE | MS_REC},
};

struct RecursiveOption {
  const char* name;
  bool clear;
  uint64_t attr;
};

// mount_setattr(AT_RECURSIVE) attributes. The atime family is one field (MOUNT_ATTR__ATIME):
// setting one value means clearing the field first.
const RecursiveOption kRecursive[] = {
    {"rro", false, MOUNT_ATTR_RDONLY},          {"rrw", true, MOUNT_ATTR_RDONLY},
    {"rnosuid", false, MOUNT_ATTR_NOSUID},      {"rsuid", true, MOUNT_ATTR_NOSUID},
    {"rnodev", false, MOUNT_ATTR_NODEV},        {"rdev", true, MOUNT_ATTR_NODEV},
    {"rnoexec", false, MOUNT_ATTR_NOEXEC},      {"rexec", true, MOUNT_ATTR_NOEXEC},
    {"rnodiratime", false, MOUNT_ATTR_NODIRATIME}, {"rdiratime", true, MOUNT_ATTR_NODIRATIME},
    {"rrelatime", false, MOUNT_ATTR_RELATIME},  {"rnorelatime", true, MOUNT_ATTR_RELATIME},
    {"rnoatime", false, MOUNT_ATTR_NOATIME},    {"ratime", true, MOUNT_ATTR_NOATIME},
    {"rstrictatime", false, MOUNT_ATTR_STRICTATIME}, {"rnostrictatime", true, MOUNT_ATTR_STRICTATIME},
    {"rnosymfollow", false, MOUNT_ATTR_NOSYMFOLLOW}, {"rsymfollow", true, MOUNT_ATTR_NOSYMFOLLOW},
};

bool is_atime_attr(uint64_t a) {
  return a == MOUNT_ATTR_RELATIME || a == MOUNT_ATTR_NOATIME || a == MOUNT_ATTR_STRICTATIME;
}

bool apply_recursive(MountOptions& o, const std::string& name) {
  for (const auto& r : kRecursive) {
    if (name != r.name) continue;
    o.has_recursive = true;
    if (is_atime_attr(r.attr)) {
      o.recursive.attr_clr |= MOUNT_ATTR__ATIME;
      if (!r.clear) o.recursive.attr_set = (o.recursive.attr_set & ~MOUNT_ATTR__ATIME) | r.attr;
      else o.recursive.attr_set &= ~MOUNT_ATTR__ATIME;  // back to relatime (the kernel default, 0)
    } else if (r.clear) {
      o.recursive.attr_clr |= r.attr;
      o.recursive.attr_set &= ~r.attr;
    } else {
      o.recursive.attr_set |= r.attr;
      o.recursive.attr_clr &= ~r.attr;
    }
    return true;
  }
  return false;
}

}  // namespace

bool MountOptions::bind() const { return (flags & MS_BIND) != 0; }

std::string MountOptions::data_string() const { return str::join(data, ","); }

MountOptions parse_mount_options(const std::vector<std::string>& options) {
  MountOptions o;
  for (const auto& opt : options) {
    bool matched = false;
    for (const auto& f : kFlags) {
      if (opt != f.name) continue;
      if (f.clear) {
        o.flags &= ~f.flag;
        o.clear |= f.flag;
      } else {
        o.flags |= f.flag;
        o.clear &= ~f.flag;
      }
      matched = true;
      break;
    }
    if (matched) continue;
    for (const auto& p : kPropagation) {
      if (opt == p.name) {
        o.propagation.push_back(p.flag);
        matched = true;
        break;
      }
    }
    if (matched || apply_recursive(o, opt)) continue;
    if (opt == "tmpcopyup") o.tmpcopyup = true;
    else if (opt == "idmap") o.idmap = true;
    else if (opt == "ridmap") o.idmap = o.idmap_recursive = true;
    else if (!opt.empty()) o.data.push_back(opt);
  }
  return o;
}

std::vector<std::string> known_mount_options() {
  std::vector<std::string> out;
  for (const auto& f : kFlags) out.push_back(f.name);
  for (const auto& p : kPropagation) out.push_back(p.name);
  for (const auto& r : kRecursive) out.push_back(r.name);
  out.push_back("tmpcopyup");
  out.push_back("idmap");
  out.push_back("ridmap");
  return out;
}

}  // namespace berth::linux::rootfs
