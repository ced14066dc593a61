// process.capabilities (see caps.h).
#include "linux/caps.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/sys.h"
#include "spec/names.h"
#include <algorithm>

#include "util/file.h"
#include "util/log.h"
#include "util/strings.h"

namespace berth::linux {
namespace {

uint64_t bits_of(const std::vector<std::string>& names, std::vector<std::string>* ignored) {
  const auto& all = spec::names::capabilities();
  uint64_t out = 0;
  for (const auto& n : names) {
    int idx = -1;
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i] == n) idx = static_cast<int>(i);
    if (idx < 0 || idx > last_cap()) {
      if (ignored) ignored->push_back(n);
      continue;
    }
    out |= uint64_t{1} << idx;
  }
  return out;
}

}  // namespace

int last_cap() {
  static int v = [] {
    auto t = file::read("/proc/sys/kernel/cap_last_cap");
    if (t) {
      auto n = str::parse_i64(str::trim(*t));
      if (n && *n > 0 && *n < 64) return static_cast<int>(*n);
    }
    return CAP_LAST_CAP;
  }();
  return v;
}

CapSets resolve_caps(const spec::Capabilities& c, std::vector<std::string>* ignored) {
  CapSets s;
  s.bounding = bits_of(c.bounding, ignored);
  s.effective = bits_of(c.effective, ignored);
  s.inheritable = bits_of(c.inheritable, ignored);
  s.permitted = bits_of(c.permitted, ignored);
  s.ambient = bits_of(c.ambient, ignored);
  return s;
}

// runc's text and order: each ignored name once, sorted, in one warning.
Result<CapSets> caps_from_spec(const spec::Capabilities& caps, const std::string& where) {
  (void)where;
  std::vector<std::string> ignored;
  CapSets out = resolve_caps(caps, &ignored);
  std::sort(ignored.begin(), ignored.end());
  ignored.erase(std::unique(ignored.begin(), ignored.end()), ignored.end());
  if (!ignored.empty()) log::warn("ignoring unknown or unavailable capabilities: [" + str::join(ignored, " ") + "]");
  return out;
}

std::vector<std::string> cap_names(uint64_t set) {
  std::vector<std::string> out;
  const auto& all = spec::names::capabilities();
  for (size_t i = 0; i < all.size() && i < 64; ++i)
    if (set & (uint64_t{1} << i)) out.emplace_back(all[i]);
  return out;
}

Status caps_before_setuid(Sys& sys, const CapSets& caps) {
  BERTH_TRY(sys.prctl(PR_SET_KEEPCAPS, 1).context("keep capabilities"));
  return sys.drop_bounding_caps(caps.bounding);
}

Status caps_after_setuid(Sys& sys, const CapSets& caps) {
  BERTH_TRY(sys.prctl(PR_SET_KEEPCAPS, 0).context("clear keep capabilities"));
  BERTH_TRY(sys.capset(caps));
  return sys.set_ambient_caps(caps.ambient);
}

Status drop_bounding_caps(uint64_t keep) {
  for (int c = 0; c <= last_cap(); ++c) {
    if (keep & (uint64_t{1} << c)) continue;
    if (::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
      return Error::sys(errno, "drop bounding capability " + std::to_string(c));
  }
  return ok();
}

// capset(2) itself, version 3 (64 bits in two words), rather than libcap's cap_set_proc:
// it may run after the container's seccomp filter is loaded (payload.cc, without
// noNewPrivileges), where nothing may allocate and only capset itself may be called.
Status set_cap_sets(const CapSets& caps) {
  struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  for (int i = 0; i < 2; ++i) {
    data[i].effective = static_cast<uint32_t>(caps.effective >> (32 * i));
    data[i].permitted = static_cast<uint32_t>(caps.permitted >> (32 * i));
    data[i].inheritable = static_cast<uint32_t>(caps.inheritable >> (32 * i));
  }
  if (::syscall(SYS_capset, &head, data) < 0) return Error::sys(errno, "set capabilities");
  return ok();
}

Status set_ambient_caps(uint64_t ambient) {
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return Error::sys(errno, "clear ambient capabilities");
  for (int c = 0; c <= last_cap(); ++c) {
    if (!(ambient & (uint64_t{1} << c))) continue;
    // The kernel refuses an ambient cap that is not both permitted and inheritable; runc
    // ignores those, and so does berth.
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0 && errno != EPERM)
      return Error::sys(errno, "raise ambient capability " + std::to_string(c));
  }
  return ok();
}

}  // namespace berth::linux
