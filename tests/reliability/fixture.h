// Shared set-up of the reliability tests: a runtime with its own state root, one busybox
// rootfs shared by every container of a test (bundles hold only config.json, root.path
// points at the shared rootfs), a cgroup parent private to this test process, and the
// census scope covering all of it.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>

#include "reliability/census.h"
#include "support/harness.h"

namespace berth::test {

inline int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

class RelEnv {
 public:
  RelEnv() : cgroup_parent_("/berth-rel-" + std::to_string(::getpid())), bundles_("berth-relb") {}
  ~RelEnv() { remove_cgroup_parent(cgroup_parent_); }

  const Runtime& rt() const { return rt_; }
  const std::string& cgroup_parent() const { return cgroup_parent_; }
  std::string rootfs() const { return base_.rootfs(); }
  const std::string& bundles() const { return bundles_.path(); }

  // A bundle directory for container `id` running `args`; `edit` may change the spec.
  template <class Edit>
  std::string bundle(const std::string& id, const std::vector<std::string>& args, Edit edit) {
    spec::Spec s = base_.spec();
    s.root->path = rootfs();
    s.process->args = args;
    s.linux->cgroups_path = cgroup_parent_ + "/" + id;
    edit(s);
    std::string dir = bundles_.path() + "/" + id;
    ::mkdir(dir.c_str(), 0755);
    std::ofstream(dir + "/config.json") << spec::to_json(s, true);
    return dir;
  }
  std::string bundle(const std::string& id, const std::vector<std::string>& args) {
    return bundle(id, args, [](spec::Spec&) {});
  }

  CensusScope scope() const { return scope_at(rt_.root()); }
  Census census() const { return take_census(scope()); }
  // The same, for containers kept under another state root (a tmpfs in trouble).
  CensusScope scope_at(const std::string& state_root) const {
    return {{bundles_.path(), base_.path(), state_root}, cgroup_parent_, state_root, {bundles_.path()},
            stable_netdevs()};
  }
  Census census_at(const std::string& state_root) const { return take_census(scope_at(state_root)); }

  // The init's pid from the container's state.json (0 before it is recorded).
  pid_t recorded_pid(const std::string& id) const {
    std::ifstream f(rt_.root() + "/" + id + "/state.json");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::smatch m;
    static const std::regex kPid("\"pid\":\\s*([0-9]+)");
    return std::regex_search(text, m, kPid) ? static_cast<pid_t>(std::stoi(m[1])) : 0;
  }

 private:
  std::string cgroup_parent_;
  Runtime rt_;
  Bundle base_;
  TempDir bundles_;
};

}  // namespace berth::test
