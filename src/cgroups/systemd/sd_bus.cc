// The real systemd bus (connect_system_bus, bus.h): sd-bus from libsystemd, over systemd's
// private socket for root (else the system bus), dlopen'd on the first --systemd-cgroup
// call only (every other berth call stays free of libsystemd and its compression and
// crypto libraries, which would cost each invocation startup time).
#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "cgroups/systemd/bus.h"
#include "util/log.h"

namespace berth::cgroups::systemd {
namespace {

constexpr const char* kDest = "org.freedesktop.systemd1";
constexpr const char* kPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";

// The sd-bus entry points berth uses, resolved from libsystemd.so.0.
struct Lib {
#define BERTH_SD(name) decltype(&::name) name = nullptr;
  BERTH_SD(sd_bus_open_system)
  BERTH_SD(sd_bus_open_user)
  BERTH_SD(sd_bus_new)
  BERTH_SD(sd_bus_set_address)
  BERTH_SD(sd_bus_start)
  BERTH_SD(sd_bus_get_fd)
  BERTH_SD(sd_bus_flush_close_unref)
  BERTH_SD(sd_bus_set_method_call_timeout)
  BERTH_SD(sd_bus_message_new_method_call)
  BERTH_SD(sd_bus_message_unref)
  BERTH_SD(sd_bus_message_append_basic)
  BERTH_SD(sd_bus_message_append_array)
  BERTH_SD(sd_bus_message_open_container)
  BERTH_SD(sd_bus_message_close_container)
  BERTH_SD(sd_bus_message_read_basic)
  BERTH_SD(sd_bus_message_enter_container)
  BERTH_SD(sd_bus_message_exit_container)
  BERTH_SD(sd_bus_call)
  BERTH_SD(sd_bus_error_free)
  BERTH_SD(sd_bus_error_get_errno)
  BERTH_SD(sd_bus_match_signal_async)
  BERTH_SD(sd_bus_process)
  BERTH_SD(sd_bus_wait)
  BERTH_SD(sd_bus_slot_unref)
#undef BERTH_SD
};

Result<const Lib*> lib() {
  static Lib l;
  static std::string failed;
  static bool loaded = false;
  if (loaded) return &l;
  if (!failed.empty()) return Error::generic(failed);
  void* h = ::dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    failed = "systemd cgroup driver: cannot load libsystemd.so.0: " + std::string(::dlerror());
    return Error::generic(failed);
  }
  bool ok = true;
#define BERTH_SD(name) ok = ok && (l.name = reinterpret_cast<decltype(l.name)>(::dlsym(h, #name)));
  BERTH_SD(sd_bus_open_system) BERTH_SD(sd_bus_open_user) BERTH_SD(sd_bus_new) BERTH_SD(sd_bus_set_address)
  BERTH_SD(sd_bus_start) BERTH_SD(sd_bus_get_fd) BERTH_SD(sd_bus_flush_close_unref) BERTH_SD(sd_bus_set_method_call_timeout)
  BERTH_SD(sd_bus_message_new_method_call) BERTH_SD(sd_bus_message_unref) BERTH_SD(sd_bus_message_append_basic)
  BERTH_SD(sd_bus_message_append_array) BERTH_SD(sd_bus_message_open_container)
  BERTH_SD(sd_bus_message_close_container) BERTH_SD(sd_bus_message_read_basic)
  BERTH_SD(sd_bus_message_enter_container) BERTH_SD(sd_bus_message_exit_container) BERTH_SD(sd_bus_call)
  BERTH_SD(sd_bus_error_free) BERTH_SD(sd_bus_error_get_errno) BERTH_SD(sd_bus_match_signal_async)
  BERTH_SD(sd_bus_process) BERTH_SD(sd_bus_wait) BERTH_SD(sd_bus_slot_unref)
#undef BERTH_SD
  if (!ok) {
    failed = "systemd cgroup driver: libsystemd.so.0 lacks sd-bus (systemd >= 240 needed)";
    return Error::generic(failed);
  }
  loaded = true;
  return &l;
}

uint64_t now_usec() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

// --debug only: how long one exchange with systemd took, "systemd: StartTransientUnit 0.412 ms"
// (where a --systemd-cgroup call's time goes, docs/performance.md); free without --debug.
class Timed {
 public:
  explicit Timed(const char* what) : what_(what), t0_(log::debug_enabled() ? now_usec() : 0) {}
  Timed(const Timed&) = delete;
  ~Timed() {
    if (t0_ == 0) return;
    char buf[32];
    snprintf(buf, sizeof buf, " %.3f ms", static_cast<double>(now_usec() - t0_) / 1e3);
    log::debug(std::string("systemd: ") + what_ + buf);
  }

 private:
  const char* what_;
  uint64_t t0_;
};

class Message {
 public:
  Message(const Lib* l, sd_bus_message* m) : l_(l), m_(m) {}
  Message(const Message&) = delete;
  ~Message() { if (m_) l_->sd_bus_message_unref(m_); }
  sd_bus_message* get() const { return m_; }
  sd_bus_message** out() { return &m_; }

 private:
  const Lib* l_;
  sd_bus_message* m_;
};

class SdBus final : public Bus {
 public:
  // direct: connected to systemd itself (its private socket), no bus daemon in between.
  SdBus(const Lib* l, sd_bus* bus, bool direct) : l_(l), bus_(bus), direct_(direct) {}
  ~SdBus() override {
    Timed t("close");
    if (match_) l_->sd_bus_slot_unref(match_);
    l_->sd_bus_flush_close_unref(bus_);
  }

  Status watch_jobs() {
    // Installed before any job exists: JobRemoved may come in the same read as the reply.
    // On the bus the AddMatch is sent but its reply not waited for (as crun): the daemon
    // handles one connection's messages in order, so the match is in place before any
    // call that makes a job reaches systemd; a refused AddMatch closes the connection
    // (sd-bus), so the next call fails instead of waiting. On systemd's private socket it
    // is a local filter only (systemd sends its signals to every direct client, and they
    // carry no sender there, so none is matched).
    int r = l_->sd_bus_match_signal_async(bus_, &match_, direct_ ? nullptr : kDest, kPath, kManager, "JobRemoved",
                                          &SdBus::on_job_removed, nullptr, this);
    if (r < 0) return Error::sys(-r, "systemd: watch JobRemoved");
    return ok();
  }

  Result<std::string> start_transient_unit(const std::string& name, const std::vector<Property>& props) override {
    Timed t("StartTransientUnit");
    Message m(l_, nullptr);
    BERTH_TRY(new_call("StartTransientUnit", m));
    BERTH_TRY(append_str(m, name));
    BERTH_TRY(append_str(m, "replace"));
    BERTH_TRY(append_props(m, props));
    BERTH_TRY(chk(l_->sd_bus_message_open_container(m.get(), 'a', "(sa(sv))")));
    BERTH_TRY(chk(l_->sd_bus_message_close_container(m.get())));
    return call_for_path(m, "start unit " + name);
  }

  Result<std::string> stop_unit(const std::string& name) override {
    Timed t("StopUnit");
    Message m(l_, nullptr);
    BERTH_TRY(new_call("StopUnit", m));
    BERTH_TRY(append_str(m, name));
    BERTH_TRY(append_str(m, "replace"));
    return call_for_path(m, "stop unit " + name);
  }

  Result<std::string> wait_job(const std::string& job, int timeout_ms) override {
    Timed t("JobRemoved wait");
    uint64_t deadline = now_usec() + static_cast<uint64_t>(timeout_ms) * 1000u;
    for (;;) {
      if (auto it = done_.find(job); it != done_.end()) return it->second;
      int r = l_->sd_bus_process(bus_, nullptr);
      if (r < 0) return Error::sys(-r, "systemd: read the bus");
      if (r > 0) continue;
      uint64_t now = now_usec();
      if (now >= deadline) return Error::sys(ETIMEDOUT, "systemd did not finish job " + job + " in " +
                                                            std::to_string(timeout_ms / 1000) + " s");
      r = l_->sd_bus_wait(bus_, deadline - now);
      if (r < 0 && r != -EINTR) return Error::sys(-r, "systemd: wait on the bus");
    }
  }

  Status set_unit_properties(const std::string& name, const std::vector<Property>& props) override {
    Timed t("SetUnitProperties");
    Message m(l_, nullptr);
    BERTH_TRY(new_call("SetUnitProperties", m));
    BERTH_TRY(append_str(m, name));
    int runtime = 1;  // runtime only, as runc: nothing persists under /etc
    BERTH_TRY(chk(l_->sd_bus_message_append_basic(m.get(), 'b', &runtime)));
    BERTH_TRY(append_props(m, props));
    Message reply(l_, nullptr);
    return call(m, reply, "set properties of unit " + name);
  }

  Status reset_failed_unit(const std::string& name) override {
    Timed t("ResetFailedUnit");
    Message m(l_, nullptr);
    BERTH_TRY(new_call("ResetFailedUnit", m));
    BERTH_TRY(append_str(m, name));
    Message reply(l_, nullptr);
    return call(m, reply, "reset failed unit " + name);
  }

  Result<std::string> version() override { return manager_string("Version", "get the systemd version"); }

  Result<std::string> control_group() override {
    return manager_string("ControlGroup", "get the manager's control group");
  }

 private:
  static int on_job_removed(sd_bus_message* m, void* self_ptr, sd_bus_error*) {
    auto* self = static_cast<SdBus*>(self_ptr);
    uint32_t id = 0;
    const char *path = nullptr, *unit = nullptr, *result = nullptr;
    const Lib* l = self->l_;
    if (l->sd_bus_message_read_basic(m, 'u', &id) < 0 || l->sd_bus_message_read_basic(m, 'o', &path) < 0 ||
        l->sd_bus_message_read_basic(m, 's', &unit) < 0 || l->sd_bus_message_read_basic(m, 's', &result) < 0)
      return 0;
    if (path && result) self->done_[path] = result;
    return 0;
  }

  // A string property of the Manager (org.freedesktop.DBus.Properties.Get).
  Result<std::string> manager_string(const char* name, const std::string& what) {
    Timed t(name);
    Message m(l_, nullptr);
    int r = l_->sd_bus_message_new_method_call(bus_, m.out(), kDest, kPath, "org.freedesktop.DBus.Properties", "Get");
    if (r < 0) return Error::sys(-r, "systemd: new call");
    BERTH_TRY(append_str(m, kManager));
    BERTH_TRY(append_str(m, name));
    Message reply(l_, nullptr);
    BERTH_TRY(call(m, reply, what));
    const char* v = nullptr;
    BERTH_TRY(chk(l_->sd_bus_message_enter_container(reply.get(), 'v', "s")));
    BERTH_TRY(chk(l_->sd_bus_message_read_basic(reply.get(), 's', &v)));
    return std::string(v ? v : "");
  }

  Status chk(int r) const {
    if (r < 0) return Error::sys(-r, "systemd: build message");
    return ok();
  }
  Status new_call(const char* method, Message& m) {
    return chk(l_->sd_bus_message_new_method_call(bus_, m.out(), kDest, kPath, kManager, method));
  }
  Status append_str(Message& m, const std::string& s) { return chk(l_->sd_bus_message_append_basic(m.get(), 's', s.c_str())); }

  Status append_basic(Message& m, const Value& v) {
    char t = v.sig[0];
    switch (t) {
      case 'b': { int b = v.b; return chk(l_->sd_bus_message_append_basic(m.get(), t, &b)); }
      case 'y': { uint8_t x = static_cast<uint8_t>(v.u); return chk(l_->sd_bus_message_append_basic(m.get(), t, &x)); }
      case 'q': { uint16_t x = static_cast<uint16_t>(v.u); return chk(l_->sd_bus_message_append_basic(m.get(), t, &x)); }
      case 'u': { uint32_t x = static_cast<uint32_t>(v.u); return chk(l_->sd_bus_message_append_basic(m.get(), t, &x)); }
      case 't': return chk(l_->sd_bus_message_append_basic(m.get(), t, &v.u));
      case 'n': { int16_t x = static_cast<int16_t>(v.i); return chk(l_->sd_bus_message_append_basic(m.get(), t, &x)); }
      case 'i': { int32_t x = static_cast<int32_t>(v.i); return chk(l_->sd_bus_message_append_basic(m.get(), t, &x)); }
      case 'x': return chk(l_->sd_bus_message_append_basic(m.get(), t, &v.i));
      case 'd': return chk(l_->sd_bus_message_append_basic(m.get(), t, &v.d));
      case 's': return chk(l_->sd_bus_message_append_basic(m.get(), t, v.s.c_str()));
      default: return Error::invalid_argument("systemd: unsupported property type " + v.sig);
    }
  }

  Status append_value(Message& m, const Value& v) {
    if (v.sig == "ay") return chk(l_->sd_bus_message_append_array(m.get(), 'y', v.bytes.data(), v.bytes.size()));
    if (v.sig == "a(ss)") {
      BERTH_TRY(chk(l_->sd_bus_message_open_container(m.get(), 'a', "(ss)")));
      for (const auto& [a, b] : v.pairs) {
        BERTH_TRY(chk(l_->sd_bus_message_open_container(m.get(), 'r', "ss")));
        BERTH_TRY(append_str(m, a));
        BERTH_TRY(append_str(m, b));
        BERTH_TRY(chk(l_->sd_bus_message_close_container(m.get())));
      }
      return chk(l_->sd_bus_message_close_container(m.get()));
    }
    if (v.sig.size() == 2 && v.sig[0] == 'a') {
      BERTH_TRY(chk(l_->sd_bus_message_open_container(m.get(), 'a', v.sig.c_str() + 1)));
      for (const auto& item : v.items) BERTH_TRY(append_basic(m, item));
      return chk(l_->sd_bus_message_close_container(m.get()));
    }
    if (v.sig.size() != 1) return Error::invalid_argument("systemd: unsupported property type " + v.sig);
    return append_basic(m, v);
  }

  Status append_props(Message& m, const std::vector<Property>& props) {
    BERTH_TRY(chk(l_->sd_bus_message_open_container(m.get(), 'a', "(sv)")));
    for (const auto& p : props) {
      BERTH_TRY(chk(l_->sd_bus_message_open_container(m.get(), 'r', "sv")));
      BERTH_TRY(append_str(m, p.name));
      BERTH_TRY(chk(l_->sd_bus_message_open_container(m.get(), 'v', p.value.sig.c_str())));
      BERTH_TRY(append_value(m, p.value).context("property " + p.name));
      BERTH_TRY(chk(l_->sd_bus_message_close_container(m.get())));
      BERTH_TRY(chk(l_->sd_bus_message_close_container(m.get())));
    }
    return chk(l_->sd_bus_message_close_container(m.get()));
  }

  Status call(Message& m, Message& reply, const std::string& what) {
    sd_bus_error err = SD_BUS_ERROR_NULL;
    int r = l_->sd_bus_call(bus_, m.get(), static_cast<uint64_t>(kCallTimeoutMs) * 1000u, &err, reply.out());
    if (r >= 0) return ok();
    int e = err.name ? l_->sd_bus_error_get_errno(&err) : -r;
    std::string msg = err.message ? err.message : (err.name ? err.name : std::strerror(-r));
    l_->sd_bus_error_free(&err);
    if (r == -ETIMEDOUT) msg = "systemd did not answer in " + std::to_string(kCallTimeoutMs / 1000) + " s";
    return Error::sys(e > 0 ? e : -r, "systemd: " + what + ": " + msg);
  }

  Result<std::string> call_for_path(Message& m, const std::string& what) {
    Message reply(l_, nullptr);
    BERTH_TRY(call(m, reply, what));
    const char* job = nullptr;
    BERTH_TRY(chk(l_->sd_bus_message_read_basic(reply.get(), 'o', &job)));
    return std::string(job ? job : "");
  }

  const Lib* l_;
  sd_bus* bus_;
  bool direct_;
  sd_bus_slot* match_ = nullptr;
  std::map<std::string, std::string> done_;  // job path → result
};

// systemd's own socket for root clients (what systemctl uses as root): every call on it
// is one hop to PID 1 instead of two through dbus-daemon, and it needs no Hello and no
// AddMatch. Only root can make that path; the peer is checked to be root all the same.
// nullptr when it is not there or not usable: the system bus is then used, as before.
sd_bus* open_private(const Lib* l) {
  if (::geteuid() != 0) return nullptr;
  sd_bus* bus = nullptr;
  if (l->sd_bus_new(&bus) < 0) return nullptr;
  struct ucred cred {};
  socklen_t len = sizeof cred;
  int fd = -1;
  if (l->sd_bus_set_address(bus, "unix:path=/run/systemd/private") < 0 || l->sd_bus_start(bus) < 0 ||
      (fd = l->sd_bus_get_fd(bus)) < 0 || ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
      cred.pid <= 0 || cred.uid != 0) {
    l->sd_bus_flush_close_unref(bus);
    return nullptr;
  }
  return bus;
}

Result<std::unique_ptr<Bus>> connect(bool user) {
  struct stat st;
  // runc's IsRunningSystemd (sd_booted): /run/systemd/system is a directory.
  if (::lstat("/run/systemd/system", &st) != 0 || !S_ISDIR(st.st_mode))
    return Error::generic("systemd not running on this host, cannot use systemd cgroups manager");
  const Lib* l = nullptr;
  {
    Timed t("dlopen libsystemd");
    BERTH_ASSIGN(l, lib());
  }
  Timed t("connect");
  sd_bus* bus = user ? nullptr : open_private(l);
  bool direct = bus != nullptr;
  int r = direct ? 0 : user ? l->sd_bus_open_user(&bus) : l->sd_bus_open_system(&bus);
  if (r < 0) {
    if (!user) return Error::sys(-r, "systemd cgroup driver: cannot connect to the system bus");
    return Error::sys(-r, "systemd cgroup driver (rootless): cannot connect to the user's bus "
                          "($DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus)");
  }
  log::debug(direct ? "systemd: connected to /run/systemd/private" : user ? "systemd: connected to the user's bus"
                                                                        : "systemd: connected to the system bus");
  auto out = std::make_unique<SdBus>(l, bus, direct);
  (void)l->sd_bus_set_method_call_timeout(bus, static_cast<uint64_t>(kCallTimeoutMs) * 1000u);
  BERTH_TRY(out->watch_jobs());
  return std::unique_ptr<Bus>(std::move(out));
}

}  // namespace

Result<std::unique_ptr<Bus>> connect_system_bus() { return connect(false); }
Result<std::unique_ptr<Bus>> connect_user_bus() { return connect(true); }

}  // namespace berth::cgroups::systemd
