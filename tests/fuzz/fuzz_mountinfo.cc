// libFuzzer target: /proc/self/mountinfo. What parse_mountinfo accepts is written back as
// the kernel writes it (space, tab, newline and backslash as \ooo) and must parse to the
// same mounts; mount_containing finds each mount's own mountpoint; and the cgroup layout
// detection, which reads the same file with its own field splitting, must see every cgroup
// mount with the root, mountpoint and type that parse_mountinfo sees.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cgroups/detect.h"
#include "util/mountinfo.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string format(const berth::MountInfo& m) {
  std::string line = std::to_string(m.id) + " " + std::to_string(m.parent) + " 0:0 " + escape(m.root) + " " +
                     escape(m.mountpoint) + " " + m.options;
  if (!m.optional.empty()) line += " " + m.optional;
  return line + " - " + m.fstype + " " + escape(m.source) + " " + m.super_options + "\n";
}

bool same(const berth::MountInfo& a, const berth::MountInfo& b) {
  return a.id == b.id && a.parent == b.parent && a.root == b.root && a.mountpoint == b.mountpoint &&
         a.options == b.options && a.optional == b.optional && a.fstype == b.fstype && a.source == b.source &&
         a.super_options == b.super_options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace berth;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto mounts = parse_mountinfo(text);
  auto host = cgroups::parse_host(text, "12:cpu,cpuacct:/a\n3:name=systemd:/b\n0::/c\n");
  if (!mounts) return 0;

  std::string out;
  for (const auto& m : *mounts) out += format(m);
  auto again = parse_mountinfo(out);
  check(again.ok() && again->size() == mounts->size());
  for (size_t i = 0; i < mounts->size(); ++i) check(same((*again)[i], (*mounts)[i]));

  for (size_t i = 0; i < mounts->size() && i < 64; ++i) {
    const std::string& mp = (*mounts)[i].mountpoint;
    const MountInfo* best = mount_containing(*mounts, mp);
    check(best != nullptr && (best->mountpoint == mp || best->mountpoint == "/"));
    (void)(*mounts)[i].shared();
  }

  if (!host) return 0;
  auto seen = [&](const cgroups::Hierarchy& h, bool v2) {
    for (const auto& m : *mounts)
      if (m.root == h.root && m.mountpoint == h.mountpoint && m.fstype == (v2 ? "cgroup2" : "cgroup")) return true;
    return false;
  };
  for (const auto& h : host->v1) check(!h.controllers.empty() && seen(h, false));
  if (host->unified) check(seen(*host->unified, true));
  return 0;
}
