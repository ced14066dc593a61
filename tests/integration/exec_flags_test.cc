// `exec` flags observed from inside a real container: user, groups, env, cwd, capabilities,
// no_new_privs, tty, exit status, detach + pid-file, preserve-fds, --process. Each case runs
// under berth with an explicit expectation, and under runc (same bundle) asserting the
// same observation.
#include <gtest/gtest.h>

#include "support/exec_helpers.h"

namespace berth::test {
namespace {

// One container under berth and, when runc is installed, its twin under runc.
class ExecFlags : public ::testing::Test {
 protected:
  void start(const std::string& name, const std::function<void(spec::Spec&)>& edit = {}) {
    berth_c_ = std::make_unique<Container>(berth_, "b-" + name, edit);
    ASSERT_EQ(berth_c_->started().code, 0) << berth_c_->started().err;
    if (have_runc()) {
      runc_c_ = std::make_unique<Container>(runc_, "r-" + name, edit);
      ASSERT_EQ(runc_c_->started().code, 0) << runc_c_->started().err;
    }
  }
  // Runs the exec under both; asserts runc's exit code and stdout equal berth's; returns berth's.
  CmdResult both(const std::vector<std::string>& flags, const std::vector<std::string>& cmd, const std::string& in = "") {
    CmdResult b = berth_c_->exec(flags, cmd, in);
    if (runc_c_) {
      CmdResult r = runc_c_->exec(flags, cmd, in);
      EXPECT_EQ(r.code, b.code) << "runc: " << r.err << "\nberth: " << b.err;
      EXPECT_EQ(r.out, b.out) << "runc and berth differ";
    }
    return b;
  }

  Runtime berth_;
  Runtime runc_{runc_binary()};
  std::unique_ptr<Container> berth_c_, runc_c_;
};

TEST_F(ExecFlags, UserAndGroups) {
  start("user");
  // A numeric uid keeps the container's gid; no group file membership (explicit form).
  EXPECT_EQ(both({"-u", "1000"}, {"id"}).out, "uid=1000(user) gid=0(root)\n");
  EXPECT_EQ(both({"--user", "1000:1000", "-g", "5", "-g", "6"}, {"id"}).out,
            "uid=1000(user) gid=1000(user) groups=5,6\n");
  EXPECT_EQ(both({"-u", "1000"}, {"sh", "-c", "echo $HOME"}).out, "/home/user\n");
  // berth only: names are resolved in the container's passwd and group files.
  EXPECT_EQ(berth_c_->exec({"-u", "user"}, {"id"}).out, "uid=1000(user) gid=1000(user) groups=2000(extra)\n");
  auto bad = berth_c_->exec({"-u", "nosuchuser"}, {"id"});
  EXPECT_EQ(bad.code, 255);
  EXPECT_NE(bad.err.find("unable to find user nosuchuser"), std::string::npos) << bad.err;
}

TEST_F(ExecFlags, EnvCwdAndArgsStayWithTheCommand) {
  start("env");
  auto env = both({"-e", "FOO=bar", "-e", "PATH=/bin"}, {"sh", "-c", "env | sort"});
  EXPECT_NE(env.out.find("FOO=bar\n"), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("PATH=/bin\n"), std::string::npos) << env.out;
  EXPECT_EQ(both({"--cwd", "/tmp"}, {"pwd"}).out, "/tmp\n");
  // Flags after the id belong to the command (no reordering).
  EXPECT_EQ(both({}, {"ls", "-d", "/tmp"}).out, "/tmp\n");
  auto rel = both({"--cwd", "relative"}, {"pwd"});
  EXPECT_EQ(rel.code, 255);
  EXPECT_NE(rel.err.find("Cwd must be an absolute path"), std::string::npos) << rel.err;
}

TEST_F(ExecFlags, Capabilities) {
  start("caps");
  // runc's default set: AUDIT_WRITE, KILL, NET_BIND_SERVICE; never inheritable.
  auto caps = both({}, {"grep", "^Cap", "/proc/self/status"}).out;
  EXPECT_EQ(status_field(caps, "CapEff"), "0000000020000420") << caps;
  EXPECT_EQ(status_field(caps, "CapInh"), "0000000000000000") << caps;
  auto added = both({"--cap", "CAP_SYS_ADMIN", "--cap", "CAP_NET_RAW"}, {"grep", "^Cap", "/proc/self/status"}).out;
  EXPECT_EQ(status_field(added, "CapBnd"), "0000000020202420") << added;
  EXPECT_EQ(status_field(added, "CapEff"), "0000000020202420") << added;
  EXPECT_EQ(status_field(added, "CapInh"), "0000000000000000") << "CVE-2022-29162: --cap never reaches inheritable";
  auto user = both({"-u", "1000", "--cap", "CAP_SYS_ADMIN"}, {"grep", "^Cap", "/proc/self/status"}).out;
  EXPECT_EQ(status_field(user, "CapPrm"), "0000000000000000") << user;
  EXPECT_EQ(status_field(user, "CapBnd"), "0000000020200420") << user;
}

TEST_F(ExecFlags, NoNewPrivs) {
  start("nnp", [](spec::Spec& s) { s.process->no_new_privileges = false; });
  EXPECT_EQ(both({}, {"grep", "NoNewPrivs", "/proc/self/status"}).out, "NoNewPrivs:\t0\n");
  EXPECT_EQ(both({"--no-new-privs"}, {"grep", "NoNewPrivs", "/proc/self/status"}).out, "NoNewPrivs:\t1\n");
}

TEST_F(ExecFlags, ExitStatusPassesThrough) {
  start("status");
  EXPECT_EQ(both({}, {"sh", "-c", "exit 7"}).code, 7);
  EXPECT_EQ(both({}, {"sh", "-c", "kill -9 $$"}).code, 137);
  EXPECT_EQ(both({}, {"true"}).code, 0);
  auto missing = both({}, {"nosuchcmd"});
  EXPECT_EQ(missing.code, 255);
  EXPECT_NE(missing.err.find("exec: \\\"nosuchcmd\\\": executable file not found in $PATH"), std::string::npos)
      << missing.err;
  auto noargs = both({}, {});
  EXPECT_EQ(noargs.code, 255);
  EXPECT_NE(noargs.err.find("args cannot be empty"), std::string::npos) << noargs.err;
}

TEST_F(ExecFlags, SignalsAreForwarded) {
  start("signals");
  auto observe = [](const Runtime& rt, const std::string& id) {
    return run_and_signal({rt.binary(), "--root", rt.root(), "exec", id, "sh", "-c",
                           "trap 'echo got-term; exit 42' TERM; echo ready; while true; do sleep 0.1; done"},
                          "ready\n", SIGTERM);
  };
  auto b = observe(berth_, berth_c_->id());
  EXPECT_EQ(b.code, 42);
  EXPECT_EQ(b.out, "ready\ngot-term\n");
  if (runc_c_) {
    auto r = observe(runc_, runc_c_->id());
    EXPECT_EQ(r.code, b.code);
    EXPECT_EQ(r.out, b.out);
  }
}

TEST_F(ExecFlags, StdinReachesTheProcess) {
  start("stdin");
  EXPECT_EQ(both({}, {"cat"}, "from stdin\n").out, "from stdin\n");
}

TEST_F(ExecFlags, TtyThroughConsoleSocket) {
  start("tty");
  auto observe = [](const Container& c, std::string* name) {
    FdSocket sock;
    auto r = c.exec({"-d", "-t", "--console-socket", sock.path()}, {"sh", "-c", "test -t 0 && test -t 1 && echo is-a-tty; tty"});
    EXPECT_EQ(r.code, 0) << r.err;
    int master = sock.receive(name);
    EXPECT_GE(master, 0);
    std::string out = master >= 0 ? drain(master) : "";
    if (master >= 0) ::close(master);
    return out;
  };
  std::string name;
  std::string b = observe(*berth_c_, &name);
  // runc sends "/dev/ptmx" here; berth the name of the pty itself.
  EXPECT_EQ(name.rfind("/dev/pts/", 0), 0u) << "the console socket's payload is the pty name: " << name;
  EXPECT_EQ(b.substr(0, 10), "is-a-tty\r\n") << b;
  EXPECT_NE(b.find("/dev/pts/"), std::string::npos) << b;
  if (runc_c_) {
    EXPECT_EQ(observe(*runc_c_, &name).substr(0, 10), b.substr(0, 10));
  }
  auto nosock = both({"-d", "-t"}, {"true"});
  EXPECT_EQ(nosock.code, 255);
  EXPECT_NE(nosock.err.find("cannot allocate tty if"), std::string::npos) << nosock.err;
}

TEST_F(ExecFlags, ForegroundTtyIsProxied) {
  start("fgtty");
  // berth only: runc insists on a terminal on its own stdin here.
  auto r = berth_c_->exec({"-t"}, {"sh", "-c", "test -t 1 && echo is-a-tty; exit 3"});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(r.out, "is-a-tty\r\n");
}

TEST_F(ExecFlags, DetachWithPidFile) {
  start("detach");
  TempDir d;
  auto observe = [&](const Container& c, const std::string& file) {
    auto r = c.exec({"-d", "--pid-file", file}, {"sleep", "30"});
    EXPECT_EQ(r.code, 0) << r.err;
    int pid = std::atoi(read_text(file).c_str());
    EXPECT_GT(pid, 0);
    // runc may return while its init is still execing the payload.
    std::string proc = "/proc/" + std::to_string(pid);
    EXPECT_TRUE(eventually([&] { return read_text(proc + "/cmdline") == std::string("sleep\0" "30\0", 9); }))
        << c.id() << ": " << read_text(proc + "/cmdline");
    return link_of("/proc/" + std::to_string(pid) + "/ns/pid") == link_of("/proc/" + std::to_string(c.pid()) + "/ns/pid");
  };
  EXPECT_TRUE(observe(*berth_c_, d.path() + "/b.pid")) << "the detached process is in the container's pid namespace";
  // berth only (runc 1.2+): --pidfd-socket receives a pidfd of the process.
  FdSocket sock;
  auto r = berth_c_->exec({"-d", "--pid-file", d.path() + "/p.pid", "--pidfd-socket", sock.path()}, {"sleep", "30"});
  EXPECT_EQ(r.code, 0) << r.err;
  int pidfd = sock.receive(nullptr);
  ASSERT_GE(pidfd, 0);
  std::string fdinfo = read_text("/proc/self/fdinfo/" + std::to_string(pidfd));
  EXPECT_EQ(status_field(fdinfo, "Pid"), read_text(d.path() + "/p.pid")) << fdinfo;
  ::close(pidfd);
  if (runc_c_) {
    EXPECT_TRUE(observe(*runc_c_, d.path() + "/r.pid"));
  }
}

TEST_F(ExecFlags, PreserveFds) {
  start("fds");
  TempDir d;
  std::string file = d.path() + "/data";
  write_text(file, "preserved-content\n");
  auto run = [&](const Runtime& rt, const std::string& id, bool preserve) {
    std::vector<std::string> argv = {rt.binary(), "--root", rt.root(), "exec"};
    if (preserve) argv.insert(argv.end(), {"--preserve-fds", "1"});
    argv.insert(argv.end(), {id, "sh", "-c", "cat <&3 2>/dev/null || echo closed; ls /proc/self/fd"});
    return run_with_fd3(argv, file);
  };
  auto kept = run(berth_, berth_c_->id(), true);
  EXPECT_EQ(kept.code, 0);
  EXPECT_EQ(kept.out, "preserved-content\n0\n1\n2\n3\n4\n") << "fd 3 kept; 4 is ls's own directory";
  auto dropped = run(berth_, berth_c_->id(), false);
  EXPECT_EQ(dropped.out, "closed\n0\n1\n2\n3\n") << "no host fd reaches the process without --preserve-fds";
  if (runc_c_) {
    EXPECT_EQ(run(runc_, runc_c_->id(), true).out, kept.out);
    EXPECT_EQ(run(runc_, runc_c_->id(), false).out, dropped.out);
  }
}

TEST_F(ExecFlags, ProcessJson) {
  start("procjson");
  std::string docker = source_dir() + "/../shared/fixtures/client-configs/docker-exec-process.json";
  TempDir d;
  std::string file = d.path() + "/process.json";
  std::string text = read_text(docker);
  if (text.empty()) {
    // The shared fixture lives outside the repository; this is Docker's exec process.
    text = R"({"user":{"uid":0,"gid":0,"additionalGids":[0]},"args":["sh","-c","echo exec-ok"],)"
           R"("env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"cwd":"/",)"
           R"("capabilities":{"bounding":["CAP_KILL"],"effective":["CAP_KILL"],"permitted":["CAP_KILL"]},"oomScoreAdj":0})";
  }
  write_text(file, text);
  EXPECT_EQ(both({"--process", file}, {}).out, "exec-ok\n");
  // berth reads the process from stdin with "-".
  auto in = berth_c_->exec({"-p", "-"}, {}, text);
  EXPECT_EQ(in.code, 0) << in.err;
  EXPECT_EQ(in.out, "exec-ok\n");
}

TEST_F(ExecFlags, LsmFlagsAreRefusedClearly) {
  start("lsm");
  auto aa = berth_c_->exec({"--apparmor", "docker-default"}, {"true"});
  EXPECT_EQ(aa.code, 255);
  EXPECT_NE(aa.err.find("AppArmor is not enabled on this host"), std::string::npos) << aa.err;
  auto label = both({"--process-label", "system_u:system_r:container_t:s0"}, {"true"});
  EXPECT_EQ(label.code, 255);
  EXPECT_NE(label.err.find("selinux label is specified in config, but selinux is disabled or not supported"),
            std::string::npos)
      << label.err;
}

TEST_F(ExecFlags, FinalCpuAffinity) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
  // berth only: runc 1.1 predates process.execCPUAffinity.
  berth_c_ = std::make_unique<Container>(berth_, "b-affinity");
  ASSERT_EQ(berth_c_->started().code, 0);
  TempDir d;
  std::string file = d.path() + "/process.json";
  write_text(file, R"({"args":["grep","Cpus_allowed_list","/proc/self/status"],"cwd":"/",)"
                   R"("env":["PATH=/bin"],"user":{"uid":0,"gid":0},)"
                   R"("execCPUAffinity":{"initial":"0","final":"1"}})");
  auto r = berth_c_->exec({"-p", file}, {});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "Cpus_allowed_list:\t1\n");
}

}  // namespace
}  // namespace berth::test
