// org.criu.config (issue 31 §3): the annotation names a file of options that CRIU, as root,
// reads after the RPC's and obeys (log-file truncates a host file of the writer's choice,
// action-script and lib run code). A file the container can write — in its rootfs, its
// bundle — or one of another owner, group-writable, a link, or a file that is no CRIU
// config at all (/etc/shadow, whose first line CRIU used to quote in the error) is refused
// by checkpoint and by restore before CRIU is called, in one line that never shows the
// file's content. CRIU need not work on the host: nothing here reaches it. runc 1.1.5
// passes the path to CRIU as it is.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "integration/rootfs_test_support.h"
#include "support/exec_helpers.h"

namespace berth::test {
namespace {

using CriuConfig = RootfsTest;

struct Case {
  std::string name;
  std::string path;      // the annotation (may be in the bundle, which each case makes)
  std::string expect;    // the refusal, after "org.criu.config <path>: "
};

// Host files for the cases: a root-owned directory of the test, its files, and the victim
// that each file's `log-file` would have CRIU truncate (runc 1.1.5, and berth before: the
// log replaced its content).
struct HostFiles {
  TempDir dir{"berth-rt-criuconf"};
  std::string victim = dir.path() + "/victim";
  std::string payload = "log-file " + victim + "\n";
  HostFiles() {
    ::chmod(dir.path().c_str(), 0755);
    write_text(victim, "keep\n");
    put("group-writable.conf", 0664, 0);
    put("nobody.conf", 0644, 65534);
    EXPECT_EQ(::symlink("/etc/shadow", (dir.path() + "/shadow-link.conf").c_str()), 0);
  }
  void put(const std::string& name, mode_t mode, uid_t owner) {
    std::string p = dir.path() + "/" + name;
    write_text(p, payload);
    EXPECT_EQ(::chmod(p.c_str(), mode), 0);
    EXPECT_EQ(::chown(p.c_str(), owner, 0), 0);
  }
  std::vector<Case> cases(const std::string& bundle) const {
    const std::string& d = dir.path();
    return {
        {"in the rootfs", bundle + "/rootfs/criu.conf", "inside the container's rootfs " + bundle + "/rootfs"},
        {"in the bundle", bundle + "/criu.conf", "inside the bundle " + bundle},
        {"group-writable", d + "/group-writable.conf", "writable by group (mode 0664)"},
        {"of uid 65534", d + "/nobody.conf", "owned by uid 65534, not by root"},
        {"a link to /etc/shadow", d + "/shadow-link.conf", "a symbolic link (not followed)"},
        {"/etc/shadow", "/etc/shadow", "line 1 is not a CRIU option (its content is not shown)"},
    };
  }
};

// The bundle of a case: the config names the file; the files in the rootfs and the bundle
// are written by "the container" (root-owned, 0644: only where they are gives them away).
void prepare(Bundle& b, const Case& c, const std::string& id, const std::string& payload) {
  b.spec().annotations["org.criu.config"] = c.path;
  b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/" + id;
  b.write();
  for (const std::string& p : {b.rootfs() + "/criu.conf", b.path() + "/criu.conf"}) write_text(p, payload);
}

void expect_refusal(const CmdResult& r, const Case& c) {
  EXPECT_EQ(r.code, 1) << c.name << ": " << r.err;
  EXPECT_NE(r.err.find("org.criu.config " + c.path + ": " + c.expect), std::string::npos) << c.name << ": " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.name << ": " << r.err;
  std::string shadow = file_text("/etc/shadow");
  std::string first = shadow.substr(0, shadow.find('\n'));
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(r.err.find(first), std::string::npos) << c.name << ": /etc/shadow's first line in the error";
  EXPECT_EQ(r.err.find(first.substr(0, first.find(':') + 2)), std::string::npos) << c.name << ": " << r.err;
  EXPECT_EQ(r.err.find("criu failed"), std::string::npos) << c.name << ": CRIU ran: " << r.err;
}

TEST_F(CriuConfig, CheckpointRefusesAFileTheContainerCouldWriteOrThatIsNoConfig) {
  HostFiles files;
  for (size_t i = 0; i < files.cases("").size(); ++i) {
    Runtime rt;
    Bundle b;
    Case here = files.cases(b.path())[i];
    b.script("sleep 100");
    prepare(b, here, "criu-conf", files.payload);
    auto run = rt({"run", "-d", "--bundle", b.path(), "criu-conf"});
    ASSERT_EQ(run.code, 0) << run.err;
    TempDir images{"berth-rt-criuimg"};
    auto r = rt({"checkpoint", "--image-path", images.path(), "criu-conf"});
    expect_refusal(r, here);
    EXPECT_FALSE(host_exists(images.path() + "/dump.log")) << here.name << ": CRIU was called";
    EXPECT_FALSE(host_exists(images.path() + "/descriptors.json")) << here.name << ": refused after writing";
    EXPECT_NE(rt({"state", "criu-conf"}).out.find("\"running\""), std::string::npos) << here.name << ": still running";
    EXPECT_EQ(rt({"delete", "--force", "criu-conf"}).code, 0);
  }
  EXPECT_EQ(file_text(files.victim), "keep\n") << "CRIU obeyed a refused file's log-file";
}

TEST_F(CriuConfig, RestoreRefusesTheSameBeforeAnythingExists) {
  HostFiles files;
  for (size_t i = 0; i < files.cases("").size(); ++i) {
    Runtime rt;
    Bundle b;
    Case here = files.cases(b.path())[i];
    prepare(b, here, "criu-conf-rst", files.payload);
    TempDir images{"berth-rt-criuimg"};
    auto r = rt({"restore", "-d", "--image-path", images.path(), "--bundle", b.path(), "criu-conf-rst"});
    expect_refusal(r, here);
    EXPECT_NE(rt({"state", "criu-conf-rst"}).code, 0) << here.name << ": a state directory was left";
    EXPECT_FALSE(host_exists("/sys/fs/cgroup/pids" + std::string(kTestCgroupParent) + "/criu-conf-rst")) << here.name;
  }
  EXPECT_EQ(file_text(files.victim), "keep\n") << "CRIU obeyed a refused file's log-file";
}

}  // namespace
}  // namespace berth::test
