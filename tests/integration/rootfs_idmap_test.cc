// Idmapped binds (mounts[].uidMappings/gidMappings, options idmap and ridmap) in real
// containers, ownership observed with stat: with explicit maps in a container without a
// user namespace, and with the container's own maps in a user namespace.
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include "integration/rootfs_test_support.h"
#include "linux/sys.h"

namespace berth::test {
namespace {

using RootfsIdmap = RootfsTest;

// A host directory: "root-file" owned by 0:0, "user-file" by 1000:1000, and a tmpfs
// submount (for ridmap) with "sub-file" owned by 0:0.
struct Owned {
  TempDir dir{"berth-rt-idmap"};
  Owned() {
    const std::string& d = dir.path();
    run_cmd({"sh", "-c", "cd " + d + " && touch root-file user-file && chown 1000:1000 user-file && mkdir sub"});
    ::mount("berth-idmap-sub", (d + "/sub").c_str(), "tmpfs", 0, "size=64k,mode=755");
    run_cmd({"touch", d + "/sub/sub-file"});
  }
  ~Owned() { ::umount2((dir.path() + "/sub").c_str(), MNT_DETACH); }
};

// Whether this kernel idmaps a mount of the filesystem at `path`: the file system must
// support it (tmpfs from Linux 6.3 only; Debian 12 ships 6.1), or MOUNT_ATTR_IDMAP fails.
bool kernel_idmaps(const std::string& path) {
  auto& sys = linux::real_sys();
  auto ns = sys.make_userns("0 100000 1\n", "0 100000 1\n");
  auto tree = sys.open_tree(AT_FDCWD, path, OPEN_TREE_CLONE);
  if (!ns || !tree) return false;
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_IDMAP;
  attr.userns_fd = static_cast<uint64_t>(ns->get());
  return sys.mount_setattr(tree->get(), "", AT_EMPTY_PATH, attr).ok();
}

#define SKIP_UNLESS_IDMAPPABLE(src)                                                             \
  if (!kernel_idmaps((src).dir.path()) || !kernel_idmaps((src).dir.path() + "/sub"))            \
  GTEST_SKIP() << "this kernel cannot idmap mounts of the file systems under /tmp (tmpfs needs " \
                  "Linux 6.3)"

TEST_F(RootfsIdmap, ExplicitMappingsWithoutUserNamespace) {
  Owned src;
  SKIP_UNLESS_IDMAPPABLE(src);
  Runtime rt;
  Bundle b;
  // The filesystem's 0 shows as 2000 and its 1000 as 3000.
  spec::Mount m{"/data", "bind", src.dir.path(), {"bind"}, {{0, 2000, 1}, {1000, 3000, 1}}, {{0, 2000, 1}, {1000, 3000, 1}}};
  b.spec().mounts.push_back(m);
  b.script("stat -c '%n %u:%g' /data/root-file /data/user-file; grep ' /data ' /proc/self/mountinfo | grep -c idmapped");
  auto r = run_container(rt, b, "i-explicit");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "/data/root-file 2000:2000\n/data/user-file 3000:3000\n1\n");
  EXPECT_EQ(run_cmd({"stat", "-c", "%u", src.dir.path() + "/user-file"}).out, "1000\n") << "the host's files are unchanged";
}

TEST_F(RootfsIdmap, IdmapUsesTheContainersUserNamespace) {
  Owned src;
  SKIP_UNLESS_IDMAPPABLE(src);
  Runtime rt;
  Bundle b;
  b.spec().linux->namespaces.push_back({"user", ""});
  b.spec().linux->uid_mappings = {{0, 100000, 65536}};
  b.spec().linux->gid_mappings = {{0, 100000, 65536}};
  run_cmd({"chown", "-R", "100000:100000", b.rootfs()});
  b.spec().mounts.push_back({"/data", "bind", src.dir.path(), {"rbind", "idmap"}, {}, {}});
  b.spec().mounts.push_back({"/rdata", "bind", src.dir.path(), {"rbind", "ridmap"}, {}, {}});
  b.script("stat -c '%n %u:%g' /data/root-file /data/user-file /data/sub/sub-file /rdata/sub/sub-file; "
           "touch /data/made-inside && echo wrote");
  auto r = run_container(rt, b, "i-userns");
  ASSERT_EQ(r.code, 0) << r.err;
  // Without the idmap, host root's files would show as the overflow id 65534.
  EXPECT_EQ(r.out,
            "/data/root-file 0:0\n"
            "/data/user-file 1000:1000\n"
            "/data/sub/sub-file 65534:65534\n"  // idmap: the top mount only
            "/rdata/sub/sub-file 0:0\n"         // ridmap: every mount of the tree
            "wrote\n");
  EXPECT_EQ(run_cmd({"stat", "-c", "%u:%g", src.dir.path() + "/made-inside"}).out, "0:0\n")
      << "a file the container's root makes belongs to the host's root on disk";
}

TEST_F(RootfsIdmap, BareIdmapWithoutUserNamespaceIsRefused) {
  Owned src;
  Runtime rt;
  Bundle b;
  b.spec().mounts.push_back({"/data", "bind", src.dir.path(), {"rbind", "idmap"}, {}, {}});
  auto r = run_container(rt, b, "i-refused");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("mounts[7].options: \\\"idmap\\\" without uidMappings/gidMappings"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace berth::test
