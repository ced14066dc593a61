// v1 hugetlb controller: linux.resources.hugepageLimits[] → hugetlb.<size>.limit_in_bytes
// (and .rsvd.limit_in_bytes where the kernel has reservation accounting); usage statistics.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "cgroups/v1/v1.h"
#include "util/strings.h"

namespace berth::cgroups::v1 {
namespace {

std::string field(size_t i) { return "linux.resources.hugepageLimits[" + std::to_string(i) + "]"; }

std::string first_field(const SetContext& ctx) {
  return ctx.r.hugepage_limits.empty() ? "" : field(0);
}

Status set(const Dir& d, const SetContext& ctx) {
  for (size_t i = 0; i < ctx.r.hugepage_limits.size(); ++i) {
    const auto& h = ctx.r.hugepage_limits[i];
    if (h.page_size.empty() || h.page_size.find('/') != std::string::npos)
      return Error::invalid_spec(field(i) + ".pageSize: invalid page size \"" + h.page_size + "\"");
    std::string base = "hugetlb." + h.page_size;
    BERTH_TRY(write_field(d, base + ".limit_in_bytes", std::to_string(h.limit), field(i)));
    // runc also limits reservations so that a mapping cannot reserve beyond the limit.
    if (d.exists(base + ".rsvd.limit_in_bytes"))
      BERTH_TRY(write_field(d, base + ".rsvd.limit_in_bytes", std::to_string(h.limit), field(i)));
  }
  return ok();
}

// Page sizes present in the directory: hugetlb.<size>.usage_in_bytes.
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
    if (!str::starts_with(n, "hugetlb.") || !str::ends_with(n, ".usage_in_bytes")) continue;
    auto size = n.substr(8, n.size() - 8 - 15);
    if (size.find('.') == std::string_view::npos) out.emplace_back(size);
  }
  ::closedir(dir);
  return out;
}

Status stats(const Dir& d, Stats& s) {
  for (const auto& size : sizes(d)) {
    std::string base = "hugetlb." + size;
    HugetlbStats h;
    h.usage = d.read_u64_or(base + ".usage_in_bytes", 0);
    h.max = d.read_u64_or(base + ".max_usage_in_bytes", 0);
    h.failcnt = d.read_u64_or(base + ".failcnt", 0);
    s.hugetlb[size] = h;
  }
  return ok();
}

}  // namespace

const Controller kHugetlb = {"hugetlb", first_field, set, stats};

}  // namespace berth::cgroups::v1
