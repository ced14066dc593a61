// The container's /sys/fs/cgroup (issue 21 §4): a "cgroup" mount shows the container's own
// cgroup in each hierarchy, and berth's own (the caller's) where the container has none
// (rootless, or a controller berth does not manage), as runc does. Through it a container
// must not write any cgroup file of its caller or of the host: the default mount is
// read-only, so every write (cgroup.procs, tasks, a limit written back unchanged) and every
// mkdir fails in every hierarchy. A privileged container with a read-write mount writes
// where its view leads, as under runc (docs/security.md): the second test shows which.
// runc's results are printed, never asserted.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "integration/rootfs_test_support.h"
#include "support/exec_helpers.h"

namespace berth::test {
namespace {

using CgroupView = RootfsTest;

// For each hierarchy: "<name> own|other <file> ok|refused", where own means its mount
// shows the container's cgroup (the root of the mount is the cgroupsPath), then the
// container's /proc/self/cgroup. Limits are written back with the value they have.
std::string probe_script(const std::string& cgroups_path) {
  return "cd /sys/fs/cgroup; for h in *; do [ -L $h ] && continue; "
         "root=$(awk -v m=/sys/fs/cgroup/$h '$5 == m {print $4}' /proc/self/mountinfo); "
         "[ \"$root\" = " + cgroups_path + " ] && w=own || w=other; "
         "for f in cgroup.procs tasks pids.max memory.limit_in_bytes memory.max cpu.shares cpu.weight; do "
         "  [ -e $h/$f ] || continue; "
         "  if [ $f = cgroup.procs ] || [ $f = tasks ]; then v=0; else v=$(cat $h/$f); fi; "
         "  (echo $v > $h/$f) 2>/dev/null && r=ok || r=refused; echo \"$h $w $f $r\"; done; "
         "  mkdir $h/cgview-escape 2>/dev/null && { r=ok; rmdir $h/cgview-escape; } || r=refused; echo \"$h $w mkdir $r\"; "
         "done; sed 's/^/cgroup /' /proc/self/cgroup";
}

std::vector<std::string> lines_with(const std::string& text, const std::string& word) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.find(word) != std::string::npos) out.push_back(l);
  return out;
}

TEST_F(CgroupView, ReadOnlyMountRefusesEveryWriteInEveryHierarchy) {
  for_each_runtime([](const Runtime& rt, const std::string& name) {
    std::string path = std::string(kTestCgroupParent) + "/cgview-ro-" + name;
    Bundle b;
    b.script(probe_script(path));
    auto r = run_container(rt, b, "cgview-ro-" + name);
    if (name == "runc") {
      std::cout << "[ runc     ] writes that succeeded: " << lines_with(r.out, " ok").size() << "\n";
      return;
    }
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_GE(lines_with(r.out, " refused").size(), 10u) << "too few hierarchies tried\n" << r.out;
    EXPECT_TRUE(lines_with(r.out, " ok").empty()) << r.out;
    for (const auto& l : lines_with(r.out, "cgroup "))
      EXPECT_NE(l.find(path), std::string::npos) << "the container left its cgroup: " << l;
    std::cout << "[ berth    ] hierarchies showing another cgroup than the container's: "
              << lines_with(r.out, " other mkdir").size() << "\n";
  });
  EXPECT_EQ(run_cmd({"find", "/sys/fs/cgroup", "-maxdepth", "4", "-name", "cgview-escape"}).out, "");
}

// docker run --privileged: every capability and a read-write cgroup mount. Writes are no
// longer refused by the mount; where the view is the container's own cgroup they land
// there, and the test checks on the host that they did (pids.max written back, a child
// made and removed). Where a view shows berth's own cgroup (none on a host where berth
// manages every hierarchy) they would land in the caller's: printed, as runc's.
TEST_F(CgroupView, PrivilegedReadWriteMountWritesWhereItsViewLeads) {
  for_each_runtime([](const Runtime& rt, const std::string& name) {
    std::string path = std::string(kTestCgroupParent) + "/cgview-rw-" + name;
    Bundle b;
    auto& s = b.spec();
    std::vector<std::string> caps = {"CAP_SYS_ADMIN", "CAP_DAC_OVERRIDE", "CAP_KILL"};
    s.process->capabilities = spec::Capabilities{caps, caps, {}, caps, {}};
    for (auto& m : s.mounts)
      if (m.type == "cgroup") std::replace(m.options.begin(), m.options.end(), std::string("ro"), std::string("rw"));
    b.script(probe_script(path));
    auto r = run_container(rt, b, "cgview-rw-" + name);
    auto other_ok = lines_with(r.out, " other ");
    std::erase_if(other_ok, [](const std::string& l) { return l.find(" ok") == std::string::npos; });
    std::cout << "[ " << name << (name == "runc" ? "     " : "    ") << "] privileged, rw: " << lines_with(r.out, " own ").size()
              << " writes tried in its own cgroups, " << lines_with(r.out, " ok").size() << " succeeded; "
              << other_ok.size() << " succeeded in another cgroup\n";
    if (name == "runc") return;
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_FALSE(lines_with(r.out, "pids own pids.max ok").empty()) << r.out;
    EXPECT_FALSE(lines_with(r.out, "pids own mkdir ok").empty()) << r.out;
  });
  EXPECT_EQ(run_cmd({"find", "/sys/fs/cgroup", "-maxdepth", "4", "-name", "cgview-escape"}).out, "");
}

}  // namespace
}  // namespace berth::test
