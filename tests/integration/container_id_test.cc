// Container ids at the length limit, under berth and (when installed) runc: 255 characters
// (the longest directory name) go through create, start and delete, session keyring
// "_ses.<id>" included; 256 are refused by the file system with exit 1, leaving nothing.
#include <dirent.h>

#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using ContainerIds = RootfsTest;

std::vector<Runtime*> runtimes(Runtime& berth, Runtime& runc) {
  std::vector<Runtime*> out = {&berth};
  if (have_runc()) out.push_back(&runc);
  return out;
}

int entries(const std::string& dir) {
  int n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) n += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
    ::closedir(d);
  }
  return n;
}

TEST_F(ContainerIds, TwoHundredFiftyFiveCharactersWorkAsInRunc) {
  Runtime berth, runc{runc_binary()};
  std::vector<std::string> perms;
  for (Runtime* rt : runtimes(berth, runc)) {
    SCOPED_TRACE(rt->binary());
    const std::string id(255, rt == &berth ? 'k' : 'r');  // keyrings of one never match the other's
    Bundle b;
    b.script("true");
    b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/long-id";
    b.write();
    auto c = (*rt)({"create", "--bundle", b.path(), id});
    ASSERT_EQ(c.code, 0) << c.err;
    EXPECT_EQ((*rt)({"state", id}).code, 0);
    // The session keyring the init joined is named after the whole id; its permissions
    // (search for the owning user added) are the same under both runtimes.
    std::string key = run_cmd({"sh", "-c", "grep -F '_ses." + id + ":' /proc/keys | awk '{print $4, $5}' | head -1"}).out;
    EXPECT_EQ(key.substr(0, 5), "perm ") << "no keyring _ses.<id> in /proc/keys";
    perms.push_back(key);
    auto s = (*rt)({"start", id});
    EXPECT_EQ(s.code, 0) << s.err;
    for (int i = 0; i < 50 && (*rt)({"state", id}).out.find("\"stopped\"") == std::string::npos; ++i) ::usleep(100000);
    auto d = (*rt)({"delete", id});
    EXPECT_EQ(d.code, 0) << d.err;
    EXPECT_EQ(entries(rt->root()), 0) << "the state directory was left";
  }
  if (perms.size() == 2) {
    EXPECT_EQ(perms[0], perms[1]) << "berth's keyring permissions differ from runc's";
  }
}

TEST_F(ContainerIds, LongerIdsAreRefusedByTheFileSystemAsInRunc) {
  Runtime berth, runc{runc_binary()};
  const std::string id(256, 'k');
  for (Runtime* rt : runtimes(berth, runc)) {
    SCOPED_TRACE(rt->binary());
    Bundle b;
    b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/longer-id";
    b.write();
    auto c = (*rt)({"create", "--bundle", b.path(), id});
    EXPECT_EQ(c.code, 1);
    EXPECT_NE(c.err.find("file name too long"), std::string::npos) << c.err;
    EXPECT_EQ(entries(rt->root()), 0) << "a state directory was left";
    EXPECT_FALSE(host_exists(std::string("/sys/fs/cgroup/memory") + kTestCgroupParent + "/longer-id"));
  }
}

}  // namespace
}  // namespace berth::test
