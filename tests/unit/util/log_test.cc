// Log lines as runc (logrus) writes them: containerd reads the last json line's msg.
#include "util/log.h"

#include <gtest/gtest.h>

#include "berth/error.h"
#include "util/strings.h"

namespace berth {
namespace {

TEST(Log, JsonLine) {
  EXPECT_EQ(log::format_line(log::Format::kJson, log::Level::kError, "container does not exist", "T", false),
            "{\"level\":\"error\",\"msg\":\"container does not exist\",\"time\":\"T\"}\n");
  EXPECT_EQ(log::format_line(log::Format::kJson, log::Level::kWarning, "a \"q\" <x>\n", "T", false),
            "{\"level\":\"warning\",\"msg\":\"a \\\"q\\\" \\u003cx\\u003e\\n\",\"time\":\"T\"}\n");
}

TEST(Log, TextLineQuotesAsLogrus) {
  EXPECT_EQ(log::format_line(log::Format::kText, log::Level::kError, "container does not exist", "T", false),
            "time=\"T\" level=error msg=\"container does not exist\"\n");
  EXPECT_EQ(log::format_line(log::Format::kText, log::Level::kDebug, "plain", "T", false),
            "time=\"T\" level=debug msg=plain\n");
  EXPECT_EQ(log::format_line(log::Format::kText, log::Level::kError, "exec: \"x\": not found", "T", false),
            "time=\"T\" level=error msg=\"exec: \\\"x\\\": not found\"\n");
}

TEST(Log, Rfc3339) {
  std::string t = log::rfc3339_now();
  ASSERT_GE(t.size(), 20u);
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
}

TEST(GoQuote, Escapes) {
  EXPECT_EQ(str::go_quote("a\"b\\c\n\t\x01"), "\"a\\\"b\\\\c\\n\\t\\x01\"");
  EXPECT_EQ(str::go_quote("\xc3\xa9"), "\"\xc3\xa9\"");
  EXPECT_EQ(str::go_quote("\xff"), "\"\\xff\"");
}

TEST(ErrorChain, OuterToInnerWithGoStyleErrno) {
  Error e = Error::sys(ENOENT, "open /x");
  e.context("create container");
  EXPECT_EQ(e.message(), "create container: open /x: no such file or directory");
  EXPECT_EQ(e.chain_text(), "create container: open /x");
  EXPECT_EQ(Error::sys(EACCES, "exec").message(), "exec: permission denied");
}

}  // namespace
}  // namespace berth
