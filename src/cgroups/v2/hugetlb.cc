// v2 hugetlb controller: linux.resources.hugepageLimits[] → hugetlb.<size>.max (and
// .rsvd.max where present); usage statistics (current, events "max" as failcnt).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "cgroups/v2/v2.h"
#include "util/strings.h"

namespace berth::cgroups::v2 {
namespace {

std::string field(size_t i) { return "linux.resources.hugepageLimits[" + std::to_string(i) + "]"; }
std::string no_field(const SetContext&) { return {}; }

Status set(const Dir& d, const SetContext& ctx) {
  for (size_t i = 0; i < ctx.r.hugepage_limits.size(); ++i) {
    const auto& h = ctx.r.hugepage_limits[i];
    if (h.page_size.empty() || h.page_size.find('/') != std::string::npos)
      return Error::invalid_spec(field(i) + ".pageSize: invalid page size \"" + h.page_size + "\"");
    std::string base = "hugetlb." + h.page_size;
    BERTH_TRY(write_field(d, base + ".max", std::to_string(h.limit), field(i)));
    if (d.exists(base + ".rsvd.max"))
      BERTH_TRY(write_field(d, base + ".rsvd.max", std::to_string(h.limit), field(i)));
  }
  return ok();
}

std::vector<std::string> sizes(const Dir& d) {
  std::vector<std::string> out;
  int fd = ::openat(d.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return out;
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return out;
  }
  while (struct dirent* e = ::readdir(dir)) {
    std::string_view n = e->d_name;
    if (!str::starts_with(n, "hugetlb.") || !str::ends_with(n, ".current")) continue;
    auto size = n.substr(8, n.size() - 8 - 8);
    if (size.find('.') == std::string_view::npos) out.emplace_back(size);
  }
  ::closedir(dir);
  return out;
}

Status stats(const Dir& d, Stats& s) {
  for (const auto& size : sizes(d)) {
    HugetlbStats h;
    h.usage = d.read_u64_or("hugetlb." + size + ".current", 0);
    if (auto ev = d.read_keyed("hugetlb." + size + ".events")) h.failcnt = (*ev)["max"];
    s.hugetlb[size] = h;
  }
  return ok();
}

}  // namespace

const Controller kHugetlb = {"hugetlb", no_field, set, stats};

}  // namespace berth::cgroups::v2
