// What a container may do with devices and processes under the default rules: with
// CAP_MKNOD it can make nodes of the host's disks, memory and kernel log, but the device
// cgroup refuses to open them; and a fork bomb stops at linux.resources.pids.limit, inside
// the container, and `delete --force` takes every process with it.
#include <unistd.h>

#include "integration/rootfs_test_support.h"
#include "security/security_support.h"

namespace berth::test {
namespace {

using DeviceLimits = RootfsTest;

TEST_F(DeviceLimits, HostDeviceNodesCannotBeOpened) {
  Runtime rt;
  Bundle b;
  std::vector<std::string> caps = {"CAP_MKNOD", "CAP_DAC_OVERRIDE", "CAP_SYS_RAWIO"};
  b.spec().process->capabilities = spec::Capabilities{caps, caps, {}, caps, {}};
  // sda, nvme0n1, /dev/mem, /dev/kmsg, /dev/fuse-less misc 10:237 (loop-control)
  b.script(
      "for d in 'b 8 0' 'b 259 0' 'c 1 1' 'c 1 11' 'c 10 237'; do set -- $d; n=/tmp/n$2_$3; "
      "mknod $n $1 $2 $3 || echo \"$2:$3 no mknod\"; head -c1 $n >/dev/null 2>/tmp/err && echo \"$2:$3 OPENED\" "
      "|| echo \"$2:$3 $(grep -o 'Operation not permitted' /tmp/err)\"; done");
  auto r = run_container(rt, b, "sec-devices");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "8:0 Operation not permitted\n259:0 Operation not permitted\n1:1 Operation not permitted\n"
            "1:11 Operation not permitted\n10:237 Operation not permitted\n");
}

TEST_F(DeviceLimits, ForkBombStopsAtThePidsLimit) {
  Runtime rt;
  Bundle b;
  b.spec().linux->resources = spec::Resources{};
  b.spec().linux->resources->pids = spec::Pids{32};
  // The bomb runs in a child shell, which dies at its first failed fork; the init then
  // becomes a sleep (exec, no fork) and the bomb's processes stay for the count.
  b.script("sh -c 'i=0; while [ $i -lt 200 ]; do sleep 60 & i=$((i+1)); done' 2>/dev/null; "
           "echo done > /tmp/bombed; exec sleep 1000");
  std::string id = "sec-forkbomb";
  std::string cg = std::string(kTestCgroupParent) + "/" + id;
  b.spec().linux->cgroups_path = cg;
  b.write();
  ASSERT_EQ(rt({"run", "-d", "--bundle", b.path(), id}).code, 0);
  for (int i = 0; i < 200 && !host_exists(b.rootfs() + "/tmp/bombed"); ++i) ::usleep(50000);
  ASSERT_TRUE(host_exists(b.rootfs() + "/tmp/bombed")) << "the bomb never hit the limit";
  std::string current = slurp("/sys/fs/cgroup/pids" + cg + "/pids.current");
  if (current.empty()) current = slurp("/sys/fs/cgroup/unified" + cg + "/pids.current");
  ASSERT_FALSE(current.empty()) << "no pids controller for " << cg;
  EXPECT_LE(std::stoi(current), 32) << "the bomb got past the limit";
  EXPECT_GE(std::stoi(current), 30) << "the bomb stopped before the limit";
  std::string pidns = link_of("/proc/" + std::to_string(state_pid(rt, id)) + "/ns/pid");
  ASSERT_GE(live_in_pidns(pidns), 30);
  EXPECT_EQ(rt({"delete", "--force", id}).code, 0);
  EXPECT_EQ(live_in_pidns(pidns), 0) << "processes of the bomb survived delete";
  EXPECT_FALSE(host_exists("/sys/fs/cgroup/pids" + cg));
}

}  // namespace
}  // namespace berth::test
