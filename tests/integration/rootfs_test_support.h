// Shared by the rootfs integration tests and the attack suite (tests/security): a fixture
// that proves no host mount is left behind and removes the test cgroups, running a
// container under an explicit linux.cgroupsPath (/berth-test/rootfs/<id>: never nested
// under the caller's cgroup), and mountinfo as the container sees it, parsed and
// normalized for comparisons.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "util/mountinfo.h"
#include "support/harness.h"
#include "util/strings.h"

namespace berth::test {

inline const char* const kTestCgroupParent = "/berth-test/rootfs";

// The host's mounts that tests of this kind could leave behind: everything under their
// temporary directories (bundles, and /tmp/berth-rt-* for sources and targets). Other work
// on the host mounts and unmounts elsewhere meanwhile.
inline std::vector<std::string> berth_mounts() {
  std::vector<std::string> out;
  for (const auto& l : mount_lines("/tmp/berth-"))
    if (l.find(" /tmp/berth-bundle.") != std::string::npos || l.find(" /tmp/berth-rt-") != std::string::npos)
      out.push_back(l);
  return out;
}

// Every test: the host's mount table afterwards is the one before; the test cgroups go.
class RootfsTest : public ::testing::Test {
 protected:
  void SetUp() override { before_ = berth_mounts(); }
  void TearDown() override {
    EXPECT_EQ(berth_mounts(), before_) << "a host mount was left behind";
    // Our parent, then the shared one if nothing else is left in it.
    for (const char* h : {"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids", "systemd",
                          "unified", ""}) {
      ::rmdir((std::string("/sys/fs/cgroup/") + h + kTestCgroupParent).c_str());
      ::rmdir((std::string("/sys/fs/cgroup/") + h + "/berth-test").c_str());
    }
  }

 private:
  std::vector<std::string> before_;
};

// Writes the bundle with its own cgroup and runs it to the end.
inline CmdResult run_container(const Runtime& rt, Bundle& b, const std::string& id, int timeout_s = 30) {
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/" + id;
  b.write();
  return rt({"run", "--bundle", b.path(), id}, "", timeout_s);
}

// The container's view of one mount, without ids.
struct SeenMount {
  std::string mountpoint, parent, root, options, propagation, fstype, source, super;
};

// Parses mountinfo output; ids become mountpoints, propagation tags lose their numbers.
inline std::vector<SeenMount> seen_mounts(const std::string& text) {
  std::vector<SeenMount> out;
  auto parsed = parse_mountinfo(text);
  if (!parsed) return out;
  std::map<int, std::string> by_id;
  for (const auto& m : *parsed) by_id[m.id] = m.mountpoint;
  for (const auto& m : *parsed) {
    std::vector<std::string> tags;
    for (const auto& t : str::split_nonempty(m.optional, ' ')) tags.push_back(t.substr(0, t.find(':')));
    auto p = by_id.find(m.parent);
    out.push_back({m.mountpoint, p == by_id.end() ? "-" : p->second, m.root, m.options, str::join(tags, ","), m.fstype,
                   m.source, m.super_options});
  }
  return out;
}

inline const SeenMount* find_mount(const std::vector<SeenMount>& ms, const std::string& mountpoint) {
  const SeenMount* last = nullptr;
  for (const auto& m : ms)
    if (m.mountpoint == mountpoint) last = &m;  // the top one
  return last;
}

inline bool has_option(const std::string& options, const std::string& opt) {
  for (const auto& o : str::split(options, ','))
    if (o == opt) return true;
  return false;
}

inline std::string slurp(const std::string& path) {
  auto r = run_cmd({"cat", path});
  return r.code == 0 ? r.out : "<unreadable>";
}

inline bool host_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace berth::test
