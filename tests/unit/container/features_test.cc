// `berth features` says only what this build really does: seccomp with the vocabulary the
// kernel accepts, idmapped mounts, every mount option the parser takes, berth's device
// annotations. The document must parse as JSON and carry the runtime-spec's keys.
#include "container/features.h"

#include "berth/checkpoint.h"

#include <gtest/gtest.h>

#include "linux/rootfs/options.h"
#include "util/json.h"

namespace berth::container {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Features, SeccompIsEnabledWithItsVocabulary) {
  std::string f = features_json();
  EXPECT_TRUE(has(f, "\"seccomp\": {\n            \"enabled\": true")) << f;
  for (const char* s : {"SCMP_ACT_ERRNO", "SCMP_ACT_NOTIFY", "SCMP_CMP_MASKED_EQ", "SCMP_ARCH_X86_64",
                        "SECCOMP_FILTER_FLAG_LOG"})
    EXPECT_TRUE(has(f, std::string("\"") + s + "\"")) << s;
}

// linux.mountLabel and process.selinuxLabel are applied on an SELinux host (as runc and
// crun, whose features say enabled); AppArmor and Intel RDT are not claimed.
TEST(Features, SelinuxLabelsAreSupported) {
  std::string f = features_json();
  EXPECT_TRUE(has(f, "\"selinux\": {\n            \"enabled\": true")) << f;
  EXPECT_TRUE(has(f, "\"apparmor\": {\n            \"enabled\": false")) << f;
}

TEST(Features, IdmapAndEveryParsedMountOptionAreListed) {
  std::string f = features_json();
  EXPECT_TRUE(has(f, "\"idmap\": {\n                \"enabled\": true")) << f;
  for (const auto& o : linux::rootfs::known_mount_options()) EXPECT_TRUE(has(f, "\"" + o + "\",") || has(f, "\"" + o + "\"\n")) << o;
}

TEST(Features, NamesBerthsNativeDevices) {
  std::string f = features_json();
  for (const char* a : {"org.berth.gpu.native", "org.berth.rdma.native", "org.berth.cdi.enabled",
                        "org.berth.rootless"})
    EXPECT_TRUE(has(f, std::string("\"") + a + "\": \"true\"")) << a;
  EXPECT_TRUE(has(f, "\"ociVersionMax\": \"1.3.0\""));
}

TEST(Features, SaysWhetherTheBinaryIsSealed) {
  // The test binary lives in the build tree (writable); tests/integration/exe_seal_test.cc
  // seals a berth binary and sees "true".
  std::string f = features_json();
  EXPECT_TRUE(has(f, "\"org.berth.exe.sealed\": \"false\"") || has(f, "\"org.berth.exe.sealed\": \"true\"")) << f;
}

TEST(Features, CheckpointFollowsTheBuild) {
  std::string want = std::string("\"org.berth.checkpoint.enabled\": \"") + (criu_supported() ? "true" : "false") + "\"";
  EXPECT_TRUE(has(features_json(), want)) << want;
}

}  // namespace
}  // namespace berth::container
