// User namespace id maps (see userns.h).
#include "linux/userns.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/lookpath.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/unique_fd.h"

namespace berth::linux {
namespace {

bool own_id_only(const spec::IdMapping& m, unsigned id) { return m.size == 1 && m.host_id == id; }

std::string span_text(uint64_t start, uint64_t count) {
  return count == 1 ? std::to_string(start) : std::to_string(start) + "-" + std::to_string(start + count - 1);
}

// One map: direct when privileged or when it maps the caller's own id alone; otherwise the
// helper, with every entry either the caller's own id (newuidmap allows that) or inside
// one subordinate range. Returns the helper path ("" = direct).
Result<std::string> plan_one(const std::vector<spec::IdMapping>& maps, const MapCaller& c, bool gid) {
  const char* field = gid ? "linux.gidMappings" : "linux.uidMappings";
  const char* kind = gid ? "gid" : "uid";
  unsigned own = gid ? c.gid : c.uid;
  if (c.privileged || maps.empty() || (maps.size() == 1 && own_id_only(maps[0], own))) return std::string();
  const std::string& helper = gid ? c.newgidmap : c.newuidmap;
  std::string helper_name = gid ? "newgidmap" : "newuidmap";
  std::string file = gid ? "/etc/subgid" : "/etc/subuid";
  if (helper.empty())
    return Error::invalid_spec(std::string("config.json: ") + field + ": mapping more than the caller's own " + kind +
                               " " + std::to_string(own) + " needs " + helper_name +
                               " (package uidmap), which is not in PATH");
  auto ranges = subid_ranges(gid ? c.subgid_text : c.subuid_text, c.name, own);
  for (const auto& m : maps) {
    if (own_id_only(m, own)) continue;
    bool inside = false;
    for (const auto& r : ranges)
      inside |= m.host_id >= r.start && uint64_t{m.host_id} + m.size <= r.start + r.count;
    if (inside) continue;
    std::string have;
    for (const auto& r : ranges) have += (have.empty() ? "" : ", ") + span_text(r.start, r.count);
    std::string who = c.name.empty() ? "the caller" : c.name;
    return Error::invalid_spec(std::string("config.json: ") + field + ": host " + kind + " " +
                               span_text(m.host_id, m.size) + ": neither " + who + "'s own " + kind + " (" +
                               std::to_string(own) + ") nor in its " + file + " ranges (" +
                               (have.empty() ? "none" : have) + ")");
  }
  return helper;
}

// Runs newuidmap/newgidmap <pid> <container host size>...; its stderr becomes the error.
Status run_helper(const std::string& helper, pid_t pid, const std::vector<spec::IdMapping>& maps) {
  std::vector<std::string> args = {helper, std::to_string(pid)};
  for (const auto& m : maps)
    for (uint32_t v : {m.container_id, m.host_id, m.size}) args.push_back(std::to_string(v));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int p[2];
  if (::pipe2(p, O_CLOEXEC) < 0) return Error::sys(errno, "pipe");
  UniqueFd rd(p[0]), wr(p[1]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, wr.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, wr.get(), STDERR_FILENO);
  char* no_env[] = {nullptr};
  pid_t child = -1;
  int rc = ::posix_spawn(&child, helper.c_str(), &fa, nullptr, argv.data(), no_env);
  posix_spawn_file_actions_destroy(&fa);
  wr.reset();
  if (rc != 0) return Error::sys(rc, "run " + helper);
  std::string out;
  char buf[1024];
  ssize_t n;
  while (out.size() < 4096 && ((n = ::read(rd.get(), buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ok();
  return Error::generic(helper + " " + str::join(std::vector<std::string>(args.begin() + 1, args.end()), " ") +
                        " failed: " + std::string(str::trim(out)));
}

}  // namespace

std::string format_id_map(const std::vector<spec::IdMapping>& maps) {
  std::string out;
  for (const auto& m : maps)
    out += std::to_string(m.container_id) + " " + std::to_string(m.host_id) + " " + std::to_string(m.size) + "\n";
  return out;
}

int64_t map_to_host(const std::vector<spec::IdMapping>& maps, uint32_t id) {
  for (const auto& m : maps)
    if (id >= m.container_id && id - m.container_id < m.size) return static_cast<int64_t>(m.host_id) + (id - m.container_id);
  return -1;
}

std::vector<SubIdRange> subid_ranges(std::string_view text, const std::string& name, unsigned id) {
  std::vector<SubIdRange> out;
  std::string numeric = std::to_string(id);
  for (const auto& line : str::split(text, '\n')) {
    auto f = str::split(str::trim(line), ':');
    if (f.size() != 3 || f[0].empty() || f[0][0] == '#') continue;
    if (f[0] != numeric && (name.empty() || f[0] != name)) continue;
    auto start = str::parse_u64(f[1]), count = str::parse_u64(f[2]);
    if (start && count && *count > 0 && *start + *count <= (uint64_t{1} << 32)) out.push_back({*start, *count});
  }
  return out;
}

MapCaller MapCaller::current() {
  MapCaller c;
  c.uid = ::geteuid();
  c.gid = ::getegid();
  c.privileged = c.uid == 0;
  if (c.privileged) return c;
  std::vector<char> buf(16384);
  struct passwd pw, *found = nullptr;
  if (::getpwuid_r(c.uid, &pw, buf.data(), buf.size(), &found) == 0 && found) c.name = found->pw_name;
  if (auto t = file::read("/etc/subuid", 1 << 20)) c.subuid_text = *t;
  if (auto t = file::read("/etc/subgid", 1 << 20)) c.subgid_text = *t;
  // The caller's own PATH: berth is not setuid, so whatever it finds runs with the
  // caller's rights only; the system's directories when PATH is unset.
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  if (auto p = look_path("newuidmap", dirs)) c.newuidmap = *p;
  if (auto p = look_path("newgidmap", dirs)) c.newgidmap = *p;
  return c;
}

Result<MapPlan> plan_id_maps(const std::vector<spec::IdMapping>& uids, const std::vector<spec::IdMapping>& gids,
                             const MapCaller& caller) {
  MapPlan plan;
  BERTH_ASSIGN(plan.uid_helper, plan_one(uids, caller, false));
  BERTH_ASSIGN(plan.gid_helper, plan_one(gids, caller, true));
  // The kernel lets an unprivileged writer set gid_map only after setgroups is denied
  // (CVE-2014-8989: dropping groups could otherwise grant access). newgidmap, privileged,
  // decides that itself; denying first would make its write fail.
  plan.deny_setgroups = !caller.privileged && plan.gid_helper.empty();
  return plan;
}

Status write_id_maps(pid_t pid, const std::vector<spec::IdMapping>& uids, const std::vector<spec::IdMapping>& gids,
                     const MapPlan& plan) {
  std::string base = "/proc/" + std::to_string(pid) + "/";
  if (plan.deny_setgroups) BERTH_TRY(file::write_existing(AT_FDCWD, base + "setgroups", "deny"));
  // The whole map in one write(2): the kernel accepts exactly one write per map file.
  if (!uids.empty()) {
    if (!plan.uid_helper.empty()) BERTH_TRY(run_helper(plan.uid_helper, pid, uids).context("write uid_map"));
    else BERTH_TRY(file::write_existing(AT_FDCWD, base + "uid_map", format_id_map(uids)).context("write uid_map"));
  }
  if (!gids.empty()) {
    if (!plan.gid_helper.empty()) BERTH_TRY(run_helper(plan.gid_helper, pid, gids).context("write gid_map"));
    else BERTH_TRY(file::write_existing(AT_FDCWD, base + "gid_map", format_id_map(gids)).context("write gid_map"));
  }
  return ok();
}

}  // namespace berth::linux
