// CDI: JSON and YAML spec files, validation, qualified names and annotations, the
// registry's directory priority and conflicts, containerEdits merged into Edits.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "devices/cdi/apply.h"
#include "devices/cdi/registry.h"
#include "devices/cdi/spec.h"
#include "devices/cdi/yaml.h"
#include "unit/devices/gpu_fixture.h"

namespace berth::devices::cdi {
namespace {

constexpr const char* kJson = R"({
  "cdiVersion": "0.6.0",
  "kind": "vendor.com/device",
  "annotations": {"a": "b"},
  "devices": [
    {"name": "dev0", "containerEdits": {
      "env": ["DEV=0"],
      "deviceNodes": [{"path": "/dev/vendor0", "hostPath": "/dev/null", "permissions": "rw"}],
      "mounts": [{"hostPath": "/usr/lib/vendor/libv.so.1", "containerPath": "/usr/lib/libv.so.1", "options": ["ro", "nosuid", "bind"]}]
    }},
    {"name": "dev1", "containerEdits": {"deviceNodes": [{"path": "/dev/vendor1", "type": "c", "major": 240, "minor": 1, "fileMode": 432, "uid": 5, "gid": 6}]}}
  ],
  "containerEdits": {
    "env": ["VENDOR=1", "DEV=spec"],
    "additionalGids": [44],
    "mounts": [{"hostPath": "/opt/vendor", "containerPath": "/opt", "type": "bind", "options": ["rbind", "ro"]}],
    "hooks": [{"hookName": "createContainer", "path": "/usr/bin/vendor-hook", "args": ["vendor-hook", "x"]}]
  }
})";

constexpr const char* kYaml = R"(---
cdiVersion: 1.1.0
kind: nvidia.com/gpu
containerEdits:
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  netDevices:
  - hostInterfaceName: eth5
    name: gpu-net0
  intelRdt:
    closID: gpu
    schemata: ["L3:0=ff"]
    enableMonitoring: true
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
      hostPath: /dev/null
      fileMode: 0660
      major: 0x10
      minor: 7
    - &ctl
      path: /dev/nvidiactl
      hostPath: /dev/null
- name: all
  annotations: {note: 'quoted: yes'}
  containerEdits:
    deviceNodes:
    - *ctl
)";

TEST(Cdi, ParsesJson) {
  auto s = parse_spec(kJson, "/etc/cdi/vendor.json");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->kind, "vendor.com/device");
  ASSERT_EQ(s->devices.size(), 2u);
  EXPECT_EQ(s->devices[1].container_edits.device_nodes[0].file_mode, 0660u);
  EXPECT_EQ(s->container_edits.additional_gids, std::vector<uint32_t>{44});
  EXPECT_EQ(s->container_edits.hooks[0].hook_name, "createContainer");
}

TEST(Cdi, ParsesYamlWithYaml11Numbers) {
  auto s = parse_spec(kYaml, "/var/run/cdi/nvidia.yaml");
  ASSERT_TRUE(s) << s.error().message();
  ASSERT_EQ(s->devices.size(), 2u);
  EXPECT_EQ(s->devices[0].name, "0") << "a quoted number stays a string";
  const auto& n = s->devices[0].container_edits.device_nodes[0];
  EXPECT_EQ(n.file_mode, 0660u) << "leading-zero octal";
  EXPECT_EQ(n.major, 16);
  EXPECT_EQ(s->devices[1].container_edits.device_nodes[0].path, "/dev/nvidiactl") << "alias expanded";
  EXPECT_EQ(s->devices[1].annotations.at("note"), "quoted: yes");
  ASSERT_EQ(s->container_edits.net_devices.size(), 1u);
  EXPECT_EQ(s->container_edits.net_devices[0].name, "gpu-net0");
  EXPECT_TRUE(s->container_edits.intel_rdt->enable_monitoring);
  EXPECT_EQ(s->container_edits.intel_rdt->schemata, std::vector<std::string>{"L3:0=ff"});
}

TEST(Cdi, YamlToJsonScalars) {
  auto j = yaml_to_json("a: ~\nb: True\nc: -12\nd: 1.5e3\ne: 0o17\nf: 012\ng: 0x1F\nh: '012'\ni: 1.2.3\nj: [x, \"y\\n\"]\n", "t.yaml");
  ASSERT_TRUE(j) << j.error().message();
  EXPECT_EQ(*j, R"({"a":null,"b":true,"c":-12,"d":1.5e3,"e":15,"f":10,"g":31,"h":"012","i":"1.2.3","j":["x","y\u000a"]})");
  EXPECT_FALSE(yaml_to_json("a: [1, 2\n", "bad.yaml"));
  EXPECT_FALSE(yaml_to_json("a: *nope\n", "bad.yaml"));
  EXPECT_FALSE(yaml_to_json("", "empty.yaml"));
}

// Found by fuzz_cdi_yaml (tests/fuzz/corpus/cdi_yaml/regression-float-exponent): a plain
// scalar with a dot was copied into the JSON text as a number when its exponent was not
// digits ("1.5e-3}" made the JSON invalid); leading zeros made it invalid too.
TEST(Cdi, YamlToJsonFloatsAreValidJson) {
  auto j = yaml_to_json("a: 1.5e-3}\nb: 1.5e+\nc: 1.5ex\nd: 01.5\ne: -00.25E+2\nf: 0.5e-7\ng: 1.5e\n", "t.yaml");
  ASSERT_TRUE(j) << j.error().message();
  EXPECT_EQ(*j, R"({"a":"1.5e-3}","b":"1.5e+","c":"1.5ex","d":1.5,"e":-0.25E+2,"f":0.5e-7,"g":"1.5e"})");
  auto fuzz = yaml_to_json("%YAML 1.1\n--- !cdi\ncdiVersion: \"1.0.0\"\nkin, f: 1.5e-3}\ndevices:\n  - nam%YAML 1.1\n", "t.yaml");
  ASSERT_TRUE(fuzz) << fuzz.error().message();
  EXPECT_EQ(*fuzz, R"({"cdiVersion":"1.0.0","kin, f":"1.5e-3}","devices":["nam%YAML 1.1"]})");
  auto bad = parse_spec("cdiVersion: 0.6.0\nkind: a.com/b\ndevices: [{name: x, containerEdits: {deviceNodes: [{path: /dev/x, uid: 1.5e-3}]}}]\n",
                        "t.yaml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("expected an integer"), std::string::npos) << bad.error().message();
}

// Found while writing fuzz_cdi_yaml, not by it (its out-of-memory limit reports this input):
// each anchor keeps a copy of its node's text, so 250 nested anchors around 13 MB of
// expanded aliases took 3.7 GB and 30 s from a 64 KiB file. The copies are bounded like the
// output now. Not in the seed corpus: every run of it copies 16 MB, which slows fuzzing.
TEST(Cdi, NestedAnchorsAreBounded) {
  std::string yaml = "a: &x [";
  for (int i = 0; i < 7000; ++i) yaml += i ? ",abcdefgh" : "abcdefgh";
  yaml += "]\nb: ";
  for (int i = 0; i < 250; ++i) yaml += "&n" + std::to_string(i) + " [";
  yaml += "[";
  for (int i = 0; i < 200; ++i) yaml += i ? ",*x" : "*x";
  yaml += "]" + std::string(250, ']') + "\n";
  ASSERT_LT(yaml.size(), 65536u);
  auto j = yaml_to_json(yaml, "bomb.yaml");
  ASSERT_FALSE(j);
  EXPECT_NE(j.error().message().find("anchored nodes too large"), std::string::npos) << j.error().message();
  auto fine = yaml_to_json("a: &x [1, 2]\nb: &y [*x, *x]\nc: [*y, *y, *x]\n", "t.yaml");
  ASSERT_TRUE(fine) << fine.error().message();
  EXPECT_EQ(*fine, R"({"a":[1,2],"b":[[1,2],[1,2]],"c":[[[1,2],[1,2]],[[1,2],[1,2]],[1,2]]})");
}

TEST(Cdi, ValidationNamesTheProblem) {
  struct Bad {
    const char* json;
    const char* want;
  };
  for (const Bad& b : std::vector<Bad>{
           {R"({"cdiVersion":"9.9.9","kind":"a.com/b","devices":[{"name":"x","containerEdits":{}}]})", "unsupported cdiVersion"},
           {R"({"cdiVersion":"0.6.0","kind":"nokind","devices":[{"name":"x","containerEdits":{}}]})", "invalid kind"},
           {R"({"cdiVersion":"0.6.0","kind":"a.com/b","devices":[]})", "no devices"},
           {R"({"cdiVersion":"0.6.0","kind":"a.com/b","devices":[{"name":"-x","containerEdits":{}}]})", "invalid device name"},
           {R"({"cdiVersion":"0.6.0","kind":"a.com/b","devices":[{"name":"x","containerEdits":{}},{"name":"x","containerEdits":{}}]})", "defined twice"},
           {R"({"cdiVersion":"0.6.0","kind":"a.com/b","devices":[{"name":"x","containerEdits":{"deviceNodes":[{"path":"dev/x"}]}}]})", "not absolute"},
           {R"({"cdiVersion":"0.6.0","kind":"a.com/b","devices":[{"name":"x","containerEdits":{"hooks":[{"hookName":"later","path":"/h"}]}}]})", "unknown hookName"},
           {R"({"cdiVersion":"0.6.0","kind":"a.com/b","devices":[{"name":"x","containerEdits":{"hooks":[{"hookName":"poststart","path":"/h","timeout":0}]}}]})", "/h: timeout must be greater than zero"},
           {R"({"cdiVersion":"0.6.0","kind":"a.com/b","devices":[{"name":"x","containerEdits":{"env":["NOEQUALS"]}}]})", "NAME=value"},
           {R"({"cdiVersion":"0.6.0","kind":"a.com/b","devices":[{"name":"x","containerEdits":{"deviceNodes":[{"path":"/dev/x","major":"a"}]}}]})", "expected an integer"},
       }) {
    auto s = parse_spec(b.json, "t.json");
    ASSERT_FALSE(s) << b.json;
    EXPECT_NE(s.error().message().find(b.want), std::string::npos) << s.error().message();
  }
}

TEST(Cdi, QualifiedNamesFromAnnotations) {
  auto names = requested_devices({{"cdi.k8s.io/gpu", "nvidia.com/gpu=0, nvidia.com/gpu=1"},
                                  {"cdi.k8s.io/other", "vendor.com/device=dev0,nvidia.com/gpu=0"},
                                  {"unrelated", "x=y"}});
  ASSERT_TRUE(names) << names.error().message();
  std::vector<std::string> texts;
  for (const auto& n : *names) texts.push_back(n.text());
  EXPECT_EQ(texts, (std::vector<std::string>{"nvidia.com/gpu=0", "nvidia.com/gpu=1", "vendor.com/device=dev0"}));
  auto bad = requested_devices({{"cdi.k8s.io/x", "gpu0"}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("annotation cdi.k8s.io/x"), std::string::npos);
  EXPECT_FALSE(parse_qualified_name("vendor.com/=x"));
  EXPECT_FALSE(parse_qualified_name("vendor.com/a/b=x"));
}

struct Dirs {
  std::string etc = test::temp_dir("berth-cdi-etc"), run = test::temp_dir("berth-cdi-run");
  void write(const std::string& dir, const std::string& name, const std::string& text) { std::ofstream(dir + "/" + name) << text; }
  Registry load() { return load_registry({etc, run, "/nonexistent/cdi"}); }
};

std::string one_device(const std::string& kind, const std::string& name, const std::string& host) {
  return R"({"cdiVersion":"0.5.0","kind":")" + kind + R"(","devices":[{"name":")" + name +
         R"(","containerEdits":{"mounts":[{"hostPath":")" + host + R"(","containerPath":"/x"}]}}]})";
}

TEST(Cdi, RegistryPriorityConflictsAndUnknownNames) {
  Dirs d;
  d.write(d.etc, "a.json", one_device("vendor.com/device", "dev0", "/etc-version"));
  d.write(d.run, "b.json", one_device("vendor.com/device", "dev0", "/run-version"));
  d.write(d.etc, "c.yaml", one_device("vendor.com/device", "dev1", "/one"));
  d.write(d.etc, "d.json", one_device("vendor.com/device", "dev1", "/two"));
  d.write(d.etc, "broken.json", "{");
  d.write(d.etc, "ignored.txt", "not a spec");
  Registry reg = d.load();
  EXPECT_EQ(reg.specs.size(), 4u);
  ASSERT_EQ(reg.errors.size(), 1u);
  auto r = resolve(reg, {{"vendor.com/device", "dev0"}});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ((*r)[0].device->container_edits.mounts[0].host_path, "/run-version") << "/var/run/cdi overrides /etc/cdi";
  auto conflict = resolve(reg, {{"vendor.com/device", "dev1"}});
  ASSERT_FALSE(conflict);
  EXPECT_NE(conflict.error().message().find("defined by both"), std::string::npos);
  auto unknown = resolve(reg, {{"vendor.com/device", "dev9"}});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("unknown CDI device vendor.com/device=dev9 (vendor.com/device devices: dev0, dev1)"),
            std::string::npos) << unknown.error().message();
  EXPECT_NE(unknown.error().message().find("broken.json"), std::string::npos) << "unusable files are named";
}

TEST(Cdi, EditsMergeSpecWideOnceAndFillNodesFromTheHost) {
  auto s = parse_spec(kJson, "/etc/cdi/vendor.json");
  ASSERT_TRUE(s);
  std::vector<Resolved> devs = {{{"vendor.com/device", "dev0"}, &*s, &s->devices[0]},
                                {{"vendor.com/device", "dev1"}, &*s, &s->devices[1]}};
  auto e = cdi_edits(devs);
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->env, (std::vector<std::string>{"VENDOR=1", "DEV=0"})) << "spec-wide first, then the device; later wins";
  ASSERT_EQ(e->nodes.size(), 2u);
  EXPECT_EQ(e->nodes[0].type, 'c');
  EXPECT_EQ(e->nodes[0].major, 1u) << "from stat of /dev/null";
  EXPECT_EQ(e->nodes[0].minor, 3u);
  EXPECT_EQ(e->nodes[0].mode, 0666u);
  EXPECT_EQ(e->nodes[0].access, "rw");
  EXPECT_EQ(e->nodes[1].major, 240u);
  EXPECT_EQ(e->nodes[1].mode, 0660u);
  EXPECT_EQ(e->nodes[1].uid, 5u);
  EXPECT_EQ(e->nodes[1].access, "rwm") << "default permissions";
  ASSERT_EQ(e->mounts.size(), 2u);
  EXPECT_EQ(e->mounts[0].container_path, "/opt") << "parents first";
  EXPECT_EQ(e->mounts[0].options, (std::vector<std::string>{"rbind", "ro"}));
  EXPECT_EQ(e->mounts[1].options, (std::vector<std::string>{"ro", "nosuid"}));
  EXPECT_EQ(e->additional_gids, std::vector<uint32_t>{44});
  ASSERT_EQ(e->hooks.size(), 1u) << "spec-wide hooks once, not once per device";
  EXPECT_EQ(e->hooks[0].stage, "createContainer");
  EXPECT_EQ(e->hooks[0].hook.args, (std::vector<std::string>{"vendor-hook", "x"}));
}

TEST(Cdi, ConflictsAndUnsupportedMounts) {
  std::string conflicting = R"({"cdiVersion":"0.6.0","kind":"v.com/d","devices":[
    {"name":"a","containerEdits":{"deviceNodes":[{"path":"/dev/x","type":"c","major":1,"minor":3}]}},
    {"name":"b","containerEdits":{"deviceNodes":[{"path":"/dev/x","type":"c","major":1,"minor":5}]}},
    {"name":"c","containerEdits":{"deviceNodes":[{"path":"/dev/x","type":"c","major":1,"minor":3}]}},
    {"name":"m1","containerEdits":{"mounts":[{"hostPath":"/a","containerPath":"/m"}]}},
    {"name":"m2","containerEdits":{"mounts":[{"hostPath":"/b","containerPath":"/m"}]}},
    {"name":"t","containerEdits":{"mounts":[{"hostPath":"tmpfs","containerPath":"/t","type":"tmpfs"}]}},
    {"name":"missing","containerEdits":{"deviceNodes":[{"path":"/dev/nope-berth-test"}]}}]})";
  auto s = parse_spec(conflicting, "c.json");
  ASSERT_TRUE(s) << s.error().message();
  auto dev = [&](int i) { return Resolved{{"v.com/d", s->devices[i].name}, &*s, &s->devices[i]}; };
  auto nodes = cdi_edits({dev(0), dev(1)});
  ASSERT_FALSE(nodes);
  EXPECT_NE(nodes.error().message().find("CDI conflict at /dev/x"), std::string::npos);
  EXPECT_TRUE(cdi_edits({dev(0), dev(2)})) << "the same node twice is not a conflict";
  EXPECT_FALSE(cdi_edits({dev(3), dev(4)}));
  auto tmpfs = cdi_edits({dev(5)});
  ASSERT_FALSE(tmpfs);
  EXPECT_EQ(tmpfs.error().kind(), ErrorKind::kUnsupported);
  auto missing = cdi_edits({dev(6)});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("stat /dev/nope-berth-test"), std::string::npos);
}

TEST(Cdi, SpecLevelNetDevicesCarriedIntelRdtRefused) {
  auto s = parse_spec(kYaml, "nvidia.yaml");
  ASSERT_TRUE(s);
  auto rdt = cdi_edits({{{"nvidia.com/gpu", "0"}, &*s, &s->devices[0]}});
  ASSERT_FALSE(rdt) << "berth has no Intel RDT support: refused, not dropped";
  EXPECT_EQ(rdt.error().kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(rdt.error().message(),
            "nvidia.com/gpu=0 (nvidia.yaml): intelRdt (closID \"gpu\"): berth does not support Intel RDT");
  s->container_edits.intel_rdt.reset();
  auto e = cdi_edits({{{"nvidia.com/gpu", "0"}, &*s, &s->devices[0]}});
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->net_devices.at("eth5").name, "gpu-net0");
  EXPECT_EQ(e->nodes[0].major, 16u) << "given numbers are kept";
}

TEST(Cdi, NetDeviceNamesAreValidated) {
  auto spec_with = [](const std::string& nd) {
    return parse_spec(R"({"cdiVersion":"1.1.0","kind":"v.com/n","devices":[{"name":"a","containerEdits":{"netDevices":[)" +
                          nd + "]}}]}",
                      "n.json");
  };
  EXPECT_TRUE(spec_with(R"({"hostInterfaceName":"eth1","name":"net1"})"));
  auto missing = spec_with(R"({"hostInterfaceName":"eth1"})");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("netDevices: eth1: invalid name \"\""), std::string::npos) << missing.error().message();
  EXPECT_FALSE(spec_with(R"({"hostInterfaceName":"eth1","name":"a-name-too-long-16"})"));
  EXPECT_FALSE(spec_with(R"({"hostInterfaceName":"eth/1","name":"net1"})"));
  EXPECT_FALSE(spec_with(R"({"hostInterfaceName":"eth1","name":"net 1"})"));
}

}  // namespace
}  // namespace berth::devices::cdi
