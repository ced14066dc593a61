// Test fixture: a fake host of a given layout and a Manager created on it for the
// container path /berth/c1, with helpers to read the container's control files.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cgroups/manager.h"
#include "unit/cgroups/fake_tree.h"

namespace berth::cgroups::testing {

class CgroupFixture {
 public:
  explicit CgroupFixture(Layout layout, std::vector<std::string> mounts = FakeTree::default_v1_mounts())
      : tree(layout, std::move(mounts)), host(tree.host()) {}

  Result<Manager> create(const spec::Resources& r, std::vector<DeviceRule> devices = {},
                         const std::string& path = "/berth/c1") {
    tree.add_cgroup(path);
    Config c;
    c.cgroups_path = path;
    c.id = "c1";
    c.resources = &r;
    c.device_rules = std::move(devices);
    c.host = &host;
    return Manager::create(c);
  }
  // A control file of the container in a v1 hierarchy ("cpu,cpuacct"), or "" = unified.
  std::string file(const std::string& mount, const std::string& name) const {
    return tree.read(tree.file(mount, "/berth/c1", name));
  }
  void set_file(const std::string& mount, const std::string& name, const std::string& v) const {
    tree.write(tree.file(mount, "/berth/c1", name), v);
  }
  void remove_file(const std::string& mount, const std::string& name) const;

  FakeTree tree;
  Host host;
};

// The message of a failed Result, or a marker that it did not fail.
template <class T>
std::string failure(const Result<T>& r) {
  return r ? std::string("<succeeded>") : r.error().message();
}

}  // namespace berth::cgroups::testing
