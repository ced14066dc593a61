// nvidia-cdi-hook subcommands done natively: create-symlinks, update-ldcache,
// enable-cuda-compat, disable-device-node-modification; chmod skipped; others kept.
#include "devices/nvidia/cdi_hooks.h"

#include <gtest/gtest.h>

#include "devices/nvidia/module.h"
#include "unit/devices/gpu_fixture.h"

namespace berth::devices::nvidia {
namespace {

StagedHook hook(const std::string& path, std::vector<std::string> args) {
  return {"createContainer", spec::Hook{path, std::move(args), {}, std::nullopt}};
}

TEST(NvidiaCdiHooks, NativeTranslation) {
  const std::string& f = test::gpu_fixture();
  NvidiaConfig cfg = test::fixture_config(f);
  std::string rootfs = test::make_rootfs(f, true, true, "compat-note");
  spec::Spec spec;
  spec.mounts.push_back({"/proc", "proc", "proc", {}, {}, {}});
  Edits e;
  e.hooks = {hook("/usr/bin/nvidia-cdi-hook", {"nvidia-cdi-hook", "create-symlinks", "--link", "libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so",
                                               "--link=../card1::/dev/dri/by-path/pci-0000:06:00.0-card"}),
             hook("/usr/bin/nvidia-ctk", {"nvidia-ctk", "hook", "update-ldcache", "--folder", "/usr/lib/x86_64-linux-gnu", "--folder=/usr/lib/x86_64-linux-gnu/vdpau"}),
             hook("/usr/bin/nvidia-cdi-hook", {"nvidia-cdi-hook", "enable-cuda-compat", "--host-driver-version=550.54.15"}),
             hook("/usr/bin/nvidia-cdi-hook", {"nvidia-cdi-hook", "disable-device-node-modification"}),
             hook("/usr/bin/nvidia-cdi-hook", {"nvidia-cdi-hook", "chmod", "--mode", "755", "--path", "/dev/dri"}),
             hook("/usr/bin/nvidia-cdi-hook", {"nvidia-cdi-hook", "some-future-subcommand"}),
             hook("/usr/local/bin/vendor-hook", {"vendor-hook"})};
  ASSERT_TRUE(translate_cdi_hooks(e, spec, cfg, rootfs));
  ASSERT_EQ(e.hooks.size(), 2u) << "unknown subcommands and other programs stay hooks";
  EXPECT_EQ(e.hooks[0].hook.args[1], "some-future-subcommand");
  std::string ld = choose_ldconfig(cfg);
  std::string text = test::redact(test::redact(to_text(e), f), " " + ld + " ", " $LDCONFIG ");
  test::expect_golden(text, "cdi-hooks.txt");
  EXPECT_NE(text.find("ModifyDeviceFiles: 0"), std::string::npos);
  EXPECT_NE(text.find("bind $F/proc/driver/nvidia/gpus -> gpus"), std::string::npos) << "everything else stays visible";
  EXPECT_NE(text.find("00-compat-berth.conf"), std::string::npos);
}

TEST(NvidiaCdiHooks, NoProcMountNoMaskNoLibcNoLdconfig) {
  const std::string& f = test::gpu_fixture();
  NvidiaConfig cfg = test::fixture_config(f);
  std::string rootfs = test::make_rootfs(f, false, false);
  spec::Spec spec;
  Edits e;
  e.hooks = {hook("/usr/bin/nvidia-cdi-hook", {"nvidia-cdi-hook", "disable-device-node-modification"}),
             hook("/usr/bin/nvidia-cdi-hook", {"nvidia-cdi-hook", "update-ldcache", "--folder", "/usr/lib64"})};
  ASSERT_TRUE(translate_cdi_hooks(e, spec, cfg, rootfs));
  EXPECT_TRUE(e.empty()) << to_text(e);
}

}  // namespace
}  // namespace berth::devices::nvidia
