// A container's record as large as its config allows: the record carries the config's
// annotations, and a 10 MiB config.json (accepted by create) used to write a state.json
// that the 1 MiB read cap then refused, so the container could be neither started nor
// deleted. Written and read back whole.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "container/record.h"
#include "container/state_store.h"

namespace berth::container {
namespace {

TEST(BigRecord, TenMiBOfAnnotationsIsReadBack) {
  char tmpl[] = "/tmp/berth-bigrecord.XXXXXX";
  std::string top = ::mkdtemp(tmpl);
  auto store = StateStore::open(top + "/state");
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto dir = store->create("big");
  ASSERT_TRUE(dir.ok()) << dir.error().message();
  ContainerRecord r;
  r.id = "big";
  r.bundle = "/b";
  r.annotations["big"] = std::string(10u << 20, 'x');
  for (int i = 0; i < 1000; ++i) r.annotations["k" + std::to_string(i)] = std::string(100, 'v');
  ASSERT_TRUE(dir->write_record(r).ok());
  auto back = store->open_container("big")->read_record();
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->annotations.size(), 1001u);
  EXPECT_EQ(back->annotations["big"].size(), 10u << 20);
  std::filesystem::remove_all(top);
}

}  // namespace
}  // namespace berth::container
