// What `exec` runs and where: the process (--process JSON, or the container's
// process with the command-line overrides applied as runc applies them) and the cgroup
// directories (the container's, or its sub-cgroups named by --cgroup). Pure functions of
// their inputs, so they are unit-tested without a container.
#pragma once

#include <map>
#include <string>

#include "berth/spec.h"
#include "container/exec.h"

namespace berth::container {

struct ExecProcess {
  spec::Process process;
  // --user given as a name: resolved in the container's /etc/passwd by the tenant.
  std::string user_name;
};

// `process_json` is the text of --process when given (read by the caller). AppArmor and
// SELinux are refused with runc's texts: this host has neither.
Result<ExecProcess> exec_process(const ExecOptions& o, const spec::Spec& config, const std::string& process_json);

// --cgroup arguments as runc parses them: controller ("" = every hierarchy) → sub-cgroup.
Result<std::map<std::string, std::string>> parse_sub_cgroups(const std::vector<std::string>& args);

// The container's cgroup paths (controller → dir, "" = unified) with the sub-cgroups
// applied. A sub-cgroup must stay inside the container's cgroup (runc 1.1's text: "<path>
// is not a sub cgroup path"); controllers sharing a hierarchy (cpu,cpuacct) move together.
Result<std::map<std::string, std::string>> apply_sub_cgroups(const std::map<std::string, std::string>& paths,
                                                             const std::map<std::string, std::string>& subs);

}  // namespace berth::container
