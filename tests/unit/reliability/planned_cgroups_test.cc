// Recovery of a create killed while making cgroups: the paths recorded in the state before
// any directory exists (Manager::planned_paths) are exactly where create() puts them, on
// every layout and for absolute and relative cgroupsPath, so `delete` finds them all.
#include <gtest/gtest.h>

#include "cgroups/manager.h"
#include "unit/cgroups/fixture.h"

namespace berth::cgroups::testing {
namespace {

TEST(PlannedCgroupPaths, EqualWhereCreatePutsTheContainer) {
  for (auto layout : {Layout::kV1, Layout::kHybrid, Layout::kV2}) {
    for (std::string path : {"/berth/c1", "inner/c1", ""}) {
      CgroupFixture f(layout);
      Config c;
      c.cgroups_path = path;
      c.id = "c1";
      c.host = &f.host;
      auto planned = Manager::planned_paths(c);
      ASSERT_TRUE(planned) << failure(planned);
      // Nothing exists yet: planning touched nothing.
      for (const auto& [name, dir] : *planned) EXPECT_FALSE(f.tree.exists(dir.substr(f.tree.root().size() + 1))) << dir;
      // The fake tree wants the control files the kernel would add on mkdir.
      std::string cg = f.tree.root() + "/sys/fs/cgroup";
      for (const auto& [name, dir] : *planned) {
        std::string rel = dir.substr(cg.size());
        rel = rel.substr(rel.find('/', 1));  // drop the mount's own directory
        if (layout == Layout::kV2) rel = dir.substr(cg.size());
        f.tree.add_cgroup(rel);
      }
      auto m = Manager::create(c);
      ASSERT_TRUE(m) << failure(m);
      EXPECT_EQ(*planned, m->paths()) << "layout " << to_string(layout) << ", cgroupsPath \"" << path << "\"";
    }
  }
}

TEST(PlannedCgroupPaths, RefusesWhatCreateRefuses) {
  CgroupFixture f(Layout::kV1);
  Config c;
  c.cgroups_path = "system.slice:berth:c1";
  c.id = "c1";
  c.host = &f.host;
  auto planned = Manager::planned_paths(c);
  ASSERT_FALSE(planned);
  EXPECT_EQ(planned.error().message(), failure(Manager::create(c)));
}

}  // namespace
}  // namespace berth::cgroups::testing
