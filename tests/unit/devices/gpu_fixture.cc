// Fake NVIDIA host trees for unit tests (see gpu_fixture.h).
#include "unit/devices/gpu_fixture.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "util/file.h"

namespace berth::devices::test {
namespace {

std::vector<std::string>& cleanup() {
  static std::vector<std::string> dirs;
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] {
      std::error_code ec;
      for (const auto& d : cleanup()) std::filesystem::remove_all(d, ec);
    });
  }
  return dirs;
}

}  // namespace

std::string temp_dir(const std::string& prefix) {
  std::string tmpl = std::filesystem::temp_directory_path().string() + "/" + prefix + "-XXXXXX";
  char* d = ::mkdtemp(tmpl.data());
  if (!d) return "";
  cleanup().push_back(d);
  return d;
}

const std::string& gpu_fixture(const std::string& variant) {
  static std::map<std::string, std::string> made;
  auto it = made.find(variant);
  if (it != made.end()) return it->second;
  std::string dir = temp_dir("berth-gpu-" + variant);
  std::string args = variant == "8gpu" ? "--gpus 8" : "--gpus 2 --mig";
  std::string cmd = std::string(BERTH_SOURCE_DIR) + "/tests/fixtures/gpu/make-fixture.sh " + dir + " " + args + " >/dev/null";
  if (std::system(cmd.c_str()) != 0) dir.clear();
  return made[variant] = dir;
}

NvidiaConfig fixture_config(const std::string& root) {
  auto text = file::read(root + "/config.json");
  auto cfg = text ? parse_config(*text, "config.json") : Result<Config>(Error::generic("no config"));
  EXPECT_TRUE(cfg) << (cfg ? "" : cfg.error().message());
  return cfg ? cfg->nvidia : NvidiaConfig{};
}

std::string make_rootfs(const std::string& fixture, bool debian, bool glibc, const std::string& image) {
  std::string r = temp_dir("berth-rootfs");
  namespace fs = std::filesystem;
  fs::create_directories(r + "/etc");
  fs::create_directories(r + "/lib64");
  if (debian) std::ofstream(r + "/etc/debian_version") << "12.0\n";
  if (glibc) {
    std::ofstream(r + "/lib64/ld-linux-x86-64.so.2") << "";
    std::ofstream(r + "/etc/ld.so.conf") << "include /etc/ld.so.conf.d/*.conf\n";
  }
  if (!image.empty()) fs::copy(fixture + "/images/" + image, r, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  return r;
}

std::string redact(std::string text, const std::string& root, const std::string& name) {
  for (size_t at; !root.empty() && (at = text.find(root)) != std::string::npos;) text.replace(at, root.size(), name);
  return text;
}

void expect_golden(const std::string& text, const std::string& name) {
  std::string path = std::string(BERTH_SOURCE_DIR) + "/tests/fixtures/gpu/golden/" + name;
  const char* update = std::getenv("BERTH_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    return;
  }
  auto want = file::read(path);
  ASSERT_TRUE(want) << "missing golden file " << path << " (run with BERTH_UPDATE_GOLDEN=1)";
  EXPECT_EQ(text, *want) << "golden " << name << " differs (BERTH_UPDATE_GOLDEN=1 rewrites it)";
}

}  // namespace berth::devices::test
