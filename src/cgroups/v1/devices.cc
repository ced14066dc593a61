// v1 devices controller: the final device rule list (linux.resources.devices + runc's
// default allow-list + GPU/RDMA rules) → devices.deny/devices.allow.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "cgroups/common/device_state.h"
#include "cgroups/v1/v1.h"
#include "util/unique_fd.h"

namespace berth::cgroups::v1 {
namespace {

constexpr const char* kField = "linux.resources.devices";

std::string first_field(const SetContext& ctx) {
  return ctx.devices && !ctx.devices->empty() ? kField : "";
}

// Keeps devices.allow and devices.deny open across the lines: one open per file, then one
// write(2) per rule (the kernel takes one rule per write).
class Writer {
 public:
  explicit Writer(const Dir& d) : d_(d) {}
  Status write(const DeviceWrite& w) {
    UniqueFd& fd = w.allow ? allow_ : deny_;
    const char* file = w.allow ? "devices.allow" : "devices.deny";
    if (!fd) {
      fd.reset(::openat(d_.fd(), file, O_WRONLY | O_TRUNC | O_CLOEXEC));
      if (!fd) return Error::sys(errno, "open " + d_.path() + "/" + file).context(kField);
    }
    ssize_t n;
    do n = ::write(fd.get(), w.line.data(), w.line.size()); while (n < 0 && errno == EINTR);
    if (n < 0)
      return Error::sys(errno, "write \"" + w.line + "\" to " + d_.path() + "/" + file).context(kField);
    return ok();
  }

 private:
  const Dir& d_;
  UniqueFd allow_, deny_;
};

Status set(const Dir& d, const SetContext& ctx) {
  if (!ctx.devices) return ok();
  DeviceState target = DeviceState::from_rules(*ctx.devices);
  // A fresh cgroup's rules are its parent's, unknown here: reset. A running container's
  // come from devices.list, so an update writes only the difference.
  DeviceState current;
  if (ctx.update) {
    BERTH_ASSIGN(auto list, d.read("devices.list"));
    auto parsed = DeviceState::from_list(list);
    if (!parsed) return std::move(parsed).error().context(kField);
    current = std::move(*parsed);
  } else {
    current = DeviceState::from_list("a *:* rwm").value();
  }
  Writer w(d);
  for (const auto& line : transition(current, target)) BERTH_TRY(w.write(line));
  return ok();
}

}  // namespace

const Controller kDevices = {"devices", first_field, set, nullptr};

}  // namespace berth::cgroups::v1
