// mounts[] in real busybox containers, observed from inside through /proc/self/mountinfo:
// every mount type, the per-mount flags, recursive attributes, propagation (both ways, with
// the host), tmpfs modes and tmpcopyup, the cgroup view, root.readonly, --no-pivot.
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using RootfsMounts = RootfsTest;

std::vector<SeenMount> mounts_of(const CmdResult& r) { return seen_mounts(r.out.substr(0, r.out.find("\n--\n") + 1)); }

// A host directory with a file, a symlink and an executable script, plus a tmpfs submount
// (removed again by the destructor).
struct HostTree {
  TempDir dir{"berth-rt-src"};
  HostTree() {
    run_cmd({"sh", "-c", "cd " + dir.path() + " && echo data > file && ln -s file link && printf '#!/bin/sh\\necho ran\\n' > "
                               "run.sh && chmod 755 run.sh && mkdir sub"});
    ::mount("berth-sub", (dir.path() + "/sub").c_str(), "tmpfs", 0, "size=64k");
  }
  ~HostTree() { ::umount2((dir.path() + "/sub").c_str(), MNT_DETACH); }
  const std::string& path() const { return dir.path(); }
};

TEST_F(RootfsMounts, ProcIsProcfsAndSysIsReadOnlySysfs) {
  Runtime rt;
  Bundle b;
  b.script("cat /proc/self/mountinfo");
  auto r = run_container(rt, b, "m-procsys");
  ASSERT_EQ(r.code, 0) << r.err;
  auto ms = seen_mounts(r.out);
  const SeenMount* proc = find_mount(ms, "/proc");
  const SeenMount* sys = find_mount(ms, "/sys");
  ASSERT_TRUE(proc && sys) << r.out;
  EXPECT_EQ(proc->fstype, "proc");
  EXPECT_EQ(sys->fstype, "sysfs");
  EXPECT_TRUE(has_option(sys->options, "ro")) << sys->options;
  for (const char* o : {"nosuid", "nodev", "noexec"}) EXPECT_TRUE(has_option(sys->options, o)) << o;
}

TEST_F(RootfsMounts, BindOfDirectoryAndOfFile) {
  HostTree src;
  Runtime rt;
  Bundle b;
  b.spec().mounts.push_back({"/mnt/dir", "bind", src.path(), {"bind"}, {}, {}});
  b.spec().mounts.push_back({"/etc/bound", "bind", src.path() + "/file", {"bind", "ro"}, {}, {}});
  b.script("[ -d /mnt/dir ] && [ -f /etc/bound ] && cat /mnt/dir/file /etc/bound && grep -c ' /etc/bound ' /proc/self/mountinfo");
  auto r = run_container(rt, b, "m-binds");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_EQ(r.out, "data\ndata\n1\n");
}

TEST_F(RootfsMounts, ReadOnlyBindCoversTheTopMountOnlyRroAll) {
  HostTree src;
  Runtime rt;
  Bundle b;
  b.spec().mounts.push_back({"/ro", "bind", src.path(), {"rbind", "ro"}, {}, {}});
  b.spec().mounts.push_back({"/rro", "bind", src.path(), {"rbind", "rro"}, {}, {}});
  b.script("cat /proc/self/mountinfo; echo --; touch /ro/x 2>&1; touch /ro/sub/x && echo sub-writable; "
           "touch /rro/sub/y 2>&1; true");
  auto r = run_container(rt, b, "m-rro");
  ASSERT_EQ(r.code, 0) << r.err;
  auto ms = mounts_of(r);
  ASSERT_TRUE(find_mount(ms, "/ro") && find_mount(ms, "/ro/sub") && find_mount(ms, "/rro/sub")) << r.out;
  EXPECT_TRUE(has_option(find_mount(ms, "/ro")->options, "ro"));
  EXPECT_TRUE(has_option(find_mount(ms, "/ro/sub")->options, "rw"));
  EXPECT_TRUE(has_option(find_mount(ms, "/rro")->options, "ro"));
  EXPECT_TRUE(has_option(find_mount(ms, "/rro/sub")->options, "ro"));
  EXPECT_NE(r.out.find("touch: /ro/x: Read-only file system"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sub-writable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("touch: /rro/sub/y: Read-only file system"), std::string::npos) << r.out;
  EXPECT_FALSE(host_exists(src.path() + "/sub/y"));
}

TEST_F(RootfsMounts, BindFlagsTakeEffect) {
  HostTree src;
  Runtime rt;
  Bundle b;
  b.spec().mounts.push_back({"/mnt", "bind", src.path(), {"bind", "nosuid", "nodev", "noexec", "noatime", "nosymfollow"}, {}, {}});
  b.script("cat /proc/self/mountinfo; echo --; /mnt/run.sh 2>&1; cat /mnt/link 2>&1; true");
  auto r = run_container(rt, b, "m-flags");
  ASSERT_EQ(r.code, 0) << r.err;
  auto ms = mounts_of(r);
  const SeenMount* m = find_mount(ms, "/mnt");
  ASSERT_TRUE(m) << r.out;
  for (const char* o : {"nosuid", "nodev", "noexec", "noatime", "nosymfollow"}) EXPECT_TRUE(has_option(m->options, o)) << o;
  EXPECT_NE(r.out.find("/mnt/run.sh: Permission denied"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cat: can't open '/mnt/link': Too many levels of symbolic links"), std::string::npos) << r.out;
}

// One tmpfs per flag option; where the kernel shows it: per mount or on the superblock.
TEST_F(RootfsMounts, EveryFlagOptionIsVisible) {
  struct Want {
    const char* option;
    const char* token;
    bool super;
  };
  const Want wants[] = {{"ro", "ro", false},           {"nosuid", "nosuid", false},   {"nodev", "nodev", false},
                        {"noexec", "noexec", false},   {"noatime", "noatime", false}, {"relatime", "relatime", false},
                        {"nodiratime", "nodiratime", false}, {"nosymfollow", "nosymfollow", false},
                        {"sync", "sync", true},        {"dirsync", "dirsync", true},  {"lazytime", "lazytime", true},
                        {"mand", "mand", true}};
  Runtime rt;
  Bundle b;
  for (const auto& w : wants) b.spec().mounts.push_back({std::string("/o/") + w.option, "tmpfs", "tmpfs", {w.option}, {}, {}});
  b.spec().mounts.push_back({"/o/strictatime", "tmpfs", "tmpfs", {"strictatime"}, {}, {}});
  // Accepted, with nothing to show for a tmpfs: they must not fail the mount.
  b.spec().mounts.push_back({"/o/quiet", "tmpfs", "tmpfs", {"iversion", "silent", "loud", "defaults", "async"}, {}, {}});
  b.script("cat /proc/self/mountinfo");
  auto r = run_container(rt, b, "m-allflags");
  ASSERT_EQ(r.code, 0) << r.err;
  auto ms = seen_mounts(r.out);
  for (const auto& w : wants) {
    const SeenMount* m = find_mount(ms, std::string("/o/") + w.option);
    ASSERT_TRUE(m) << w.option;
    EXPECT_TRUE(has_option(w.super ? m->super : m->options, w.token)) << w.option << ": " << m->options << " / " << m->super;
  }
  const SeenMount* strict = find_mount(ms, "/o/strictatime");
  ASSERT_TRUE(strict && find_mount(ms, "/o/quiet"));
  EXPECT_FALSE(has_option(strict->options, "relatime") || has_option(strict->options, "noatime")) << strict->options;
}

TEST_F(RootfsMounts, RecursiveAttributesReachSubmounts) {
  HostTree src;
  Runtime rt;
  Bundle b;
  b.spec().mounts.push_back({"/mnt", "bind", src.path(), {"rbind", "rnosuid", "rnodev", "rnoexec", "rnoatime"}, {}, {}});
  b.script("cat /proc/self/mountinfo");
  auto r = run_container(rt, b, "m-rattr");
  ASSERT_EQ(r.code, 0) << r.err;
  auto ms = seen_mounts(r.out);
  for (const char* mp : {"/mnt", "/mnt/sub"}) {
    const SeenMount* m = find_mount(ms, mp);
    ASSERT_TRUE(m) << mp << "\n" << r.out;
    for (const char* o : {"nosuid", "nodev", "noexec", "noatime"}) EXPECT_TRUE(has_option(m->options, o)) << mp << " " << o;
  }
}

TEST_F(RootfsMounts, TmpfsOptionsModeAndDeferredReadOnly) {
  Runtime rt;
  Bundle b;
  b.spec().mounts.push_back({"/scratch", "tmpfs", "tmpfs", {"nosuid", "mode=700", "size=1m"}, {}, {}});
  b.spec().mounts.push_back({"/frozen", "tmpfs", "tmpfs", {"ro", "size=1m"}, {}, {}});
  b.spec().mounts.push_back({"/run", "tmpfs", "tmpfs", {}, {}, {}});  // the image's /run is 0755
  b.script("cat /proc/self/mountinfo; echo --; stat -c '%n %a' /scratch /run; touch /frozen/x 2>&1; true");
  auto r = run_container(rt, b, "m-tmpfs");
  ASSERT_EQ(r.code, 0) << r.err;
  auto ms = mounts_of(r);
  const SeenMount* s = find_mount(ms, "/scratch");
  const SeenMount* f = find_mount(ms, "/frozen");
  ASSERT_TRUE(s && f) << r.out;
  EXPECT_TRUE(has_option(s->super, "size=1024k") && has_option(s->super, "mode=700")) << s->super;
  EXPECT_TRUE(has_option(f->options, "ro"));
  EXPECT_TRUE(has_option(f->super, "rw")) << "read-only per mount, as runc: " << f->super;
  EXPECT_NE(r.out.find("/scratch 700\n/run 755\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("touch: /frozen/x: Read-only file system"), std::string::npos) << r.out;
}

TEST_F(RootfsMounts, ReadOnlyDevStillGetsItsNodes) {
  Runtime rt;
  Bundle b;
  b.spec().mounts[1].options.push_back("ro");  // /dev
  b.script("grep ' /dev ' /proc/self/mountinfo; ls /dev/null /dev/zero /dev/pts/ptmx; touch /dev/x 2>&1; true");
  auto r = run_container(rt, b, "m-devro");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" /dev ro,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/dev/null\n/dev/pts/ptmx\n/dev/zero\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("touch: /dev/x: Read-only file system"), std::string::npos) << r.out;
}

TEST_F(RootfsMounts, TmpcopyupCopiesTheCoveredDirectory) {
  Runtime rt;
  Bundle b;
  run_cmd({"sh", "-c", "mkdir -p " + b.rootfs() + "/etc/sub && echo nested > " + b.rootfs() + "/etc/sub/f && ln -s sub/f " +
                           b.rootfs() + "/etc/lnk && chown 1000:2000 " + b.rootfs() + "/etc/sub/f"});
  b.spec().mounts.push_back({"/etc", "tmpfs", "tmpfs", {"tmpcopyup"}, {}, {}});
  b.script("grep ' /etc ' /proc/self/mountinfo | sed 's/.* - //' | cut -d' ' -f1; cat /etc/sub/f; readlink /etc/lnk; stat -c '%u:%g' "
           "/etc/sub/f; head -1 /etc/passwd; echo new > /etc/new && cat /etc/new");
  auto r = run_container(rt, b, "m-copyup");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_EQ(r.out, "tmpfs\nnested\nsub/f\n1000:2000\nroot:x:0:0:root:/root:/bin/sh\nnew\n");
  EXPECT_FALSE(host_exists(b.rootfs() + "/etc/new")) << "the copy is in the tmpfs, not the image";
}

TEST_F(RootfsMounts, OtherFilesystemTypesWithTheirData) {
  TempDir lower("berth-rt-lower"), upper("berth-rt-upper");
  run_cmd({"sh", "-c", "echo low > " + lower.path() + "/l && mkdir " + upper.path() + "/u " + upper.path() + "/w"});
  Runtime rt;
  Bundle b;
  b.spec().mounts.push_back({"/ovl", "overlay", "overlay",
                             {"lowerdir=" + lower.path(), "upperdir=" + upper.path() + "/u", "workdir=" + upper.path() + "/w"}, {}, {}});
  b.spec().mounts.push_back({"/mq2", "mqueue", "mqueue", {"nosuid"}, {}, {}});
  b.spec().mounts.push_back({"/pts2", "devpts", "devpts", {"newinstance", "ptmxmode=0600"}, {}, {}});
  b.spec().mounts.push_back({"/proc2", "proc", "proc", {"nosuid", "noexec", "nodev"}, {}, {}});
  b.script("cat /proc/self/mountinfo; echo --; cat /ovl/l; echo up > /ovl/u1");
  auto r = run_container(rt, b, "m-types");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  auto ms = mounts_of(r);
  std::map<std::string, std::string> want = {{"/ovl", "overlay"}, {"/mq2", "mqueue"}, {"/pts2", "devpts"}, {"/proc2", "proc"}};
  for (const auto& [mp, type] : want) {
    const SeenMount* m = find_mount(ms, mp);
    ASSERT_TRUE(m) << mp << "\n" << r.out;
    EXPECT_EQ(m->fstype, type);
  }
  EXPECT_TRUE(has_option(find_mount(ms, "/pts2")->super, "ptmxmode=600")) << find_mount(ms, "/pts2")->super;
  EXPECT_NE(r.out.find("low\n"), std::string::npos);
  EXPECT_EQ(slurp(upper.path() + "/u/u1"), "up\n");
}

TEST_F(RootfsMounts, CgroupViewIsTheContainersCgroup) {
  if (!have_cgroup_v1("memory")) GTEST_SKIP() << "no cgroup v1 memory hierarchy on this host: the test looks for its mount";
  Runtime rt;
  Bundle b;
  b.script("cat /proc/self/mountinfo");
  auto r = run_container(rt, b, "m-cgroup");
  ASSERT_EQ(r.code, 0) << r.err;
  auto ms = seen_mounts(r.out);
  const SeenMount* top = find_mount(ms, "/sys/fs/cgroup");
  const SeenMount* mem = find_mount(ms, "/sys/fs/cgroup/memory");
  ASSERT_TRUE(top && mem) << r.out;
  EXPECT_EQ(top->fstype, "tmpfs");
  EXPECT_TRUE(has_option(top->options, "ro"));
  EXPECT_EQ(mem->root, std::string(kTestCgroupParent) + "/m-cgroup");
  EXPECT_TRUE(has_option(mem->options, "ro"));
}

TEST_F(RootfsMounts, CgroupNamespaceMountsFreshHierarchies) {
  if (!have_cgroup_v1("memory")) GTEST_SKIP() << "no cgroup v1 memory hierarchy on this host: the test looks for its mount";
  Runtime rt;
  Bundle b;
  b.spec().linux->namespaces.push_back({"cgroup", ""});
  b.script("cat /proc/self/mountinfo");
  auto r = run_container(rt, b, "m-cgns");
  ASSERT_EQ(r.code, 0) << r.err;
  auto ms = seen_mounts(r.out);
  const SeenMount* mem = find_mount(ms, "/sys/fs/cgroup/memory");
  ASSERT_TRUE(mem) << r.out;
  EXPECT_EQ(mem->root, "/") << "the container's cgroup is the root in its namespace";
  EXPECT_EQ(mem->fstype, "cgroup");
}

TEST_F(RootfsMounts, ReadOnlyRoot) {
  Runtime rt;
  Bundle b;
  b.spec().root->readonly = true;
  b.script("cat /proc/self/mountinfo; echo --; touch /x 2>&1; true");
  auto r = run_container(rt, b, "m-rootro");
  ASSERT_EQ(r.code, 0) << r.err;
  auto ms = mounts_of(r);
  const SeenMount* root = find_mount(ms, "/");
  ASSERT_TRUE(root) << r.out;
  EXPECT_TRUE(has_option(root->options, "ro")) << root->options;
  EXPECT_NE(r.out.find("touch: /x: Read-only file system"), std::string::npos) << r.out;
}

TEST_F(RootfsMounts, NoPivotHidesTheHostProcfs) {
  Runtime rt;
  Bundle b;
  b.script("grep ' /proc ' /proc/self/mountinfo | sed 's/.* \\(\\/proc\\) .* - \\([a-z]*\\) .*/\\1 \\2/'; ls /");
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/m-nopivot";
  b.write();
  auto r = rt({"run", "--no-pivot", "--bundle", b.path(), "m-nopivot"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("/proc proc\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bin\n"), std::string::npos) << r.out;
}

TEST_F(RootfsMounts, NoPivotWithARamfsRoot) {
  // --no-pivot is for runtimes started from an initramfs, whose root pivot_root refuses:
  // the rootfs (here on a ramfs) is moved over "/" and chrooted into instead.
  TempDir ram("berth-rt-ramfs");
  ASSERT_EQ(::mount("berth-ramfs", ram.path().c_str(), "ramfs", 0, ""), 0);
  Runtime rt;
  Bundle b;
  run_cmd({"sh", "-c", "cp -a " + b.rootfs() + "/. " + ram.path()});
  b.spec().root->path = ram.path();
  b.script("grep ' / / ' /proc/self/mountinfo | sed 's/.* - //' | cut -d' ' -f1");
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/m-ramfs";
  b.write();
  auto r = rt({"run", "--no-pivot", "--bundle", b.path(), "m-ramfs"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "ramfs\n");
  ::umount2(ram.path().c_str(), MNT_DETACH);
}

// rshared: a mount made inside the container appears on the host; rslave: a host mount
// appears inside. Both need the container and the host to act in turn.
TEST_F(RootfsMounts, PropagationBothWays) {
  TempDir shared_dir("berth-rt-shared");
  const std::string s = shared_dir.path();
  ASSERT_EQ(::mount("berth-shared", s.c_str(), "tmpfs", 0, "size=64k"), 0);
  ASSERT_EQ(::mount("", s.c_str(), "", MS_SHARED, ""), 0);
  run_cmd({"mkdir", s + "/in", s + "/out"});
  Runtime rt;
  Bundle b;
  b.spec().linux->rootfs_propagation = "rshared";  // else "/" is a slave and nothing goes out
  b.spec().mounts.push_back({"/both", "bind", s, {"rbind", "rshared"}, {}, {}});
  b.spec().mounts.push_back({"/from-host", "bind", s, {"rbind", "rslave"}, {}, {}});
  for (auto* set : {&b.spec().process->capabilities->bounding, &b.spec().process->capabilities->effective,
                    &b.spec().process->capabilities->permitted})
    set->push_back("CAP_SYS_ADMIN");
  b.script("mount -t tmpfs from-container /both/out && touch /both/ready && "
           "while [ ! -e /both/go ]; do sleep 0.05; done; grep -c ' /from-host/in ' /proc/self/mountinfo");
  CmdResult r;
  std::thread t([&] { r = run_container(rt, b, "m-prop"); });
  bool ready = false;
  for (int i = 0; i < 200 && !(ready = host_exists(s + "/ready")); ++i) ::usleep(50000);
  bool out_seen = false;
  for (const auto& l : mount_lines(s)) out_seen = out_seen || l.find(" " + s + "/out ") != std::string::npos;
  ::mount("from-host", (s + "/in").c_str(), "tmpfs", 0, "size=64k");
  run_cmd({"touch", s + "/go"});
  t.join();
  ::umount2((s + "/in").c_str(), MNT_DETACH);
  ::umount2((s + "/out").c_str(), MNT_DETACH);
  ::umount2(s.c_str(), MNT_DETACH);
  ASSERT_TRUE(ready) << r.err;
  EXPECT_TRUE(out_seen) << "the container's mount under an rshared bind did not reach the host";
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n") << "the host's mount did not reach the rslave bind";
}

// root.path through a symlink (issue 32): runtime-spec's config.md asks only for an absolute
// path or one relative to the bundle, and berth resolves it once, when the init binds the
// rootfs onto itself and opens it (every later path is resolved from that fd), so the link
// is followed like any other path the bundle's author could have written directly. runc
// 1.1.5 refuses it ("invalid rootfs: not an absolute path, or a symlink"): its string
// prefix checks against the rootfs need a canonical path. berth accepts both forms.
TEST_F(RootfsMounts, RootPathThroughASymlinkIsFollowedOnce) {
  Runtime rt;
  for (bool absolute : {false, true}) {
    SCOPED_TRACE(absolute ? "absolute link" : "relative link");
    Bundle b;
    std::string real = b.path() + "/real-rootfs";
    ASSERT_EQ(::rename(b.rootfs().c_str(), real.c_str()), 0);
    ASSERT_EQ(::symlink(absolute ? real.c_str() : "real-rootfs", b.rootfs().c_str()), 0);
    run_cmd({"sh", "-c", "echo through-the-link > " + real + "/marker"});
    b.script("cat /marker && [ \"$(stat -c %F /)\" = directory ]");
    std::string id = absolute ? "m-rootlink-abs" : "m-rootlink-rel";
    auto r = run_container(rt, b, id);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "through-the-link\n");
    if (have_runc()) {
      Runtime runc{runc_binary()};
      b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/" + id + "-runc";
      b.write();
      auto rr = runc({"run", "--bundle", b.path(), id + "-runc"});
      EXPECT_EQ(rr.code, 1);
      EXPECT_NE(rr.err.find("invalid rootfs: not an absolute path, or a symlink"), std::string::npos) << rr.err;
    }
  }
}

}  // namespace
}  // namespace berth::test
