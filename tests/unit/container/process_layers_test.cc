// The process engine's include shape (src/container/process/): the init, an exec tenant and
// their payload are leaves over one floor (steps, sync, spawn, init_config): no leaf
// includes another's header but payload.h, the tail both stages end in, and nothing there
// includes from src/container/ above it.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>

#include "util/file.h"

namespace berth::container::process {
namespace {

std::vector<std::string> includes_of(const std::filesystem::path& file) {
  auto text = file::read(file.string());
  EXPECT_TRUE(text) << file;
  std::vector<std::string> out;
  static const std::regex inc(R"re(#include "([^"]+)")re");
  for (std::sregex_iterator it(text->begin(), text->end(), inc), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

TEST(ProcessLayers, NothingInProcessIncludesFromContainerAboveIt) {
  std::string dir = std::string(BERTH_SOURCE_DIR) + "/src/container/process";
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
    for (const auto& inc : includes_of(e.path())) {
      if (inc.rfind("container/", 0) == 0) {
        EXPECT_EQ(inc.rfind("container/process/", 0), 0u) << e.path() << ": " << inc;
      }
    }
  }
  EXPECT_GE(files, 10);
}

TEST(ProcessLayers, InitTenantAndPayloadAreLeaves) {
  std::string dir = std::string(BERTH_SOURCE_DIR) + "/src/container/process/";
  const std::map<std::string, std::vector<std::string>> forbidden = {
      {"init", {"container/process/tenant.h"}},
      {"tenant", {"container/process/init.h"}},
      {"payload", {"container/process/init.h", "container/process/tenant.h"}},
      {"steps", {"container/process/init.h", "container/process/tenant.h", "container/process/payload.h"}},
  };
  for (const auto& [leaf, bad] : forbidden)
    for (const char* ext : {".cc", ".h"})
      for (const auto& inc : includes_of(dir + leaf + ext))
        for (const auto& b : bad) EXPECT_NE(inc, b) << leaf << ext;
}

}  // namespace
}  // namespace berth::container::process
