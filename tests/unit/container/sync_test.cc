// The parent↔init channel (container/process/sync.h) where the init goes away early.
#include <gtest/gtest.h>

#include "container/process/sync.h"

namespace berth::container::process {
namespace {

// An init that fails right after `create`'s go sends its error and exits with the parent's
// kSettled unread in its queue. The kernel then reports ECONNRESET to the parent once,
// ahead of the error still queued: the parent must read the init's error, not report the
// reset.
TEST(Sync, AnErrorSentBeforeTheInitLeftSurvivesOurUnreadMessage) {
  auto pair = sync_pair();
  ASSERT_TRUE(pair);
  UniqueFd runtime = std::move(pair->first), init = std::move(pair->second);
  ASSERT_TRUE(send_error(init.get(), Error::generic("mount /mnt: invalid argument")));
  ASSERT_TRUE(send(runtime.get(), Msg::kSettled));  // never read
  init.reset();
  auto m = receive(runtime.get());
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->type, Msg::kError);
  EXPECT_EQ(to_error(*m).message(), "mount /mnt: invalid argument");
  auto end = receive(runtime.get());
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().message(), "container init exited during setup");
}

}  // namespace
}  // namespace berth::container::process
