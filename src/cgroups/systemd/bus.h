// The systemd Manager calls the systemd cgroup driver makes (StartTransientUnit, StopUnit,
// SetUnitProperties, ResetFailedUnit, the Version property, job completion), behind an
// interface that unit tests fake. connect_system_bus() and connect_user_bus() (rootless)
// are the real ones (sd-bus).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "berth/result.h"
#include "cgroups/systemd/value.h"

namespace berth::cgroups::systemd {

class Bus {
 public:
  virtual ~Bus() = default;
  // StartTransientUnit(name, "replace", props, []) → the job's object path. A unit that
  // exists already is Error::sys(EEXIST) (systemd's UnitExists).
  virtual Result<std::string> start_transient_unit(const std::string& name, const std::vector<Property>& props) = 0;
  // StopUnit(name, "replace") → the job's path. A unit systemd does not know: ENOENT.
  virtual Result<std::string> stop_unit(const std::string& name) = 0;
  // The result JobRemoved gives for `job` ("done", "failed", "canceled", ...); ETIMEDOUT
  // when systemd has not finished it within timeout_ms.
  virtual Result<std::string> wait_job(const std::string& job, int timeout_ms) = 0;
  virtual Status set_unit_properties(const std::string& name, const std::vector<Property>& props) = 0;
  virtual Status reset_failed_unit(const std::string& name) = 0;
  // The Manager's Version ("252.39-1~deb12u2").
  virtual Result<std::string> version() = 0;
  // The Manager's own ControlGroup: "/user.slice/user-1000.slice/user@1000.service" for a
  // user's manager, below which its units' cgroups lie ("" or "/" for the system's).
  virtual Result<std::string> control_group() = 0;
};

// How long berth waits for systemd: each call and each job (runc waits 30 s for a job).
inline constexpr int kCallTimeoutMs = 10000;
inline constexpr int kJobTimeoutMs = 30000;

// The system's manager through libsystemd, loaded on first use (dlopen), so that berth
// without --systemd-cgroup never maps it: for root over systemd's private socket (one hop,
// as systemctl), else, or when that socket is unusable, the system bus. Fails with one clear line when systemd is not running,
// libsystemd is missing, or the bus does not answer.
Result<std::unique_ptr<Bus>> connect_system_bus();
// The caller's own user bus, for rootless containers (runc's systemdUser): the user's
// systemd manager behind $DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus (sd-bus's
// sd_bus_open_user; Debian's dbus-user-session provides that socket).
Result<std::unique_ptr<Bus>> connect_user_bus();
inline Result<std::unique_ptr<Bus>> connect_bus(bool user) { return user ? connect_user_bus() : connect_system_bus(); }

// "v252.39-1" / "252" / "\"252-1.fc32\"" → 252 (runc's systemdVersionAtoi); -1 if none.
int parse_version(std::string_view v);

}  // namespace berth::cgroups::systemd
