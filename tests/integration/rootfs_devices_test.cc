// /dev in real containers: the default nodes, linux.devices (type, major:minor, fileMode,
// uid, gid), the links, /dev/console from the pty, binds of the host's nodes in a user
// namespace, and what happens when the image's /dev is in the way.
#include "integration/rootfs_test_support.h"

namespace berth::test {
namespace {

using RootfsDevices = RootfsTest;

void user_namespace(Bundle& b) {
  b.spec().linux->namespaces.push_back({"user", ""});
  b.spec().linux->uid_mappings = {{0, 100000, 65536}};
  b.spec().linux->gid_mappings = {{0, 100000, 65536}};
  run_cmd({"chown", "-R", "100000:100000", b.rootfs()});
}

TEST_F(RootfsDevices, DefaultNodesAndLinks) {
  Runtime rt;
  Bundle b;
  b.script("cd /dev && stat -c '%n %F %t:%T %a %u:%g' null zero full random urandom tty && "
           "for l in ptmx fd stdin stdout stderr core; do echo $l $(readlink $l); done");
  auto r = run_container(rt, b, "d-default");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "null character special file 1:3 666 0:0\n"
            "zero character special file 1:5 666 0:0\n"
            "full character special file 1:7 666 0:0\n"
            "random character special file 1:8 666 0:0\n"
            "urandom character special file 1:9 666 0:0\n"
            "tty character special file 5:0 666 0:0\n"
            "ptmx pts/ptmx\n"
            "fd /proc/self/fd\n"
            "stdin /proc/self/fd/0\n"
            "stdout /proc/self/fd/1\n"
            "stderr /proc/self/fd/2\n" +
                std::string(host_exists("/proc/kcore") ? "core /proc/kcore\n" : "core\n"));
}

// stdio on the host's /dev/null is moved onto the container's own node after the pivot, as
// runc does (a descriptor of the host's /dev in the container is one CRIU cannot checkpoint:
// podman's conmon starts the runtime with stdin on /dev/null); pipes stay as they are.
// Detached, so that runc too hands its own stdio to the init (in the foreground it makes pipes).
TEST_F(RootfsDevices, StdioOnTheHostsDevNullBecomesTheContainers) {
  // the shell's own fds (/proc/$$: a command substitution's fd 1 is its pipe), results on fd 3
  const std::string probe =
      "exec 3>/probe.tmp; n=$(stat -c %d:%i /dev/null); for f in 0 1 2; do "
      "[ \"$(stat -L -c %d:%i /proc/$$/fd/$f)\" = \"$n\" ] && echo $f container >&3 || echo $f host >&3; done; "
      "mv /probe.tmp /probe";
  for (const std::string& bin : {berth_binary(), runc_binary()}) {
    if (bin.empty()) continue;
    Runtime rt(bin);
    Bundle b;
    b.script(probe);
    std::string id = bin == berth_binary() ? "d-null" : "d-null-runc";
    b.spec().linux->cgroups_path = std::string(kTestCgroupParent) + "/" + id;
    b.write();
    auto r = run_cmd({"sh", "-c", "exec \"$0\" --root \"$1\" run -d --bundle \"$2\" \"$3\" </dev/null >/dev/null 2>&1",
                      bin, rt.root(), b.path(), id});
    ASSERT_EQ(r.code, 0) << bin << ": " << r.err;
    std::string out;
    for (int i = 0; i < 100 && (out = file_text(b.rootfs() + "/probe")).empty(); ++i) ::usleep(50 * 1000);
    EXPECT_EQ(out, "0 container\n1 container\n2 container\n") << bin;
  }
}

TEST_F(RootfsDevices, SpecDevicesWithModeAndOwner) {
  Runtime rt;
  Bundle b;
  b.spec().linux->devices = {spec::Device{"/dev/fuse", "c", 10, 229, 0640u, 5u, 6u},
                             spec::Device{"/dev/disks/loop9", "b", 7, 9, 0600u, std::nullopt, 7u},
                             spec::Device{"/dev/pipe0", "p", 0, 0, 0620u, std::nullopt, std::nullopt},
                             spec::Device{"/dev/null", "c", 1, 3, 0600u, 1u, 1u}};
  b.script("cd /dev && stat -c '%n %F %t:%T %a %u:%g' fuse disks/loop9 null && stat -c '%n %F %a' pipe0");
  auto r = run_container(rt, b, "d-spec");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "fuse character special file a:e5 640 5:6\n"
            "disks/loop9 block special file 7:9 600 0:7\n"
            "null character special file 1:3 600 1:1\n"
            "pipe0 fifo 620\n");
}

TEST_F(RootfsDevices, UserNamespaceBindsTheHostsNodes) {
  Runtime rt;
  Bundle b;
  user_namespace(b);
  b.spec().linux->devices = {spec::Device{"/dev/fuse", "c", 10, 229, 0666u, std::nullopt, std::nullopt}};
  b.script("stat -c '%n %F %t:%T' /dev/null /dev/fuse; grep -c ' /dev/null ' /proc/self/mountinfo; echo x > /dev/null && echo ok");
  auto r = run_container(rt, b, "d-userns");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "/dev/null character special file 1:3\n/dev/fuse character special file a:e5\n1\nok\n");
}

TEST_F(RootfsDevices, ConsoleIsThePtyBoundByFd) {
  Runtime rt;
  Bundle b;
  b.spec().process->terminal = true;
  b.script("stat -c '%F %t' /dev/console; readlink /proc/self/fd/0; grep ' /dev/console ' /proc/self/mountinfo | sed 's/.* - //' | cut -d' ' -f1");
  auto r = run_container(rt, b, "d-console");
  ASSERT_EQ(r.code, 0) << r.err;
  // 0x88 = 136, the first Unix98 pty major.
  EXPECT_EQ(r.out, "character special file 88\r\n/dev/pts/0\r\ndevpts\r\n");
}

TEST_F(RootfsDevices, ConsoleOnAReadOnlyRootWithTheImagesDev) {
  Runtime rt;
  Bundle b;
  b.spec().process->terminal = true;
  b.spec().root->readonly = true;
  b.spec().mounts.erase(b.spec().mounts.begin() + 1, b.spec().mounts.begin() + 2);  // image /dev
  b.script("stat -c '%F %t' /dev/console; touch /x 2>&1; true");
  auto r = run_container(rt, b, "d-console-ro");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "character special file 88\r\ntouch: /x: Read-only file system\r\n");
}

TEST_F(RootfsDevices, ImageDevWithoutTmpfsGetsTheNodes) {
  Runtime rt;
  Bundle b;
  b.spec().mounts.erase(b.spec().mounts.begin() + 1, b.spec().mounts.begin() + 5);  // /dev, pts, shm, mqueue
  b.script("stat -c '%n %t:%T' /dev/null /dev/zero");
  auto r = run_container(rt, b, "d-imagedev");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "/dev/null 1:3\n/dev/zero 1:5\n");
  EXPECT_EQ(run_cmd({"stat", "-c", "%t:%T", b.rootfs() + "/dev/null"}).out, "1:3\n") << "made in the image's /dev";
}

TEST_F(RootfsDevices, DifferentFileAtADevicePathIsAnError) {
  Runtime rt;
  Bundle b;
  b.spec().mounts.erase(b.spec().mounts.begin() + 1, b.spec().mounts.begin() + 5);
  run_cmd({"sh", "-c", "echo data > " + b.rootfs() + "/dev/null"});
  auto r = run_container(rt, b, "d-mismatch");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("a different file already exists at /dev/null"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(b.rootfs() + "/dev/null"), "data\n");
}

TEST_F(RootfsDevices, DevBoundFromTheHostIsUsedAsItIs) {
  Runtime rt;
  Bundle b;
  b.spec().mounts[1] = {"/dev", "bind", "/dev", {"rbind", "nosuid"}, {}, {}};
  b.spec().mounts.erase(b.spec().mounts.begin() + 2, b.spec().mounts.begin() + 5);
  b.script("grep ' /dev ' /proc/self/mountinfo | sed 's/.* - //' | cut -d' ' -f1");
  auto r = run_container(rt, b, "d-devbind");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "devtmpfs\n");
}

}  // namespace
}  // namespace berth::test
