// Rootless detection (--rootless, /proc/self/uid_map), the default state root, and the
// planning of user namespace maps: direct for root or the caller's own id, newuidmap/
// newgidmap within /etc/subuid and /etc/subgid otherwise, errors naming field and range.
#include <gtest/gtest.h>

#include "container/rootless.h"
#include "linux/rootless.h"
#include "linux/userns.h"

namespace berth::linux {
namespace {

TEST(RootlessPlan, InitialUidMapIsTheHostsIdentity) {
  EXPECT_TRUE(is_initial_uid_map("         0          0 4294967295\n"));
  EXPECT_FALSE(is_initial_uid_map("         0       1001          1\n"));
  EXPECT_FALSE(is_initial_uid_map("0 0 4294967294\n"));
  EXPECT_FALSE(is_initial_uid_map("0 0 4294967295\n1 1 1\n"));
  EXPECT_FALSE(is_initial_uid_map(""));
  EXPECT_TRUE(is_initial_uid_map("0 0 4294967295"));
  EXPECT_TRUE(is_initial_uid_map("\t0\t0\t4294967295 \n"));
  EXPECT_FALSE(is_initial_uid_map("0 0"));
  EXPECT_FALSE(is_initial_uid_map("00 0 4294967295"));
  EXPECT_FALSE(is_initial_uid_map("0 0 4294967295x"));
}

TEST(RootlessPlan, FlagIsParsedAsGoParsesBoolsOrAuto) {
  Caller root;  // euid 0 on the host
  Caller user;
  user.euid = 1000;
  Caller userns_root;
  userns_root.in_user_ns = true;
  EXPECT_EQ(*resolve_rootless("auto", root), false);
  EXPECT_EQ(*resolve_rootless("", root), false);
  EXPECT_EQ(*resolve_rootless("auto", user), true);
  EXPECT_EQ(*resolve_rootless("auto", userns_root), true);
  EXPECT_EQ(*resolve_rootless("true", root), true);
  EXPECT_EQ(*resolve_rootless("1", root), true);
  EXPECT_EQ(*resolve_rootless("False", user), false);
  auto bad = resolve_rootless("maybe", user);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "strconv.ParseBool: parsing \"maybe\": invalid syntax");
}

TEST(RootlessPlan, StateRootIsTheUsersOwnNeverRootsOrShared) {
  Caller root;
  root.xdg_runtime_dir = "/run/user/0";
  EXPECT_EQ(default_state_root(root), "/run/berth") << "root on the host keeps /run/berth";
  Caller user;
  user.euid = 1000;
  EXPECT_EQ(default_state_root(user), "/run/berth") << "no XDG_RUNTIME_DIR: runc's path, never /tmp";
  user.xdg_runtime_dir = "/run/user/1000";
  EXPECT_EQ(default_state_root(user), "/run/user/1000/berth");
  Caller nsroot;
  nsroot.in_user_ns = true;
  nsroot.xdg_runtime_dir = "/run/user/1000";
  EXPECT_EQ(default_state_root(nsroot), "/run/user/1000/berth");
  nsroot.user = "root";
  EXPECT_EQ(default_state_root(nsroot), "/run/berth") << "runc: USER=root in a user namespace";
}

TEST(RootlessPlan, SubordinateRangesByNameOrId) {
  std::string text = "alice:100000:65536\n# bob:1:1\nbob:200000:10\n1001:300000:5\nalice:400000:0\nalice:x:1\n";
  auto a = subid_ranges(text, "alice", 1000);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].start, 100000u);
  EXPECT_EQ(a[0].count, 65536u);
  auto b = subid_ranges(text, "carol", 1001);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].start, 300000u);
  EXPECT_TRUE(subid_ranges(text, "", 7).empty());
}

MapCaller user_caller() {
  MapCaller c;
  c.privileged = false;
  c.uid = 1000;
  c.gid = 1000;
  c.name = "alice";
  c.subuid_text = "alice:100000:65536\n";
  c.subgid_text = "alice:100000:65536\n";
  c.newuidmap = "/usr/bin/newuidmap";
  c.newgidmap = "/usr/bin/newgidmap";
  return c;
}

std::vector<spec::IdMapping> own_and(uint32_t own, uint32_t host, uint32_t size) {
  return {{0, own, 1}, {1, host, size}};
}

TEST(RootlessPlan, OwnIdAloneIsWrittenDirectlyWithSetgroupsDenied) {
  auto p = plan_id_maps({{0, 1000, 1}}, {{0, 1000, 1}}, user_caller());
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->uid_helper, "");
  EXPECT_EQ(p->gid_helper, "");
  EXPECT_TRUE(p->deny_setgroups) << "the kernel's rule for an unprivileged gid_map (CVE-2014-8989)";
  MapCaller root;
  auto r = plan_id_maps(own_and(0, 100000, 65536), own_and(0, 100000, 65536), root);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->uid_helper, "");
  EXPECT_FALSE(r->deny_setgroups) << "root keeps setgroups, as runc";
}

TEST(RootlessPlan, SubordinateRangesGoThroughTheHelpers) {
  auto p = plan_id_maps(own_and(1000, 100000, 65536), own_and(1000, 100001, 100), user_caller());
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->uid_helper, "/usr/bin/newuidmap");
  EXPECT_EQ(p->gid_helper, "/usr/bin/newgidmap");
  EXPECT_FALSE(p->deny_setgroups) << "a denied setgroups would make newgidmap fail";
  auto mixed = plan_id_maps(own_and(1000, 100000, 10), {{0, 1000, 1}}, user_caller());
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->gid_helper, "");
  EXPECT_TRUE(mixed->deny_setgroups);
}

TEST(RootlessPlan, IdsOutsideTheRangesAreNamed) {
  auto p = plan_id_maps(own_and(1000, 165000, 1000), {{0, 1000, 1}}, user_caller());
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message(),
            "config.json: linux.uidMappings: host uid 165000-165999: neither alice's own uid (1000) nor in its "
            "/etc/subuid ranges (100000-165535)");
  MapCaller none = user_caller();
  none.subgid_text = "bob:100000:65536\n";
  auto g = plan_id_maps({{0, 1000, 1}}, {{0, 0, 1}}, none);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().message(),
            "config.json: linux.gidMappings: host gid 0: neither alice's own gid (1000) nor in its /etc/subgid "
            "ranges (none)");
}

TEST(RootlessPlan, MissingHelperIsNamed) {
  MapCaller c = user_caller();
  c.newuidmap.clear();
  auto p = plan_id_maps(own_and(1000, 100000, 10), {{0, 1000, 1}}, c);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message(),
            "config.json: linux.uidMappings: mapping more than the caller's own uid 1000 needs newuidmap (package "
            "uidmap), which is not in PATH");
}

spec::Spec with_namespaces(std::vector<spec::Namespace> ns) {
  spec::Spec s;
  s.linux.emplace();
  s.linux->namespaces = std::move(ns);
  return s;
}

TEST(RootlessPlan, UnprivilegedCallerNeedsAUserNamespaceWithMaps) {
  auto none = container::plan_user_ns(with_namespaces({{"pid", ""}, {"mount", ""}}), user_caller());
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message(), "rootless container requires user namespaces");
  auto nomap = container::plan_user_ns(with_namespaces({{"user", ""}}), user_caller());
  ASSERT_FALSE(nomap);
  EXPECT_EQ(nomap.error().message(), "rootless containers requires at least one UID mapping");
  auto joined = container::plan_user_ns(with_namespaces({{"user", "/proc/1234/ns/user"}}), user_caller());
  ASSERT_TRUE(joined);
  EXPECT_FALSE(joined->creates);
  auto root = container::plan_user_ns(with_namespaces({{"pid", ""}}), MapCaller());
  ASSERT_TRUE(root) << "root needs no user namespace";
  spec::Spec s = with_namespaces({{"user", ""}});
  s.linux->uid_mappings = {{0, 1000, 1}};
  s.linux->gid_mappings = {{0, 1000, 1}};
  auto mine = container::plan_user_ns(s, user_caller());
  ASSERT_TRUE(mine);
  EXPECT_TRUE(mine->creates && mine->unprivileged);
}

}  // namespace
}  // namespace berth::linux
