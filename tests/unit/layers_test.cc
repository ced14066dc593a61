// The folder layers of docs/architecture.md ("Layers"), held against every #include of src/
// and include/berth: util → spec → linux, cgroups, seccomp, devices (peers that know nothing
// of each other) → container → cli; no folder includes one above it, cli/ reaches the
// library through container/ and the public headers only, devices/ never includes
// its modules (nvidia, rdma, cdi), the modules never each other, linux/ never linux/rootfs/,
// and container/criu/ nothing of container/ above it. container/process/ has its own test
// (container/process_layers_test.cc).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "util/file.h"

namespace berth {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> includes_of(const fs::path& file) {
  auto text = file::read(file.string());
  EXPECT_TRUE(text) << file;
  std::vector<std::string> out;
  if (!text) return out;
  static const std::regex inc(R"re(^\s*#\s*include\s*"([^"]+)")re", std::regex::multiline);
  for (std::sregex_iterator it(text->begin(), text->end(), inc), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

// The public headers sit in the layer that implements them.
const std::map<std::string, std::string> kPublicHeaderLayer = {
    {"berth/error.h", "util"},          {"berth/result.h", "util"},
    {"berth/spec.h", "spec"},           {"berth/state.h", "container"},
    {"berth/container.h", "container"}, {"berth/container_ops.h", "container"},
    {"berth/checkpoint.h", "container"}, {"berth/runtime.h", "container"},
};

int rank(const std::string& layer) {
  static const std::map<std::string, int> ranks = {
      {"util", 0},    {"spec", 1},   {"linux", 2},     {"cgroups", 2},
      {"seccomp", 2}, {"devices", 2}, {"container", 3}, {"cli", 4},
  };
  auto it = ranks.find(layer);
  return it == ranks.end() ? -1 : it->second;
}

// "cgroups/v2/memory.h" → "cgroups"; a public header → its layer; "" if unknown.
std::string layer_of_include(const std::string& inc) {
  if (inc.rfind("berth/", 0) == 0) {
    auto it = kPublicHeaderLayer.find(inc);
    return it == kPublicHeaderLayer.end() ? "" : it->second;
  }
  return inc.substr(0, inc.find('/'));
}

struct Source {
  fs::path path;
  std::string rel;    // "devices/nvidia/plan.cc", "berth/spec.h" for a public header
  std::string layer;  // its top folder, or the public header's layer
};

std::vector<Source> all_sources() {
  std::vector<Source> out;
  std::string src = std::string(BERTH_SOURCE_DIR) + "/src";
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
    std::string rel = fs::relative(e.path(), src).string();
    out.push_back({e.path(), rel, rel.substr(0, rel.find('/'))});
  }
  std::string inc = std::string(BERTH_SOURCE_DIR) + "/include";
  for (const auto& e : fs::directory_iterator(inc + "/berth")) {
    std::string rel = fs::relative(e.path(), inc).string();
    auto it = kPublicHeaderLayer.find(rel);
    out.push_back({e.path(), rel, it == kPublicHeaderLayer.end() ? "" : it->second});
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
// Directly in `folder`, not in a subfolder of it.
bool directly_in(const std::string& rel, const std::string& folder) {
  return starts_with(rel, folder + "/") && rel.find('/', folder.size() + 1) == std::string::npos;
}

TEST(Layers, EveryFolderAndPublicHeaderHasALayer) {
  auto sources = all_sources();
  EXPECT_GT(sources.size(), 250u);
  for (const auto& s : sources) {
    EXPECT_GE(rank(s.layer), 0) << s.rel << ": not in a layer of docs/architecture.md (add it to the test and the doc)";
    for (const auto& inc : includes_of(s.path))
      EXPECT_GE(rank(layer_of_include(inc)), 0) << s.rel << " includes " << inc << ", which is in no layer";
  }
}

TEST(Layers, IncludesPointDownOrStayInTheirFolder) {
  for (const auto& s : all_sources()) {
    for (const auto& inc : includes_of(s.path)) {
      std::string to = layer_of_include(inc);
      if (to == s.layer || rank(to) < 0 || rank(s.layer) < 0) continue;
      EXPECT_LT(rank(to), rank(s.layer)) << s.rel << " includes " << inc << " (" << s.layer << " may not include " << to
                                         << ": peers know nothing of each other, and nothing includes upward)";
    }
  }
}

TEST(Layers, DevicesNeverIncludeItsModulesNorModulesEachOther) {
  const std::vector<std::string> modules = {"devices/nvidia/", "devices/rdma/", "devices/cdi/"};
  int seen = 0;
  for (const auto& s : all_sources()) {
    if (s.layer != "devices") continue;
    ++seen;
    for (const auto& inc : includes_of(s.path))
      for (const auto& m : modules) {
        if (!starts_with(inc, m)) continue;
        EXPECT_TRUE(starts_with(s.rel, m)) << s.rel << " includes " << inc;
      }
  }
  EXPECT_GT(seen, 20);
}

TEST(Layers, LinuxNeverIncludesRootfsAndCriuNothingOfContainerAboveIt) {
  int linux_files = 0, criu_files = 0;
  for (const auto& s : all_sources()) {
    bool linux_own = directly_in(s.rel, "linux");
    bool criu = starts_with(s.rel, "container/criu/");
    linux_files += linux_own;
    criu_files += criu;
    for (const auto& inc : includes_of(s.path)) {
      if (linux_own) {
        EXPECT_FALSE(starts_with(inc, "linux/rootfs/")) << s.rel << " includes " << inc;
      }
      if (criu && starts_with(inc, "container/")) {
        EXPECT_TRUE(starts_with(inc, "container/criu/")) << s.rel << " includes " << inc;
      }
    }
  }
  EXPECT_GT(linux_files, 20);
  EXPECT_GE(criu_files, 4);
}

// cli/ reaches libberth through container/ and the public headers (util, as every folder):
// not the kernel-facing folders, nor spec/ below them.
TEST(Layers, CliReachesTheLibraryThroughContainerAndThePublicHeaders) {
  int cli_files = 0;
  for (const auto& s : all_sources()) {
    if (s.layer != "cli") continue;
    ++cli_files;
    for (const auto& inc : includes_of(s.path)) {
      bool ok = starts_with(inc, "cli/") || starts_with(inc, "container/") || starts_with(inc, "util/") ||
                starts_with(inc, "berth/");
      EXPECT_TRUE(ok) << s.rel << " includes " << inc;
    }
  }
  EXPECT_GT(cli_files, 10);
}

// The check itself: a made-up upward include is caught.
TEST(Layers, TheRankCatchesAnUpwardInclude) {
  EXPECT_LT(rank(layer_of_include("cgroups/detect.h")), rank("container"));
  EXPECT_EQ(rank(layer_of_include("linux/mountinfo.h")), rank("cgroups"));  // peers: refused above
  EXPECT_GT(rank(layer_of_include("berth/container.h")), rank("linux"));
  EXPECT_EQ(rank(layer_of_include("berth/unknown.h")), -1);
}

}  // namespace
}  // namespace berth
