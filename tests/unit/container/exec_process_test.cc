// exec's process assembly and --cgroup handling (src/container/exec_process.cc): runc's
// override rules and texts, without a container.
#include "container/exec_process.h"

#include <gtest/gtest.h>

namespace berth::container {
namespace {

spec::Spec config() {
  spec::Spec s = spec::default_spec(false);
  s.process->env = {"PATH=/bin", "TERM=xterm"};
  s.process->user.gid = 7;
  s.process->terminal = true;
  return s;
}

ExecOptions opts(std::vector<std::string> args) {
  ExecOptions o;
  o.id = "c";
  o.args = std::move(args);
  return o;
}

TEST(ExecProcess, OverridesTheContainersProcess) {
  ExecOptions o = opts({"ls", "-la"});
  o.cwd = "/tmp";
  o.env = {"FOO=bar"};
  o.no_new_privs = false;
  auto r = exec_process(o, config(), "");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->process.args, (std::vector<std::string>{"ls", "-la"}));
  EXPECT_EQ(r->process.cwd, "/tmp");
  EXPECT_EQ(r->process.env, (std::vector<std::string>{"PATH=/bin", "TERM=xterm", "FOO=bar"}));
  EXPECT_FALSE(r->process.terminal) << "terminal comes from --tty alone";
  EXPECT_FALSE(r->process.no_new_privileges);
  EXPECT_EQ(r->process.user.gid, 7u);
}

TEST(ExecProcess, User) {
  ExecOptions o = opts({"id"});
  o.user = "1000";
  auto r = exec_process(o, config(), "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->process.user.uid, 1000u);
  EXPECT_EQ(r->process.user.gid, 7u) << "a uid alone keeps the container's gid (runc)";
  o.user = "1000:5";
  o.additional_gids = {"9", "10"};
  r = exec_process(o, config(), "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->process.user.gid, 5u);
  EXPECT_EQ(r->process.user.additional_gids, (std::vector<uint32_t>{9, 10}));
  EXPECT_TRUE(r->user_name.empty());
  o.user = "nobody:3";
  o.additional_gids = {};
  r = exec_process(o, config(), "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->user_name, "nobody:3") << "names are resolved inside the container";
  o.user = "1000:x";
  EXPECT_EQ(exec_process(o, config(), "").error().message(), "invalid group \"x\"");
  o.user = "1000";
  o.additional_gids = {"-1"};
  EXPECT_EQ(exec_process(o, config(), "").error().message(), "additional-gids must be a positive number -1");
}

TEST(ExecProcess, CapsNeverReachInheritable) {
  ExecOptions o = opts({"true"});
  o.caps = {"CAP_SYS_ADMIN"};
  auto r = exec_process(o, config(), "");
  ASSERT_TRUE(r.ok());
  const auto& c = *r->process.capabilities;
  EXPECT_EQ(c.bounding.back(), "CAP_SYS_ADMIN");
  EXPECT_EQ(c.effective.back(), "CAP_SYS_ADMIN");
  EXPECT_EQ(c.permitted.back(), "CAP_SYS_ADMIN");
  EXPECT_TRUE(c.inheritable.empty()) << "CVE-2022-29162";
  EXPECT_TRUE(std::find(c.ambient.begin(), c.ambient.end(), "CAP_SYS_ADMIN") == c.ambient.end())
      << "ambient only joins when the spec grants inheritable capabilities";
  spec::Spec inh = config();
  inh.process->capabilities->inheritable = {"CAP_KILL"};
  r = exec_process(o, inh, "");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->process.capabilities->ambient.back(), "CAP_SYS_ADMIN");
  EXPECT_EQ(r->process.capabilities->inheritable, (std::vector<std::string>{"CAP_KILL"}));
}

TEST(ExecProcess, RuncRefusals) {
  EXPECT_EQ(exec_process(opts({}), config(), "").error().message(), "process args cannot be empty");
  ExecOptions o = opts({"true"});
  o.cwd = "tmp";
  EXPECT_EQ(exec_process(o, config(), "").error().message(), "Cwd must be an absolute path");
  o.cwd = "";
  o.process_label = "system_u:system_r:container_t:s0";
  EXPECT_EQ(exec_process(o, config(), "").error().message(),
            "selinux label is specified in config, but selinux is disabled or not supported");
}

TEST(ExecProcess, ProcessJsonReplacesEverything) {
  ExecOptions o = opts({"ignored"});
  o.process_file = "p.json";
  o.cwd = "/ignored";
  auto r = exec_process(o, config(), R"({"args":["sh"],"cwd":"/srv","user":{"uid":3,"gid":4}})");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->process.args, (std::vector<std::string>{"sh"}));
  EXPECT_EQ(r->process.cwd, "/srv");
  EXPECT_EQ(r->process.user.uid, 3u);
  EXPECT_EQ(exec_process(o, config(), R"({"args":["sh"]})").error().message(), "Cwd property must not be empty");
  EXPECT_EQ(exec_process(o, config(), R"({"args":["sh"],"cwd":"/","execCPUAffinity":{"final":"x"}})").error().message(),
            "p.json: process.execCPUAffinity.final: invalid cpu list \"x\"");
}

TEST(SubCgroups, ParsesRuncsForms) {
  auto one = parse_sub_cgroups({"sub"});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, (std::map<std::string, std::string>{{"", "sub"}}));
  auto many = parse_sub_cgroups({"memory:a", "cpu,cpuacct:b"});
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(*many, (std::map<std::string, std::string>{{"memory", "a"}, {"cpu", "b"}, {"cpuacct", "b"}}));
  EXPECT_EQ(parse_sub_cgroups({"a", "b"}).error().message(), "invalid --cgroup argument: a (missing <controller>: prefix)");
  EXPECT_EQ(parse_sub_cgroups({",cpu:a"}).error().message(), "invalid --cgroup argument: ,cpu:a (empty <controller> prefix)");
  EXPECT_EQ(parse_sub_cgroups({"cpu:a", "cpu:b"}).error().message(),
            "invalid --cgroup argument(s): controller cpu specified multiple times");
}

TEST(SubCgroups, AppliesBelowTheContainersCgroup) {
  std::map<std::string, std::string> paths = {{"cpu", "/cg/cpu,cpuacct/c"}, {"cpuacct", "/cg/cpu,cpuacct/c"},
                                              {"memory", "/cg/memory/c"}, {"", "/cg/unified/c"}};
  auto r = apply_sub_cgroups(paths, {{"cpu", "s"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at("cpu"), "/cg/cpu,cpuacct/c/s");
  EXPECT_EQ(r->at("cpuacct"), "/cg/cpu,cpuacct/c/s") << "co-mounted controllers move together";
  EXPECT_EQ(r->at("memory"), "/cg/memory/c");
  EXPECT_EQ(r->at(""), "/cg/unified/c");
  auto all = apply_sub_cgroups(paths, {{"", "x/y"}});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->at("memory"), "/cg/memory/c/x/y");
  EXPECT_EQ(all->at(""), "/cg/unified/c/x/y");
  auto top = apply_sub_cgroups(paths, {{"", "/"}});
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(*top, paths);
  EXPECT_EQ(apply_sub_cgroups(paths, {{"", "../c2"}}).error().message(), "../c2 is not a sub cgroup path");
  EXPECT_EQ(apply_sub_cgroups(paths, {{"memory", "a/../../c2"}}).error().message(), "a/../../c2 is not a sub cgroup path");
  EXPECT_EQ(apply_sub_cgroups(paths, {{"rdma", "a"}}).error().message(), "invalid --cgroup argument: unknown controller rdma");
  EXPECT_FALSE(apply_sub_cgroups(paths, {{"cpu", "a"}, {"cpuacct", "b"}}).ok());
}

}  // namespace
}  // namespace berth::container
