// The runtime-spec model: every field parses and round-trips, the engines' real configs
// parse, and malformed input gives one error naming the source and the JSON path.
#include <gtest/gtest.h>

#include <filesystem>

#include "berth/spec.h"
#include "util/file.h"

namespace berth::spec {
namespace {

std::string fixture(const std::string& name) {
  auto t = file::read(std::string(BERTH_SOURCE_DIR) + "/tests/fixtures/" + name);
  EXPECT_TRUE(t.ok()) << name;
  return t.ok() ? *t : "";
}

TEST(SpecParse, EveryFieldOfTheFullConfig) {
  auto r = parse_spec(fixture("full-config.json"));
  ASSERT_TRUE(r.ok()) << r.error().message();
  const Spec& s = *r;
  EXPECT_EQ(s.oci_version, "1.3.0");
  EXPECT_EQ(s.process->console_size->width, 80u);
  EXPECT_EQ(s.process->user.umask, 18u);
  EXPECT_EQ(s.process->user.additional_gids, (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(s.process->capabilities->inheritable, std::vector<std::string>{"CAP_CHOWN"});
  EXPECT_EQ(s.process->rlimits[0].soft, 512u);
  EXPECT_EQ(s.process->oom_score_adj, -17);
  EXPECT_EQ(s.process->scheduler->period, 300u);
  EXPECT_EQ(s.process->io_priority->klass, "IOPRIO_CLASS_BE");
  EXPECT_EQ(s.process->exec_cpu_affinity->final, "1");
  EXPECT_TRUE(s.root->readonly);
  EXPECT_EQ(s.domainname, "d");
  EXPECT_EQ(s.mounts[1].gid_mappings[0].size, 20u);
  EXPECT_EQ(*s.hooks->prestart[0].timeout, 5);
  EXPECT_EQ(s.annotations.at("org.example"), "x");
  const Linux& l = *s.linux;
  EXPECT_EQ(l.uid_mappings[0].host_id, 100000u);
  EXPECT_EQ(l.sysctl.at("net.ipv4.ip_forward"), "1");
  EXPECT_EQ(*l.resources->devices[1].minor, 3);
  EXPECT_EQ(l.resources->memory->swap, -1);
  EXPECT_EQ(l.resources->memory->check_before_update, true);
  EXPECT_EQ(l.resources->cpu->idle, 1);
  EXPECT_EQ(l.resources->pids->limit, 100);
  EXPECT_EQ(l.resources->block_io->throttle_write_iops_device[0].rate, 900u);
  EXPECT_EQ(l.resources->hugepage_limits[0].page_size, "2MB");
  EXPECT_EQ(l.resources->network->priorities[0].priority, 500u);
  EXPECT_EQ(l.resources->rdma.at("mlx5_1").hca_objects, 10000u);
  EXPECT_EQ(l.resources->unified.at("io.max"), "8:0 rbps=100");
  EXPECT_EQ(l.namespaces[1].path, "/var/run/netns/x");
  EXPECT_EQ(l.time_offsets.at("boottime").secs, -3);
  EXPECT_EQ(l.devices[0].file_mode, 438u);
  EXPECT_EQ(l.seccomp->syscalls[0].args[0].value_two, 3u);
  EXPECT_EQ(l.seccomp->listener_metadata, "meta");
  EXPECT_EQ(l.intel_rdt->schemata, std::vector<std::string>{"L3:0=f"});
  EXPECT_TRUE(l.intel_rdt->enable_monitoring);
  EXPECT_EQ(l.personality->domain, "LINUX32");
  EXPECT_EQ(l.memory_policy->flags, std::vector<std::string>{"MPOL_F_STATIC_NODES"});
  EXPECT_EQ(l.net_devices.at("eth1").name, "net1");
  EXPECT_EQ(l.net_devices.count("eth2"), 1u);
  EXPECT_TRUE(validate(s).ok()) << validate(s).error().message();
}

TEST(SpecParse, RoundTripIsLossless) {
  auto first = parse_spec(fixture("full-config.json"));
  ASSERT_TRUE(first.ok());
  for (bool pretty : {false, true}) {
    auto again = parse_spec(to_json(*first, pretty));
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_EQ(*again, *first);
  }
}

TEST(SpecParse, EngineConfigsParseAndValidate) {
  for (const auto& e : std::filesystem::directory_iterator(std::string(BERTH_SOURCE_DIR) + "/tests/fixtures/client-configs")) {
    std::string name = e.path().filename();
    if (e.path().extension() != ".json") continue;
    std::string text = fixture("client-configs/" + name);
    if (name == "docker-exec-process.json") {
      auto p = parse_process(text);
      ASSERT_TRUE(p.ok()) << name << ": " << p.error().message();
      EXPECT_FALSE(p->args.empty());
      EXPECT_EQ(parse_process(to_json(*p)).value(), *p);
    } else if (name == "docker-update-resources.json") {
      auto r = parse_resources(text);
      ASSERT_TRUE(r.ok()) << name << ": " << r.error().message();
      EXPECT_EQ(parse_resources(to_json(*r)).value(), *r);
    } else {
      auto s = parse_spec(text);
      ASSERT_TRUE(s.ok()) << name << ": " << s.error().message();
      EXPECT_TRUE(validate(*s).ok()) << name << ": " << validate(*s).error().message();
      EXPECT_EQ(parse_spec(to_json(*s)).value(), *s) << name;
    }
  }
}

TEST(SpecParse, DefaultSpecMatchesRuncShape) {
  Spec s = default_spec(false);
  EXPECT_EQ(s.process->args, std::vector<std::string>{"sh"});
  EXPECT_TRUE(s.root->readonly);
  EXPECT_EQ(s.mounts.size(), 7u);
  EXPECT_EQ(s.linux->namespaces.size(), 5u);
  EXPECT_TRUE(validate(s).ok());
  Spec r = default_spec(true);
  EXPECT_EQ(r.linux->uid_mappings.size(), 1u);
  EXPECT_EQ(r.mounts[5].type, "none");
  // Pretty output is tab-indented like runc's.
  std::string text = to_json(s, true);
  EXPECT_NE(text.find("\n\t\"ociVersion\": \"1.3.0\""), std::string::npos) << text.substr(0, 80);
}

TEST(SpecParse, UnknownPropertiesAreIgnored) {
  auto s = parse_spec(R"({"ociVersion":"1.0.0","future":{"x":[1,2]},"process":{"cwd":"/","user":{"uid":0,"gid":0},"newField":1}})");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(s->process->cwd, "/");
}

TEST(SpecParse, NullMeansAbsent) {
  auto s = parse_spec(R"({"ociVersion":"1.0.0","process":null,"mounts":null,"linux":{"resources":{"memory":{"limit":null}}}})");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_FALSE(s->process.has_value());
  EXPECT_FALSE(s->linux->resources->memory->limit.has_value());
}

struct Malformed {
  const char* json;
  const char* error;  // exact message
};

class SpecMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(SpecMalformed, NamesTheJsonPath) {
  auto s = parse_spec(GetParam().json);
  ASSERT_FALSE(s.ok()) << GetParam().json;
  EXPECT_EQ(s.error().message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    All, SpecMalformed,
    ::testing::Values(
        Malformed{R"({"linux":{"resources":{"memory":{"limit":"abc"}}}})",
                  R"(config.json: linux.resources.memory.limit: expected an integer, got "abc")"},
        Malformed{R"({"ociVersion":1})", "config.json: ociVersion: expected a string, got 1"},
        Malformed{R"({"process":[]})", "config.json: process: expected an object, got an array"},
        Malformed{R"({"process":{"terminal":"yes"}})", R"(config.json: process.terminal: expected a boolean, got "yes")"},
        Malformed{R"({"process":{"args":"sh"}})", R"(config.json: process.args: expected an array, got "sh")"},
        Malformed{R"({"process":{"args":["sh",1]}})", "config.json: process.args[1]: expected a string, got 1"},
        Malformed{R"({"process":{"user":{"uid":-1}}})", "config.json: process.user.uid: expected a non-negative integer, got -1"},
        Malformed{R"({"process":{"user":{"uid":4294967296}}})", "config.json: process.user.uid: value 4294967296 is out of range for uint32"},
        Malformed{R"({"process":{"user":{"gid":1.5}}})", "config.json: process.user.gid: expected an integer, got 1.5"},
        Malformed{R"({"process":{"user":{"additionalGids":[1,"2"]}}})", R"(config.json: process.user.additionalGids[1]: expected an integer, got "2")"},
        Malformed{R"({"process":{"rlimits":[{"type":"RLIMIT_NOFILE","hard":true}]}})", "config.json: process.rlimits[0].hard: expected an integer, got a boolean"},
        Malformed{R"({"process":{"oomScoreAdj":{}}})", "config.json: process.oomScoreAdj: expected an integer, got an object"},
        Malformed{R"({"process":{"consoleSize":{"height":-2}}})", "config.json: process.consoleSize.height: expected a non-negative integer, got -2"},
        Malformed{R"({"process":{"capabilities":{"bounding":[1]}}})", "config.json: process.capabilities.bounding[0]: expected a string, got 1"},
        Malformed{R"({"process":{"scheduler":{"nice":2147483648}}})", "config.json: process.scheduler.nice: value 2147483648 is out of range for int32"},
        Malformed{R"({"root":{"readonly":1}})", "config.json: root.readonly: expected a boolean, got 1"},
        Malformed{R"({"mounts":{}})", "config.json: mounts: expected an array, got an object"},
        Malformed{R"({"mounts":[{"options":"ro"}]})", R"(config.json: mounts[0].options: expected an array, got "ro")"},
        Malformed{R"({"mounts":[{"uidMappings":[{"size":"1"}]}]})", R"(config.json: mounts[0].uidMappings[0].size: expected an integer, got "1")"},
        Malformed{R"({"hooks":{"poststop":[{"timeout":"5"}]}})", R"(config.json: hooks.poststop[0].timeout: expected an integer, got "5")"},
        Malformed{R"({"annotations":{"a":1}})", R"(config.json: annotations["a"]: expected a string, got 1)"},
        Malformed{R"({"linux":{"sysctl":{"net.x":2}}})", R"(config.json: linux.sysctl["net.x"]: expected a string, got 2)"},
        Malformed{R"({"linux":{"namespaces":[{"type":5}]}})", "config.json: linux.namespaces[0].type: expected a string, got 5"},
        Malformed{R"({"linux":{"devices":[{"major":"x"}]}})", R"(config.json: linux.devices[0].major: expected an integer, got "x")"},
        Malformed{R"({"linux":{"resources":{"cpu":{"shares":-1}}}})", "config.json: linux.resources.cpu.shares: expected a non-negative integer, got -1"},
        Malformed{R"({"linux":{"resources":{"blockIO":{"weight":70000}}}})", "config.json: linux.resources.blockIO.weight: value 70000 is out of range for uint16"},
        Malformed{R"({"linux":{"resources":{"pids":{"limit":"max"}}}})", R"(config.json: linux.resources.pids.limit: expected an integer, got "max")"},
        Malformed{R"({"linux":{"resources":{"rdma":{"mlx":{"hcaHandles":-5}}}}})", R"(config.json: linux.resources.rdma["mlx"].hcaHandles: expected a non-negative integer, got -5)"},
        Malformed{R"({"linux":{"resources":{"devices":[{"allow":"yes"}]}}})", R"(config.json: linux.resources.devices[0].allow: expected a boolean, got "yes")"},
        Malformed{R"({"linux":{"seccomp":{"syscalls":[{"args":[{"index":"1"}]}]}}})", R"(config.json: linux.seccomp.syscalls[0].args[0].index: expected an integer, got "1")"},
        Malformed{R"({"linux":{"timeOffsets":{"monotonic":{"secs":"1"}}}})", R"(config.json: linux.timeOffsets["monotonic"].secs: expected an integer, got "1")"},
        Malformed{R"({"linux":{"netDevices":{"eth0":{"name":7}}}})", R"(config.json: linux.netDevices["eth0"].name: expected a string, got 7)"},
        Malformed{R"({"linux":{"memoryPolicy":{"flags":"x"}}})", R"(config.json: linux.memoryPolicy.flags: expected an array, got "x")"},
        Malformed{R"({"linux":{"resources":{"memory":{"limit":99999999999999999999}}}})", "config.json: linux.resources.memory.limit: value 99999999999999999999 is out of range for int64"},
        Malformed{"[1]", "config.json: expected a JSON object, got an array"},
        Malformed{"", "config.json: invalid JSON: parse error: premature EOF"},
        Malformed{"{\"a\":", "config.json: invalid JSON: parse error: premature EOF"}));

// yajl's tree would truncate "tr\u0000ue" to "tr" (execve runs tr): a NUL anywhere in a
// string the spec holds is refused, naming the field.
INSTANTIATE_TEST_SUITE_P(
    NulBytes, SpecMalformed,
    ::testing::Values(
        Malformed{R"({"process":{"args":["tr\u0000ue"]}})", R"(config.json: process.args[0]: must not contain a NUL byte (\u0000))"},
        Malformed{R"({"process":{"env":["A=1","B=\u0000"]}})", R"(config.json: process.env[1]: must not contain a NUL byte (\u0000))"},
        Malformed{R"({"process":{"cwd":"/tmp\u0000/x"}})", R"(config.json: process.cwd: must not contain a NUL byte (\u0000))"},
        Malformed{R"({"root":{"path":"rootfs\u0000"}})", R"(config.json: root.path: must not contain a NUL byte (\u0000))"},
        Malformed{R"({"mounts":[{"destination":"/a\u0000b","source":"/x"}]})", R"(config.json: mounts[0].destination: must not contain a NUL byte (\u0000))"},
        Malformed{R"({"mounts":[{"destination":"/a","source":"/x\u0000"}]})", R"(config.json: mounts[0].source: must not contain a NUL byte (\u0000))"},
        Malformed{R"({"hooks":{"prestart":[{"path":"/bin/true\u0000x"}]}})", R"(config.json: hooks.prestart[0].path: must not contain a NUL byte (\u0000))"},
        Malformed{R"({"hostname":"a\u0000"})", R"(config.json: hostname: must not contain a NUL byte (\u0000))"},
        Malformed{R"({"linux":{"sysctl":{"net.a\u0000b":"1"}}})", R"(config.json: linux.sysctl["net.a\x00b"]: must not contain a NUL byte (\u0000))"},
        Malformed{R"({"annotations":{"a":"\u0000"}})", R"(config.json: annotations["a"]: must not contain a NUL byte (\u0000))"}));

TEST(SpecParse, EscapedBackslashBeforeU0000IsNotANul) {
  auto s = parse_spec(R"({"process":{"args":["a\\u0000","\\\u0041"]}})");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(s->process->args, (std::vector<std::string>{"a\\u0000", "\\A"}));
}

TEST(SpecParse, AKeyWithANulDoesNotStandInForTheField) {
  // Truncated, "args\u0000" would have been a second "args" and won as the last one.
  auto s = parse_spec(R"({"process":{"args":["sh"],"args\u0000":["evil"]}})");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(s->process->args, std::vector<std::string>{"sh"});
}

TEST(SpecParse, ProcessJsonRefusesNulToo) {
  auto p = parse_process(R"({"args":["sh"],"cwd":"/","env":["X=\u0000"],"user":{"uid":0,"gid":0}})");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message(), R"(process.json: env[0]: must not contain a NUL byte (\u0000))");
}

TEST(SpecParse, InvalidJsonIsOneLine) {
  auto s = parse_spec("{\"ociVersion\": \"1.0.0\",, }");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message().find('\n'), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("config.json: invalid JSON"), std::string::npos);
}

TEST(SpecParse, DeepNestingIsRefusedNotCrashed) {
  std::string deep = "{\"annotations\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto s = parse_spec(deep);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("nested deeper than"), std::string::npos);
}

// As runc: any ociVersion, or none, is accepted.
TEST(SpecValidate, AnyOciVersionIsAccepted) {
  for (const char* json : {R"({"ociVersion":"2.0.0"})", R"({"ociVersion":"1.4.0"})", R"({"ociVersion":"0.1.0"})",
                           R"({"ociVersion":""})", R"({"ociVersion":"garbage"})", R"({})"}) {
    auto s = parse_spec(json);
    ASSERT_TRUE(s.ok()) << json << ": " << s.error().message();
    EXPECT_TRUE(validate(*s).ok()) << json;
  }
}

struct Invalid {
  const char* json;
  const char* error;
};

class SpecInvalid : public ::testing::TestWithParam<Invalid> {};

TEST_P(SpecInvalid, ValidationNamesTheField) {
  auto s = parse_spec(GetParam().json);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto v = validate(*s);
  ASSERT_FALSE(v.ok()) << GetParam().json;
  EXPECT_EQ(v.error().message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    All, SpecInvalid,
    ::testing::Values(
        Invalid{R"({"ociVersion":"1.0.0","linux":{"namespaces":[{"type":"pid"},{"type":"pid"}]}})", R"(config.json: linux.namespaces[1].type: duplicate namespace "pid")"},
        Invalid{R"({"ociVersion":"1.0.0","linux":{"namespaces":[{"type":"net"}]}})", R"(config.json: linux.namespaces[0].type: unknown value "net")"},
        Invalid{R"({"ociVersion":"1.0.0","linux":{"namespaces":[{"type":"net","path":"x"}]}})", R"(config.json: linux.namespaces[0].type: unknown value "net")"},
        Invalid{R"({"ociVersion":"1.0.0","process":{"cwd":"/","user":{"uid":0,"gid":0},"rlimits":[{"type":"RLIMIT_FOO","hard":1,"soft":1}]}})", R"(config.json: process.rlimits[0].type: unknown value "RLIMIT_FOO")"},
        Invalid{R"({"ociVersion":"1.0.0","process":{"cwd":"/","user":{"uid":0,"gid":0},"rlimits":[{"type":"RLIMIT_NOFILE","hard":1,"soft":2}]}})", "config.json: process.rlimits[0]: soft limit is above the hard limit"},
        Invalid{R"({"ociVersion":"1.0.0","process":{"cwd":"/","user":{"uid":0,"gid":0},"oomScoreAdj":2000}})", "config.json: process.oomScoreAdj: must be between -1000 and 1000"},
        Invalid{R"({"ociVersion":"1.0.0","linux":{"devices":[{"path":"/dev/x","type":"z"}]}})", R"(config.json: linux.devices[0].type: unknown device type "z" (want c, b, u or p))"},
        Invalid{R"({"ociVersion":"1.0.0","linux":{"seccomp":{"defaultAction":"SCMP_ACT_NOPE"}}})", R"(config.json: linux.seccomp.defaultAction: unknown value "SCMP_ACT_NOPE")"},
        Invalid{R"({"ociVersion":"1.0.0","linux":{"rootfsPropagation":"sideways"}})", R"(config.json: linux.rootfsPropagation: unknown value "sideways")"},
        Invalid{R"({"ociVersion":"1.0.0","linux":{"timeOffsets":{"realtime":{"secs":1}}}})", R"(config.json: linux.timeOffsets: unknown value "realtime")"},
        Invalid{R"({"ociVersion":"1.0.0","linux":{"memoryPolicy":{"mode":"MPOL_X","nodes":""}}})", R"(config.json: linux.memoryPolicy.mode: unknown value "MPOL_X")"},
        Invalid{R"({"ociVersion":"1.0.0","hooks":{"prestart":[{"path":"rel"}]}})", R"(config.json: hooks.prestart[0].path: must be an absolute path, got "rel")"},
        Invalid{R"({"ociVersion":"1.0.0","linux":{"maskedPaths":["proc/kcore"]}})", R"(config.json: linux.maskedPaths[0]: must be an absolute path, got "proc/kcore")"}));

}  // namespace
}  // namespace berth::spec
