// Differential: the same bundle run with berth and with runc; what the container sees
// (mountinfo, or a listing) must be the same once ids, paths and the differences that
// docs/rootfs.md lists as intended are normalized. One case per mount configuration.
#include <sys/mount.h>
#include <unistd.h>

#include <functional>

#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

constexpr const char* kMountinfo = "cat /proc/self/mountinfo";

struct Case {
  const char* name;
  std::function<void(Bundle&, const std::string& src)> setup;
  const char* script = kMountinfo;
};

// A host path as mountinfo's root= field shows it: relative to the root of the file system
// that holds it. With /tmp on its own tmpfs (Debian 13, Fedora, Arch) a bundle under
// /tmp/berth-bundle.X shows as /berth-bundle.X, so replacing the absolute path alone misses it.
std::string root_field_of(const std::string& host_path) {
  auto mounts = read_mountinfo();
  const MountInfo* m = mounts ? mount_containing(*mounts, host_path) : nullptr;
  if (!m || m->mountpoint == "/") return host_path;
  std::string rest = host_path.substr(m->mountpoint.size());
  return m->root == "/" ? rest : m->root + rest;
}

// mountinfo → one line per mount: "mountpoint parent=... root=... options [tags] fstype
// source super", with the bundle's rootfs and the container's cgroup path replaced.
std::vector<std::string> normalize(const std::string& text, const std::string& rootfs, const std::string& cgroup,
                                   bool shared_root) {
  std::vector<std::string> out;
  auto ms = seen_mounts(text);
  const std::string rootfs_field = root_field_of(rootfs);
  for (auto& m : ms) {
    auto replace = [&](std::string& s) {
      for (const auto& [from, to] : {std::pair{rootfs_field, std::string("<rootfs>")}, std::pair{cgroup, std::string("<cgroup>")}})
        for (size_t p; (p = s.find(from)) != std::string::npos;) s.replace(p, from.size(), to);
    };
    replace(m.root);
    // Intended differences (docs/rootfs.md, "Differences from runc"):
    // 1. A masked file is covered by the null device (berth verifies it first); the mount
    //    behind it is the container's /dev in both.
    if (m.root == "/null" && (m.fstype == "devtmpfs" || m.fstype == "tmpfs")) {
      out.push_back(m.mountpoint + " parent=" + m.parent + " <the null device>");
      continue;
    }
    // 2. berth also shows the container's cgroup2 directory on a hybrid host.
    if (m.fstype == "cgroup2" && m.parent == "/sys/fs/cgroup") continue;
    // 3. The tmpfs holding the cgroup hierarchies is read-only in berth when the mount says
    //    "ro" (runc 1.1 leaves it writable).
    if (m.mountpoint == "/sys/fs/cgroup" && m.fstype == "tmpfs") m.options = m.options.substr(m.options.find(','));
    // 10. A shared linux.rootfsPropagation is given to the container's "/" after the pivot
    //     (the runtime-spec's meaning; runc 1.1 leaves "/" private): peer tags differ.
    if (shared_root) m.propagation.clear();
    out.push_back(m.mountpoint + " parent=" + m.parent + " root=" + m.root + " " + m.options + " [" + m.propagation +
                  "] " + m.fstype + " " + m.source + " " + m.super);
  }
  return out;
}

std::vector<std::string> lines(const std::string& text) { return str::split_nonempty(text, '\n'); }

void add(Bundle& b, spec::Mount m) { b.spec().mounts.push_back(std::move(m)); }

// Host sources shared by both runs: a directory with a file and a tmpfs submount.
struct Sources {
  TempDir dir{"berth-rt-diffsrc"};
  std::string path() const { return dir.path(); }
  Sources() {
    run_cmd({"sh", "-c", "cd " + dir.path() + " && echo x > file && mkdir sub"});
    ::mount("berth-diff-sub", (dir.path() + "/sub").c_str(), "tmpfs", 0, "size=64k");
  }
  ~Sources() { ::umount2((dir.path() + "/sub").c_str(), MNT_DETACH); }
};

void user_namespace(Bundle& b) {
  b.spec().linux->namespaces.push_back({"user", ""});
  b.spec().linux->uid_mappings = {{0, 100000, 65536}};
  b.spec().linux->gid_mappings = {{0, 100000, 65536}};
  run_cmd({"chown", "-R", "100000:100000", b.rootfs()});
}

spec::Mount tmpfs(std::string dest, std::vector<std::string> o) { return {dest, "tmpfs", "tmpfs", o, {}, {}}; }
spec::Mount bind(const std::string& src, std::string dest, std::vector<std::string> o) { return {dest, "bind", src, o, {}, {}}; }

std::vector<Case> cases() {
  return {
      {"default_spec", [](Bundle&, const std::string&) {}},
      {"root_readonly", [](Bundle& b, const std::string&) { b.spec().root->readonly = true; }},
      {"propagation_shared", [](Bundle& b, const std::string&) { b.spec().linux->rootfs_propagation = "shared"; }},
      {"propagation_rshared", [](Bundle& b, const std::string&) { b.spec().linux->rootfs_propagation = "rshared"; }},
      {"propagation_private", [](Bundle& b, const std::string&) { b.spec().linux->rootfs_propagation = "private"; }},
      {"propagation_rprivate", [](Bundle& b, const std::string&) { b.spec().linux->rootfs_propagation = "rprivate"; }},
      {"propagation_slave", [](Bundle& b, const std::string&) { b.spec().linux->rootfs_propagation = "slave"; }},
      {"bind", [](Bundle& b, const std::string& s) { add(b, bind(s, "/mnt", {"bind"})); }},
      {"rbind_ro", [](Bundle& b, const std::string& s) { add(b, bind(s, "/mnt", {"rbind", "ro"})); }},
      {"rbind_rro", [](Bundle& b, const std::string& s) { add(b, bind(s, "/mnt", {"rbind", "rro"})); }},
      {"bind_flags", [](Bundle& b, const std::string& s) { add(b, bind(s, "/mnt", {"bind", "nosuid", "nodev", "noexec", "noatime"})); }},
      {"bind_file", [](Bundle& b, const std::string& s) { add(b, {"/etc/bound", "bind", s + "/file", {"bind", "ro"}, {}, {}}); }},
      {"bind_rprivate", [](Bundle& b, const std::string& s) { add(b, bind(s, "/mnt", {"rbind", "rprivate"})); }},
      {"bind_rshared", [](Bundle& b, const std::string& s) {
         b.spec().linux->rootfs_propagation = "rshared";
         add(b, bind(s, "/mnt", {"rbind", "rshared"}));
       }},
      {"bind_slave", [](Bundle& b, const std::string& s) { add(b, bind(s, "/mnt", {"rbind", "slave"})); }},
      {"bind_runbindable", [](Bundle& b, const std::string& s) { add(b, bind(s, "/mnt", {"rbind", "runbindable"})); }},
      {"bind_nosymfollow", [](Bundle& b, const std::string& s) { add(b, bind(s, "/mnt", {"bind", "nosymfollow"})); }},
      {"bind_recursive_attrs", [](Bundle& b, const std::string& s) { add(b, bind(s, "/mnt", {"rbind", "rnosuid", "rnodev", "rnoexec", "rnoatime"})); }},
      {"tmpfs_options", [](Bundle& b, const std::string&) { add(b, tmpfs("/scratch", {"nosuid", "nodev", "mode=700", "size=1m"})); }},
      {"tmpfs_ro", [](Bundle& b, const std::string&) { add(b, tmpfs("/scratch", {"ro", "size=1m"})); }},
      {"tmpfs_atime", [](Bundle& b, const std::string&) { add(b, tmpfs("/scratch", {"strictatime", "nodiratime", "sync", "dirsync"})); }},
      {"dev_ro", [](Bundle& b, const std::string&) { b.spec().mounts[1].options.push_back("ro"); }},
      {"tmpcopyup", [](Bundle& b, const std::string&) { add(b, tmpfs("/etc", {"tmpcopyup"})); }},
      {"tmpcopyup_content", [](Bundle& b, const std::string&) { add(b, tmpfs("/etc", {"tmpcopyup"})); },
       "stat -c '%n %F %a %u:%g %s' /etc /etc/*"},
      {"tmpfs_mode_of_covered_dir", [](Bundle& b, const std::string&) { add(b, tmpfs("/run", {})); add(b, tmpfs("/home", {"mode=700"})); },
       "stat -c '%n %a' /run /home"},
      {"second_mqueue_devpts_proc", [](Bundle& b, const std::string&) {
         add(b, {"/mq2", "mqueue", "mqueue", {"nosuid"}, {}, {}});
         add(b, {"/pts2", "devpts", "devpts", {"newinstance", "ptmxmode=0600"}, {}, {}});
         add(b, {"/proc2", "proc", "proc", {"nosuid", "noexec", "nodev"}, {}, {}});
       }},
      {"sysfs_rw", [](Bundle& b, const std::string&) { b.spec().mounts[5].options = {"nosuid", "noexec", "nodev"}; }},
      {"cgroup_namespace", [](Bundle& b, const std::string&) { b.spec().linux->namespaces.push_back({"cgroup", ""}); }},
      {"user_namespace", [](Bundle& b, const std::string&) { user_namespace(b); }},
      {"masked_and_readonly_image_paths", [](Bundle& b, const std::string&) {
         run_cmd({"sh", "-c", "echo s > " + b.rootfs() + "/etc/secret && mkdir -p " + b.rootfs() + "/home/private"});
         b.spec().linux->masked_paths.push_back("/etc/secret");
         b.spec().linux->masked_paths.push_back("/home/private");
         b.spec().linux->readonly_paths.push_back("/etc");
       }},
      {"devices", [](Bundle& b, const std::string&) {
         b.spec().linux->devices = {spec::Device{"/dev/fuse", "c", 10, 229, 0640u, 5u, 6u},
                                    spec::Device{"/dev/disks/loop9", "b", 7, 9, 0600u, std::nullopt, 7u}};
       },
       "cd /dev && stat -c '%n %F %t:%T %a %u:%g' $(ls -A | grep -v -e '^pts$' -e '^shm$' -e '^mqueue$') disks/loop9"},
  };
}

std::string cgroup_of(const std::string& id) { return std::string(kTestCgroupParent) + "/" + id; }

class RootfsDiff : public RootfsTest, public ::testing::WithParamInterface<Case> {};

TEST_P(RootfsDiff, SameViewAsRunc) {
  if (!have_runc()) GTEST_SKIP() << "runc is not installed: nothing to compare with";
  const Case& c = GetParam();
  Sources src;
  Runtime berth, runc(runc_binary());
  Bundle bb, rb;
  c.setup(bb, src.path());
  c.setup(rb, src.path());
  bb.script(c.script);
  rb.script(c.script);
  std::string bid = std::string("diff-") + c.name + "-b", rid = std::string("diff-") + c.name + "-r";
  auto br = run_container(berth, bb, bid);
  auto rr = run_container(runc, rb, rid);
  ASSERT_EQ(rr.code, 0) << "runc: " << rr.err;
  ASSERT_EQ(br.code, 0) << "berth: " << br.err;
  bool mountinfo = std::string(c.script) == kMountinfo;
  bool shared_root = bb.spec().linux->rootfs_propagation.find("shared") != std::string::npos;
  auto seen = mountinfo ? normalize(br.out, bb.rootfs(), cgroup_of(bid), shared_root) : lines(br.out);
  auto want = mountinfo ? normalize(rr.out, rb.rootfs(), cgroup_of(rid), shared_root) : lines(rr.out);
  EXPECT_GE(seen.size(), mountinfo ? 20u : 2u) << "too little to compare:\n" << br.out;
  EXPECT_EQ(seen, want);
}

INSTANTIATE_TEST_SUITE_P(Rootfs, RootfsDiff, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(RootfsDiffTable, HasTwentyFiveConfigurationsOrMore) { EXPECT_GE(cases().size(), 25u); }

}  // namespace
}  // namespace berth::test
