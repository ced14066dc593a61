// Process attributes and namespaces observed from inside real containers: user, umask,
// capabilities, rlimits, hostname/domainname, user-namespace maps, time-namespace offsets,
// joining an existing network namespace, signal forwarding of a foreground run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "support/harness.h"

namespace berth::test {
namespace {

std::string run_out(Runtime& rt, Bundle& b, const std::string& id) {
  b.write();
  auto r = rt({"run", "--bundle", b.path(), id});
  EXPECT_EQ(r.code, 0) << r.err;
  return r.out;
}

TEST(Process, UserGroupsUmask) {
  Runtime rt;
  Bundle b;
  b.spec().process->user.uid = 1000;
  b.spec().process->user.gid = 1000;
  b.spec().process->user.additional_gids = {3000};
  b.spec().process->user.umask = 027;
  b.script("id; umask; echo HOME=$HOME");
  std::string out = run_out(rt, b, "p1");
  // Exactly additionalGids, as runc: no memberships from the image's /etc/group.
  EXPECT_NE(out.find("uid=1000(user) gid=1000(user) groups=3000"), std::string::npos) << out;
  EXPECT_NE(out.find("0027"), std::string::npos) << out;
  EXPECT_NE(out.find("HOME=/home/user"), std::string::npos) << out;
}

TEST(Process, CapabilitiesAsSpecified) {
  Runtime rt;
  Bundle b;
  b.script("grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status");
  // default spec: AUDIT_WRITE(29), KILL(5), NET_BIND_SERVICE(10) in all but inheritable;
  // the kernel keeps no ambient cap that is not inheritable (runc shows the same).
  std::string out = run_out(rt, b, "p2");
  EXPECT_NE(out.find("CapInh:\t0000000000000000"), std::string::npos) << out;
  EXPECT_NE(out.find("CapPrm:\t0000000020000420"), std::string::npos) << out;
  EXPECT_NE(out.find("CapEff:\t0000000020000420"), std::string::npos) << out;
  EXPECT_NE(out.find("CapBnd:\t0000000020000420"), std::string::npos) << out;
  EXPECT_NE(out.find("CapAmb:\t0000000000000000"), std::string::npos) << out;
}

TEST(Process, RlimitsNoNewPrivsOomScore) {
  Runtime rt;
  Bundle b;
  b.spec().process->rlimits = {{"RLIMIT_NOFILE", 512, 256}, {"RLIMIT_NPROC", 100, 100}};
  b.spec().process->oom_score_adj = 500;
  b.script("ulimit -n; ulimit -Hn; ulimit -u; grep NoNewPrivs /proc/self/status; cat /proc/self/oom_score_adj");
  std::string out = run_out(rt, b, "p3");
  EXPECT_NE(out.find("256\n512\n100\n"), std::string::npos) << out;
  EXPECT_NE(out.find("NoNewPrivs:\t1"), std::string::npos) << out;
  EXPECT_NE(out.find("500"), std::string::npos) << out;
}

TEST(Process, HostnameDomainnameEnvCwd) {
  Runtime rt;
  Bundle b;
  b.spec().hostname = "box";
  b.spec().domainname = "example.org";
  b.spec().process->env.push_back("FOO=bar");
  b.spec().process->cwd = "/new/dir";
  b.script("hostname; cat /proc/sys/kernel/domainname; echo $FOO; pwd");
  EXPECT_EQ(run_out(rt, b, "p4"), "box\nexample.org\nbar\n/new/dir\n");
}

TEST(Process, UserNamespaceMaps) {
  Runtime rt;
  Bundle b;
  b.spec().linux->namespaces.push_back({"user", ""});
  b.spec().linux->uid_mappings = {{0, 100000, 1000}, {1000, 1000, 1}};
  b.spec().linux->gid_mappings = {{0, 100000, 1000}, {1000, 1000, 1}};
  // sysfs cannot be mounted without a netns of our own... it has one here; keep it simple.
  run_cmd({"chown", "-R", "100000:100000", b.rootfs()});
  b.script("cat /proc/self/uid_map; id -u");
  std::string out = run_out(rt, b, "p5");
  EXPECT_NE(out.find("         0     100000       1000\n      1000       1000          1\n0\n"), std::string::npos) << out;
}

TEST(Process, TimeNamespaceOffset) {
  Runtime rt;
  Bundle b;
  b.spec().linux->namespaces.push_back({"time", ""});
  b.spec().linux->time_offsets["boottime"] = {86400 * 365, 0};
  b.script("cut -d. -f1 /proc/uptime");
  std::string out = run_out(rt, b, "p6");
  EXPECT_GT(std::stol(out), 86400L * 365) << out;
}

TEST(Process, JoinsANamedNetworkNamespace) {
  std::string ns = "berth-it-" + std::to_string(::getpid());
  ASSERT_EQ(run_cmd({"ip", "netns", "add", ns}).code, 0);
  run_cmd({"ip", "-n", ns, "link", "add", "bt0", "type", "veth", "peer", "name", "bt1"});
  {
    Runtime rt;
    Bundle b;
    for (auto& n : b.spec().linux->namespaces)
      if (n.type == "network") n.path = "/var/run/netns/" + ns;
    b.script("cat /proc/net/dev | grep -o 'bt[01]' | sort | tr '\\n' ' '");
    EXPECT_EQ(run_out(rt, b, "p7"), "bt0 bt1 ");
  }
  run_cmd({"ip", "netns", "del", ns});
}

TEST(Process, SigtermToForegroundRunReachesTheContainer) {
  Runtime rt;
  Bundle b;
  b.script("trap 'echo got-term; exit 3' TERM; echo ready; while true; do sleep 0.1; done");
  b.write();
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::execl(rt.binary().c_str(), rt.binary().c_str(), "--root", rt.root().c_str(), "run", "--bundle",
            b.path().c_str(), "p8", nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[256];
  while (text.find("ready") == std::string::npos) {
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::kill(pid, SIGTERM);
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_NE(text.find("got-term"), std::string::npos) << text;
}

TEST(Process, KilledInitGives128PlusSignal) {
  Runtime rt;
  Bundle b;
  b.script("echo ready; exec sleep 1000");
  b.write();
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::execl(rt.binary().c_str(), rt.binary().c_str(), "--root", rt.root().c_str(), "run", "--bundle",
            b.path().c_str(), "p9", nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  char buf[64];
  ASSERT_GT(::read(out[0], buf, sizeof buf), 0);
  // A container's init ignores signals it has no handler for, except from outside its pid
  // namespace: `berth kill` is outside.
  EXPECT_EQ(rt({"kill", "p9", "KILL"}).code, 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(out[0]);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 137);
}

}  // namespace
}  // namespace berth::test
