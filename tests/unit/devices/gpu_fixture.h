// The fake NVIDIA host for unit tests: tests/fixtures/gpu/make-fixture.sh run once per test
// process per variant into a temporary directory (removed at exit), and helpers to build
// a small container rootfs next to it.
#pragma once

#include <string>

#include "devices/config.h"

namespace berth::devices::test {

// Fixture variants: "2gpu-mig" (2 GPUs, MIG on GPU 0) and "8gpu".
const std::string& gpu_fixture(const std::string& variant = "2gpu-mig");
// The fixture's config.json, parsed.
NvidiaConfig fixture_config(const std::string& root);

// A fresh temporary directory (removed at exit).
std::string temp_dir(const std::string& prefix);
// A rootfs: Debian-like (etc/debian_version) with a glibc loader when `glibc`, plus the
// files of the fixture image fragment `image` ("" = none).
std::string make_rootfs(const std::string& fixture, bool debian, bool glibc, const std::string& image = "");

// Replaces every occurrence of `root` in text by `name` (golden files stay host independent).
std::string redact(std::string text, const std::string& root, const std::string& name = "$F");
// Compares text with tests/fixtures/gpu/golden/<name>; BERTH_UPDATE_GOLDEN=1 rewrites it.
void expect_golden(const std::string& text, const std::string& name);

}  // namespace berth::devices::test
