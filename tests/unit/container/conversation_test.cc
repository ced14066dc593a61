// The parent's side of the set-up conversation that create and exec share
// (src/container/conversation.cc): the common messages, and the errors for the rest.
#include "container/conversation.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

namespace berth::container {
namespace {

using process::Message;
using process::Msg;

Message message(Msg type) {
  Message m;
  m.type = type;
  return m;
}

TEST(Conversation, KeepsThePtyMasterWithoutAConsoleSocket) {
  UniqueFd kept;
  Peer peer;
  peer.name = "exec process";
  peer.console = &kept;
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ::close(p[1]);
  Message m = message(Msg::kConsole);
  m.fd.reset(p[0]);
  ASSERT_TRUE(answer_common(peer, -1, 1, m));
  EXPECT_EQ(kept.get(), p[0]);
  EXPECT_FALSE(m.fd);
}

TEST(Conversation, TheChildsErrorEndsIt) {
  Peer peer;
  peer.name = "container init";
  Message m = message(Msg::kError);
  m.err = EACCES;
  m.kind = 0;
  m.text = "prepare rootfs: mount /proc";
  auto st = answer_common(peer, -1, 1, m);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "prepare rootfs: mount /proc: permission denied");
}

TEST(Conversation, AnythingElseIsAProtocolErrorNamingThePeer) {
  Peer peer;
  peer.name = "exec process";
  Message ready = message(Msg::kReady);
  auto st = answer_common(peer, -1, 1, ready);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "sync: unexpected message from the exec process");
  // A listener from a process that has no linux.seccomp is not passed on.
  Message listener = message(Msg::kSeccompFd);
  st = answer_common(peer, -1, 1, listener);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "sync: unexpected seccomp listener from the exec process");
}

TEST(Conversation, PublishesNothingWhenNotAsked) { EXPECT_TRUE(publish_process("", "", 1, -1)); }

}  // namespace
}  // namespace berth::container
