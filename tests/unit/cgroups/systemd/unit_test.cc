// systemd unit naming: the unit and cgroup runc computes for each linux.cgroupsPath, and the
// hostile names it must refuse.
#include "cgroups/systemd/unit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::cgroups::systemd {
namespace {

struct UnitCase {
  const char* cgroups_path;
  bool rootless;
  const char* slice;
  const char* name;
  const char* path;
};

TEST(SystemdUnit, NamesAndPathsAsRunc) {
  // Expected values are those runc 1.1 computes (getUnitName + ExpandSlice + Join), with
  // "berth" where runc puts its own name in the default form.
  const UnitCase cases[] = {
      {"system.slice:docker:abc", false, "system.slice", "docker-abc.scope", "/system.slice/docker-abc.scope"},
      {"machine.slice:libpod:0123abcd", false, "machine.slice", "libpod-0123abcd.scope",
       "/machine.slice/libpod-0123abcd.scope"},
      {"kubepods-burstable-pod1.slice:cri-containerd:c1", false, "kubepods-burstable-pod1.slice",
       "cri-containerd-c1.scope",
       "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-c1.scope"},
      {"", false, "system.slice", "berth-ctr.scope", "/system.slice/berth-ctr.scope"},
      {"", true, "user.slice", "berth-ctr.scope", "/user.slice/berth-ctr.scope"},
      {":crio:x", false, "system.slice", "crio-x.scope", "/system.slice/crio-x.scope"},
      {"-.slice:p:n", false, "-.slice", "p-n.scope", "/p-n.scope"},
      // A name ending in ".slice" asks for the slice itself (kubelet's pod slices).
      {"kubepods-burstable.slice::kubepods-burstable-pod2.slice", false, "kubepods-burstable.slice",
       "kubepods-burstable-pod2.slice", "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod2.slice"},
      {"system.slice:a.b:c_d\\x2d", false, "system.slice", "a.b-c_d\\x2d.scope", "/system.slice/a.b-c_d\\x2d.scope"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.cgroups_path);
    auto u = unit_for(c.cgroups_path, "ctr", c.rootless);
    ASSERT_TRUE(u) << u.error().message();
    EXPECT_EQ(u->slice, c.slice);
    EXPECT_EQ(u->name, c.name);
    EXPECT_EQ(u->path, c.path);
    EXPECT_EQ(u->is_slice, std::string_view(c.name).ends_with(".slice"));
  }
}

TEST(SystemdUnit, ExpandSliceAsRunc) {
  EXPECT_EQ(expand_slice("system.slice").value(), "/system.slice");
  EXPECT_EQ(expand_slice("-.slice").value(), "/");
  EXPECT_EQ(expand_slice("a-b-c.slice").value(), "/a.slice/a-b.slice/a-b-c.slice");
  for (const char* bad : {"", ".slice", "system", "a--b.slice", "-a.slice", "a-.slice", "a/b.slice",
                          "../x.slice", "a b.slice", "a\n.slice", "a@b.slice", "system.scope"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(expand_slice(bad));
  }
}

TEST(SystemdUnit, RefusesHostileNames) {
  const std::string long_name(300, 'a');
  for (const std::string& bad : std::vector<std::string>{"a:b", "a:b:c:d", "system:p:n", "a--b.slice:p:n", "system.slice:p:../../x",
                          "system.slice:p:n/x", "system.slice:docker:", "system.slice:p:a b",
                          "system.slice:p:a\nb", "system.slice:p:" + long_name, "system.slice:p:x@y",
                          "../../etc.slice:p:n", "system.slice::-.slice"}) {
    SCOPED_TRACE(bad);
    auto u = unit_for(bad, "ctr", false);
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().kind(), ErrorKind::kInvalidSpec);
  }
  // The id of the default form is checked too (create validates ids, but not for this).
  EXPECT_FALSE(unit_for("", "../x", false));
  EXPECT_EQ(unit_for("a:b", "c", false).error().message(),
            "expected cgroupsPath to be of format \"slice:prefix:name\" for systemd cgroups, got \"a:b\" instead");
}

TEST(SystemdUnit, ValidUnitName) {
  EXPECT_TRUE(valid_unit_name("docker-1.scope"));
  EXPECT_TRUE(valid_unit_name("a.b.scope"));
  EXPECT_FALSE(valid_unit_name(".scope"));
  EXPECT_FALSE(valid_unit_name("x.service"));
  EXPECT_FALSE(valid_unit_name(std::string(252, 'a') + ".scope"));
  EXPECT_TRUE(valid_unit_name(std::string(249, 'a') + ".scope"));
}

}  // namespace
}  // namespace berth::cgroups::systemd
