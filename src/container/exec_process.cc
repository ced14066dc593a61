// `exec`'s process and cgroups (see exec_process.h): --process, --cwd, --env, --tty,
// --user, --additional-gids, --cap, --no-new-privs, --apparmor, --process-label
// (process.cwd, env, terminal, user, capabilities, noNewPrivileges, apparmorProfile,
// selinuxLabel) and --cgroup, with runc's texts for each refusal.
#include "container/exec_process.h"

#include <sched.h>
#include <sys/stat.h>

#include <cstdint>
#include <set>

#include "linux/paths.h"
#include "linux/process_attrs.h"
#include "linux/selinux.h"
#include "util/strings.h"

namespace berth::container {
namespace {

bool file_exists(const char* p) {
  struct stat st;
  return ::stat(p, &st) == 0;
}

// `uid[:gid]` is taken as is (without a gid the container's gid stays, as in runc); a
// name is left to the tenant, which reads the container's /etc/passwd.
Status apply_user(const std::string& user, ExecProcess& out) {
  if (user.empty()) return ok();
  size_t colon = user.find(':');
  std::string uid_text = user.substr(0, colon);
  std::string gid_text = colon == std::string::npos ? "" : user.substr(colon + 1);
  if (uid_text.empty()) return Error::invalid_argument("invalid user " + str::go_quote(user));
  std::optional<uint64_t> gid;
  if (colon != std::string::npos) {
    gid = str::parse_u64(gid_text);
    if (!gid || *gid > UINT32_MAX) return Error::invalid_argument("invalid group " + str::go_quote(gid_text));
  }
  auto uid = str::parse_u64(uid_text);
  if (!uid) {
    out.user_name = user;
    return ok();
  }
  if (*uid > UINT32_MAX) return Error::invalid_argument("invalid user " + str::go_quote(user));
  out.process.user.uid = static_cast<uint32_t>(*uid);
  if (gid) out.process.user.gid = static_cast<uint32_t>(*gid);
  return ok();
}

Status apply_additional_gids(const std::vector<std::string>& gids, spec::Process& p) {
  for (const auto& g : gids) {
    auto n = str::parse_i64(g);
    if (!n) return Error::invalid_argument("invalid value " + str::go_quote(g) + " for flag -additional-gids: parse error");
    if (*n < 0 || *n > UINT32_MAX) return Error::invalid_argument("additional-gids must be a positive number " + g);
    p.user.additional_gids.push_back(static_cast<uint32_t>(*n));
  }
  return ok();
}

// runc: each --cap joins the bounding, effective and permitted sets, and the ambient set
// only when the spec already grants inheritable capabilities. The inheritable set itself
// never grows (CVE-2022-29162: an exec'd process must not pass --cap on through execve).
void add_caps(const std::vector<std::string>& caps, spec::Process& p) {
  if (caps.empty()) return;
  if (!p.capabilities) p.capabilities.emplace();
  spec::Capabilities& c = *p.capabilities;
  for (const auto& cap : caps) {
    c.bounding.push_back(cap);
    c.effective.push_back(cap);
    c.permitted.push_back(cap);
    if (!c.inheritable.empty()) c.ambient.push_back(cap);
  }
}

Result<spec::Process> from_flags(const ExecOptions& o, const spec::Spec& config, ExecProcess& out) {
  if (!config.process) return Error::invalid_spec("config.json: process: missing in the container's config");
  spec::Process p = *config.process;
  if (o.args.empty()) return Error::invalid_argument("process args cannot be empty");  // runc 1.1's text
  p.args = o.args;
  if (!o.cwd.empty()) p.cwd = o.cwd;
  if (!o.apparmor.empty()) p.apparmor_profile = o.apparmor;
  if (!o.process_label.empty()) p.selinux_label = o.process_label;
  add_caps(o.caps, p);
  p.env.insert(p.env.end(), o.env.begin(), o.env.end());
  p.terminal = o.tty;  // the container's own terminal setting is not inherited
  if (o.no_new_privs) p.no_new_privileges = *o.no_new_privs;
  out.process = std::move(p);
  BERTH_TRY(apply_user(o.user, out));
  BERTH_TRY(apply_additional_gids(o.additional_gids, out.process));
  return out.process;
}

// runc's validateProcessSpec, then berth's checks of the properties themselves.
Status validate(const spec::Process& p, const std::string& source) {
  if (p.cwd.empty()) return Error::invalid_spec("Cwd property must not be empty");
  if (p.cwd[0] != '/') return Error::invalid_spec("Cwd must be an absolute path");
  if (p.args.empty()) return Error::invalid_spec("args must not be empty");
  if (!p.selinux_label.empty() && !linux::selinux_enabled())
    return Error::unsupported("selinux label is specified in config, but selinux is disabled or not supported");
  if (!p.apparmor_profile.empty() && !file_exists("/sys/kernel/security/apparmor"))
    return Error::unsupported("apparmor profile " + str::go_quote(p.apparmor_profile) +
                              " is specified, but AppArmor is not enabled on this host");
  if (p.exec_cpu_affinity) {
    cpu_set_t set;
    const auto& a = *p.exec_cpu_affinity;
    if (!a.initial.empty() && !linux::parse_cpu_list(a.initial, &set))
      return Error::invalid_spec(source + ": process.execCPUAffinity.initial: invalid cpu list " + str::go_quote(a.initial));
    if (!a.final.empty() && !linux::parse_cpu_list(a.final, &set))
      return Error::invalid_spec(source + ": process.execCPUAffinity.final: invalid cpu list " + str::go_quote(a.final));
  }
  return spec::validate_process(p, source);
}

}  // namespace

Result<ExecProcess> exec_process(const ExecOptions& o, const spec::Spec& config, const std::string& process_json) {
  ExecProcess out;
  std::string source = o.process_file == "-" ? "process.json (stdin)" : o.process_file;
  if (!o.process_file.empty()) {
    // The whole process comes from the file; runc ignores the override flags then.
    BERTH_ASSIGN(out.process, spec::parse_process(process_json, source));
  } else {
    source = "config.json";
    BERTH_TRY(from_flags(o, config, out));
  }
  BERTH_TRY(validate(out.process, source));
  return out;
}

Result<std::map<std::string, std::string>> parse_sub_cgroups(const std::vector<std::string>& args) {
  std::map<std::string, std::string> subs;
  for (const auto& a : args) {
    size_t colon = a.find(':');
    if (colon == std::string::npos) {
      if (args.size() != 1) return Error::invalid_argument("invalid --cgroup argument: " + a + " (missing <controller>: prefix)");
      subs[""] = a;
      continue;
    }
    for (const auto& ctrl : str::split(a.substr(0, colon), ',')) {
      if (ctrl.empty()) return Error::invalid_argument("invalid --cgroup argument: " + a + " (empty <controller> prefix)");
      if (!subs.emplace(ctrl, a.substr(colon + 1)).second)
        return Error::invalid_argument("invalid --cgroup argument(s): controller " + ctrl + " specified multiple times");
    }
  }
  return subs;
}

Result<std::map<std::string, std::string>> apply_sub_cgroups(const std::map<std::string, std::string>& paths,
                                                             const std::map<std::string, std::string>& subs) {
  for (const auto& [ctrl, sub] : subs)
    if (!ctrl.empty() && !paths.count(ctrl))
      return Error::invalid_argument("invalid --cgroup argument: unknown controller " + ctrl);
  std::map<std::string, std::vector<std::string>> by_dir;
  for (const auto& [ctrl, dir] : paths) by_dir[dir].push_back(ctrl);
  auto out = paths;
  for (const auto& [dir, names] : by_dir) {
    std::optional<std::string> sub;
    for (const auto& n : names) {
      auto it = subs.find(n);
      if (it == subs.end() || n.empty()) continue;
      if (sub && *sub != it->second)
        return Error::invalid_argument("invalid --cgroup argument(s): controllers " + str::join(names, ",") +
                                       " share one hierarchy but name different sub-cgroups");
      sub = it->second;
    }
    if (!sub && subs.count("")) sub = subs.at("");
    if (!sub) continue;
    std::string joined = linux::clean_path(dir + "/" + *sub);
    // runc 1.1's text, which runc's exec tests match (runc 1.2 says "bad sub cgroup path").
    if (joined != dir && !str::starts_with(joined, dir + "/"))
      return Error::invalid_argument(*sub + " is not a sub cgroup path");
    for (const auto& n : names) out[n] = joined;
  }
  return out;
}

}  // namespace berth::container
