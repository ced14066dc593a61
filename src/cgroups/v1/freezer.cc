// v1 freezer controller (pause/resume): freezer.state FROZEN/THAWED.
#include <time.h>

#include <cerrno>

#include "cgroups/v1/v1.h"
#include "util/strings.h"

namespace berth::cgroups::v1 {
namespace {

std::string no_field(const SetContext&) { return {}; }
Status no_set(const Dir&, const SetContext&) { return ok(); }

void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (::nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

Result<std::string> state(const Dir& d) {
  BERTH_ASSIGN(auto s, d.read("freezer.state"));
  return std::string(str::trim(s));
}

}  // namespace

// A v1 cgroup can stay FREEZING while tasks keep forking or joining (cgroup v2 does not
// have this bug). As runc does: write FROZEN again until the state reads FROZEN, with an
// occasional short sleep, and an occasional thaw-and-retry to break a stuck FREEZING.
Status freeze(const Dir& d) {
  for (int i = 0; i < 1000; ++i) {
    if (i % 50 == 49) {
      (void)d.write("freezer.state", "THAWED");
      sleep_us(10000);
    }
    BERTH_TRY(d.write("freezer.state", "FROZEN"));
    if (i % 25 == 24) sleep_us(10);
    BERTH_ASSIGN(auto s, state(d));
    if (s == "FROZEN") return ok();
    if (s != "FREEZING") return Error::generic("unexpected freezer state " + s + " while freezing");
  }
  (void)d.write("freezer.state", "THAWED");
  return Error::sys(EBUSY, "unable to freeze " + d.path());
}

Status thaw(const Dir& d) { return d.write("freezer.state", "THAWED"); }

Result<bool> frozen(const Dir& d) {
  BERTH_ASSIGN(auto s, state(d));
  return s == "FROZEN";
}

const Controller kFreezer = {"freezer", no_field, no_set, nullptr};

}  // namespace berth::cgroups::v1
