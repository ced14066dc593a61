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

// Where the peer's end closing is an answer (a direct init's or an exec process's execve):
// its messages first, each once, then nothing, and the same reset before them as above.
TEST(Sync, ReceiveOrEofReadsWhatWasSentThenTheEnd) {
  auto pair = sync_pair();
  ASSERT_TRUE(pair);
  UniqueFd runtime = std::move(pair->first), init = std::move(pair->second);
  ASSERT_TRUE(send(init.get(), Msg::kReady, 7));
  ASSERT_TRUE(send(runtime.get(), Msg::kSettled));  // never read: a reset is pending
  init.reset();
  auto ready = receive_or_eof(runtime.get());
  ASSERT_TRUE(ready) << ready.error().message();
  ASSERT_TRUE(ready->has_value());
  EXPECT_EQ((*ready)->type, Msg::kReady);
  EXPECT_EQ((*ready)->value, 7);
  for (int i = 0; i < 2; ++i) {
    auto end = receive_or_eof(runtime.get());
    ASSERT_TRUE(end) << end.error().message();
    EXPECT_FALSE(end->has_value());
  }
}

}  // namespace
}  // namespace berth::container::process
