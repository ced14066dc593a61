// process.rlimits (see rlimits.h).
#include "linux/rlimits.h"

#include <sys/resource.h>

namespace berth::linux {

int rlimit_resource(const std::string& name) {
  static const std::pair<const char*, int> kMap[] = {
      {"RLIMIT_AS", RLIMIT_AS},         {"RLIMIT_CORE", RLIMIT_CORE},         {"RLIMIT_CPU", RLIMIT_CPU},
      {"RLIMIT_DATA", RLIMIT_DATA},     {"RLIMIT_FSIZE", RLIMIT_FSIZE},       {"RLIMIT_LOCKS", RLIMIT_LOCKS},
      {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK}, {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
      {"RLIMIT_NOFILE", RLIMIT_NOFILE}, {"RLIMIT_NPROC", RLIMIT_NPROC},       {"RLIMIT_RSS", RLIMIT_RSS},
      {"RLIMIT_RTPRIO", RLIMIT_RTPRIO}, {"RLIMIT_RTTIME", RLIMIT_RTTIME},     {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
      {"RLIMIT_STACK", RLIMIT_STACK}};
  for (const auto& [n, v] : kMap)
    if (name == n) return v;
  return -1;
}

Status apply_rlimits(const std::vector<spec::Rlimit>& rlimits) {
  for (const auto& r : rlimits) {
    int res = rlimit_resource(r.type);
    if (res < 0) return Error::invalid_spec("process.rlimits: unknown type " + r.type);
    struct rlimit lim = {r.soft, r.hard};
    if (::setrlimit(res, &lim) < 0)
      return Error::sys(errno, "set rlimit " + r.type + " (soft " + std::to_string(r.soft) + ", hard " +
                                   std::to_string(r.hard) + ")");
  }
  return ok();
}

}  // namespace berth::linux
