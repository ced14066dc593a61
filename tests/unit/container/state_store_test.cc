// The state store: id rules, runc's texts, atomic state.json under concurrent writers, the
// per-container lock.
#include "container/state_store.h"

#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "container/record.h"
#include "container/status.h"
#include "linux/proc.h"

namespace berth::container {
namespace {

class StateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-store.XXXXXX";
    root_ = ::mkdtemp(tmpl);
    root_ += "/state";  // created by open()
  }
  void TearDown() override { std::filesystem::remove_all(root_.substr(0, root_.rfind('/'))); }
  std::string root_;
};

TEST(StateStoreIds, RuncRules) {
  for (const char* ok : {"a", "abc-123", "x_y", "a.b", "a+b", "A9"}) EXPECT_TRUE(validate_id(ok).ok()) << ok;
  for (const char* bad : {"", ".", "..", "a/b", "a b", "a:b", "é", "../x"}) {
    auto st = validate_id(bad);
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.error().message(), std::string("invalid id format: ") + bad);
  }
}

TEST_F(StateStoreTest, CreateOpenRemoveWithRuncTexts) {
  auto store = StateStore::open(root_);
  ASSERT_TRUE(store.ok()) << store.error().message();
  struct stat st;
  ASSERT_EQ(::stat(root_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto dir = store->create("c1");
  ASSERT_TRUE(dir.ok());
  auto again = store->create("c1");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message(), "container with id exists: c1");
  EXPECT_EQ(again.error().kind(), ErrorKind::kExists);
  auto missing = store->open_container("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "container does not exist");
  ContainerRecord r;
  r.id = "c1";
  r.pid = 42;
  r.bundle = "/b";
  r.annotations["k"] = "v";
  r.cgroup_paths["memory"] = "/sys/fs/cgroup/memory/x";
  ASSERT_TRUE(dir->write_record(r).ok());
  auto back = store->open_container("c1")->read_record();
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, r);
  EXPECT_EQ(store->list_ids().value(), std::vector<std::string>{"c1"});
  ASSERT_TRUE(store->remove("c1").ok());
  EXPECT_TRUE(store->list_ids()->empty());
}

// create records its init before the init has set up (its rootfs not yet its root): such a
// container is "creating", whatever else holds, while its directory holds the setting-up
// mark, which create makes before the pid is recorded and removes at the init's kReady.
TEST_F(StateStoreTest, AnInitStillSettingUpIsCreating) {
  auto store = StateStore::open(root_);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto dir = store->create("c1");
  ASSERT_TRUE(dir.ok());
  ContainerRecord r;
  r.id = "c1";
  r.pid = ::getpid();  // alive, with no exec.fifo and no cgroup: running once set up
  auto stat = linux::read_proc_stat(r.pid);
  ASSERT_TRUE(stat.ok());
  r.pid_start_time = stat->start_time;
  ASSERT_TRUE(dir->mark_setting_up().ok());
  ASSERT_TRUE(dir->mark_setting_up().ok());  // once is enough, twice is no error
  ASSERT_TRUE(dir->write_record(r).ok());
  auto other = store->open_container("c1");  // what exec or state sees
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->setting_up());
  EXPECT_EQ(derive_status(*other, *other->read_record()), ContainerStatus::kCreating);
  ASSERT_TRUE(dir->clear_setting_up().ok());
  ASSERT_TRUE(dir->clear_setting_up().ok());  // already gone: no error
  EXPECT_FALSE(other->setting_up());
  EXPECT_EQ(derive_status(*other, *other->read_record()), ContainerStatus::kRunning);
  r.pid_start_time += 1;  // a dead init (or a pid reused) is stopped, set up or not
  ASSERT_TRUE(dir->mark_setting_up().ok());
  EXPECT_EQ(derive_status(*other, r), ContainerStatus::kStopped);
}

// start and delete read one kind of hooks from the config copy, and parse the copy only
// when its text names them: a copy that does not is not even parsed (an unparsable one
// yields no hooks, not an error), one that does is parsed whole.
TEST_F(StateStoreTest, HooksOfTheConfigCopyAreParsedOnlyWhenNamed) {
  auto store = StateStore::open(root_);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto dir = store->create("c1");
  ASSERT_TRUE(dir.ok());
  spec::Spec spec;
  spec.oci_version = "1.3.0";
  spec.hooks = spec::Hooks{};
  spec.hooks->poststart.push_back({"/bin/true", {"true", "started"}, std::nullopt, std::nullopt});
  ASSERT_TRUE(dir->write_config(spec).ok());
  auto poststart = dir->read_hooks("poststart", &spec::Hooks::poststart);
  ASSERT_TRUE(poststart.ok()) << poststart.error().message();
  ASSERT_EQ(poststart->size(), 1u);
  EXPECT_EQ((*poststart)[0].args, (std::vector<std::string>{"true", "started"}));
  auto poststop = dir->read_hooks("poststop", &spec::Hooks::poststop);
  ASSERT_TRUE(poststop.ok()) << poststop.error().message();
  EXPECT_TRUE(poststop->empty());
  std::ofstream(root_ + "/c1/config.json", std::ios::trunc) << "{ not json, and no hooks named";
  auto unparsed = dir->read_hooks("poststop", &spec::Hooks::poststop);
  ASSERT_TRUE(unparsed.ok()) << unparsed.error().message();
  EXPECT_TRUE(unparsed->empty());
  std::ofstream(root_ + "/c1/config.json", std::ios::trunc) << "{ \"hooks\": {\"poststop\": [ not json";
  EXPECT_FALSE(dir->read_hooks("poststop", &spec::Hooks::poststop).ok());
}

TEST_F(StateStoreTest, MissingRootListsNothing) {
  auto store = StateStore::open_existing(root_ + "/absent");
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE(store->list_ids()->empty());
  EXPECT_EQ(store->open_container("x").error().message(), "container does not exist");
}

// Writers in several processes replace state.json concurrently while a reader parses it:
// the reader only ever sees complete documents.
TEST_F(StateStoreTest, ConcurrentWritersNeverTearTheRecord) {
  auto store = StateStore::open(root_);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->create("c").ok());
  std::vector<pid_t> kids;
  for (int w = 0; w < 4; ++w) {
    pid_t p = ::fork();
    if (p == 0) {
      auto s = StateStore::open(root_);
      auto d = s->open_container("c");
      ContainerRecord r;
      r.id = "c";
      r.bundle = std::string(1000 + w * 500, 'a' + w);
      for (int i = 0; i < 300; ++i) {
        r.pid = i;
        if (!d->write_record(r).ok()) ::_exit(1);
      }
      ::_exit(0);
    }
    kids.push_back(p);
  }
  int torn = 0, reads = 0;
  auto d = store->open_container("c");
  // Read until every writer is done (and at least a while after the first record exists).
  auto writers_running = [&] {
    for (pid_t p : kids) {
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(p), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0)
        return true;
    }
    return false;
  };
  for (int i = 0; writers_running() || i < 200; ++i) {
    auto r = d->read_record();
    if (!r.ok()) {
      if (r.error().kind() != ErrorKind::kNotExist) ++torn;  // before the first write
      continue;
    }
    ++reads;
    char c = r->bundle.empty() ? 'a' : r->bundle[0];
    if (r->bundle.find_first_not_of(c) != std::string::npos) ++torn;
  }
  for (pid_t p : kids) {
    int st = 0;
    ::waitpid(p, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  EXPECT_EQ(torn, 0);
  EXPECT_GT(reads, 0);
  // No temp files left behind.
  for (const auto& e : std::filesystem::directory_iterator(root_ + "/c"))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(StateStoreTest, LockSerializesCommandsOnOneId) {
  auto store = StateStore::open(root_);
  ASSERT_TRUE(store.ok());
  auto d = store->create("c");
  ASSERT_TRUE(d->lock().ok());
  pid_t p = ::fork();
  if (p == 0) {
    auto other = StateStore::open(root_)->open_container("c");
    // A second opener cannot take the lock while we hold it.
    int r = ::flock(other->fd(), LOCK_EX | LOCK_NB);
    ::_exit(r == -1 && errno == EWOULDBLOCK ? 0 : 1);
  }
  int st = 0;
  ::waitpid(p, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST(OciState, RuncLayout) {
  OciState s;
  s.oci_version = "1.0.2";
  s.id = "x";
  s.pid = 7;
  s.status = "running";
  s.bundle = "/b";
  s.rootfs = "/b/rootfs";
  s.created = "2026-01-01T00:00:00Z";
  EXPECT_EQ(oci_state_json(s, true),
            "{\n  \"ociVersion\": \"1.0.2\",\n  \"id\": \"x\",\n  \"pid\": 7,\n  \"status\": \"running\",\n"
            "  \"bundle\": \"/b\",\n  \"rootfs\": \"/b/rootfs\",\n  \"created\": \"2026-01-01T00:00:00Z\",\n"
            "  \"owner\": \"\"\n}");
  s.annotations["a"] = "b";
  EXPECT_EQ(oci_state_json(s, false),
            "{\"ociVersion\":\"1.0.2\",\"id\":\"x\",\"pid\":7,\"status\":\"running\",\"bundle\":\"/b\","
            "\"rootfs\":\"/b/rootfs\",\"created\":\"2026-01-01T00:00:00Z\",\"annotations\":{\"a\":\"b\"},\"owner\":\"\"}");
}

}  // namespace
}  // namespace berth::container
