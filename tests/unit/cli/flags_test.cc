// The Go-style flag parser: every form runc accepts, and Go's error texts.
#include "cli/flags.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>

#include "cli/commands.h"

namespace berth::cli {
namespace {

const std::vector<FlagSpec> kSpecs = {
    {{"bundle", "b"}, FlagType::kString, "", "", false},
    {{"detach", "d"}, FlagType::kBool, "", "", false},
    {{"env", "e"}, FlagType::kStringSlice, "", "", false},
    {{"preserve-fds"}, FlagType::kUint, "", "", false},
    {{"interval"}, FlagType::kDuration, "", "", false},
    {{"pids-limit"}, FlagType::kInt, "", "", false},
};

ParsedFlags parse(std::vector<std::string> argv, bool reorder = true) {
  auto r = parse_flags(kSpecs, argv, reorder);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : ParsedFlags{};
}

std::string error_of(std::vector<std::string> argv) {
  auto r = parse_flags(kSpecs, argv, true);
  return r.ok() ? "" : r.error().message();
}

TEST(Flags, ValueForms) {
  EXPECT_EQ(parse({"--bundle", "/b", "id"}).get_string("bundle"), "/b");
  EXPECT_EQ(parse({"--bundle=/b", "id"}).get_string("bundle"), "/b");
  EXPECT_EQ(parse({"-bundle", "/b", "id"}).get_string("bundle"), "/b");
  EXPECT_EQ(parse({"-bundle=/b", "id"}).get_string("bundle"), "/b");
  EXPECT_EQ(parse({"-b", "/b", "id"}).get_string("bundle"), "/b");
  EXPECT_EQ(parse({"--b=/b", "id"}).get_string("bundle"), "/b");
  EXPECT_EQ(parse({"--bundle", "/b", "id"}).args, std::vector<std::string>{"id"});
}

TEST(Flags, Bools) {
  EXPECT_TRUE(parse({"-d", "id"}).get_bool("detach"));
  EXPECT_TRUE(parse({"--detach=true", "id"}).get_bool("detach"));
  EXPECT_FALSE(parse({"--detach=false", "id"}).get_bool("detach"));
  EXPECT_TRUE(parse({"--detach=1", "id"}).get_bool("detach"));
  EXPECT_FALSE(parse({"--detach=F", "id"}).get_bool("detach"));
  // A bool never takes the next word: it stays positional.
  auto p = parse({"--detach", "false"});
  EXPECT_TRUE(p.get_bool("detach"));
  EXPECT_EQ(p.args, std::vector<std::string>{"false"});
  EXPECT_FALSE(parse({"id"}).get_bool("detach"));
}

TEST(Flags, RepeatableAndLastWins) {
  auto p = parse({"-e", "A=1", "--env", "B=2", "--env=C=3", "id"});
  EXPECT_EQ(p.get_strings("env"), (std::vector<std::string>{"A=1", "B=2", "C=3"}));
  EXPECT_EQ(parse({"-b", "x", "-b", "y", "id"}).get_string("bundle"), "y");
}

TEST(Flags, DoubleDashEndsFlags) {
  auto p = parse({"-d", "--", "--bundle", "x"}, false);
  EXPECT_EQ(p.args, (std::vector<std::string>{"--bundle", "x"}));
  auto q = parse({"id", "--", "-d"});
  EXPECT_FALSE(q.get_bool("detach"));
  EXPECT_EQ(q.args, (std::vector<std::string>{"id", "--", "-d"}));
}

TEST(Flags, ReorderMovesFlagsAfterArguments) {
  auto p = parse({"id", "--bundle", "/b", "-d"});
  EXPECT_EQ(p.get_string("bundle"), "/b");
  EXPECT_TRUE(p.get_bool("detach"));
  EXPECT_EQ(p.args, std::vector<std::string>{"id"});
}

TEST(Flags, NoReorderKeepsCommandFlags) {
  auto p = parse({"id", "ls", "-la", "-d"}, false);
  EXPECT_FALSE(p.get_bool("detach"));
  EXPECT_EQ(p.args, (std::vector<std::string>{"id", "ls", "-la", "-d"}));
}

TEST(Flags, LoneDashIsPositional) { EXPECT_EQ(parse({"-"}).args, std::vector<std::string>{"-"}); }

TEST(Flags, GoErrorTexts) {
  EXPECT_EQ(error_of({"--bogus"}), "flag provided but not defined: -bogus");
  EXPECT_EQ(error_of({"-x"}), "flag provided but not defined: -x");
  EXPECT_EQ(error_of({"--bundle"}), "flag needs an argument: -bundle");
  EXPECT_EQ(error_of({"-d=maybe"}), "invalid boolean value \"maybe\" for -d: parse error");
  EXPECT_EQ(error_of({"--preserve-fds", "x"}), "invalid value \"x\" for flag -preserve-fds: parse error");
  EXPECT_EQ(error_of({"--preserve-fds", "-1"}), "invalid value \"-1\" for flag -preserve-fds: parse error");
  EXPECT_EQ(error_of({"--interval", "5x"}), "invalid value \"5x\" for flag -interval: parse error");
  EXPECT_EQ(error_of({"---bundle"}), "bad flag syntax: ---bundle");
}

TEST(Flags, Numbers) {
  EXPECT_EQ(parse({"--preserve-fds", "3", "id"}).get_uint("preserve-fds"), 3u);
  EXPECT_EQ(parse({"--pids-limit=-1", "id"}).get_int("pids-limit"), -1);
  EXPECT_EQ(parse({"--pids-limit", "0x10", "id"}).get_int("pids-limit"), 16);
}

TEST(Flags, GoDurations) {
  EXPECT_EQ(parse_go_duration("5s"), 5'000'000'000);
  EXPECT_EQ(parse_go_duration("1m30s"), 90'000'000'000);
  EXPECT_EQ(parse_go_duration("300ms"), 300'000'000);
  EXPECT_EQ(parse_go_duration("1.5h"), 5'400'000'000'000);
  EXPECT_EQ(parse_go_duration("2us"), 2'000);
  EXPECT_EQ(parse_go_duration("0"), 0);
  EXPECT_EQ(parse_go_duration("-1s"), -1'000'000'000);
  EXPECT_FALSE(parse_go_duration("5"));
  EXPECT_FALSE(parse_go_duration("s"));
  EXPECT_FALSE(parse_go_duration(""));
  EXPECT_FALSE(parse_go_duration("5d"));
}

TEST(Flags, RamBytes) {
  EXPECT_EQ(parse_ram_bytes("1024"), 1024);
  EXPECT_EQ(parse_ram_bytes("512k"), 512 * 1024);
  EXPECT_EQ(parse_ram_bytes("64m"), 64 * 1024 * 1024);
  EXPECT_EQ(parse_ram_bytes("1g"), 1024LL * 1024 * 1024);
  EXPECT_EQ(parse_ram_bytes("1GiB"), 1024LL * 1024 * 1024);
  EXPECT_EQ(parse_ram_bytes("2MB"), 2 * 1024 * 1024);
  EXPECT_FALSE(parse_ram_bytes("abc"));
  EXPECT_FALSE(parse_ram_bytes("1x"));
  // Beyond int64 (found by fuzz_cli): refused, not converted.
  EXPECT_FALSE(parse_ram_bytes("3333333333333333334141"));
  EXPECT_FALSE(parse_ram_bytes("9000000p"));
  EXPECT_EQ(parse_ram_bytes("8000p"), 8000LL << 50);
}

// Every runc flag of every command is accepted, by every name it has.
// Every unit suffix in every spelling, over numbers with and without a fraction, against
// the multiplier as libm's pow computed it before (the parser has no libm call now).
TEST(Flags, RamBytesMatchesPowForEveryUnit) {
  const char* units[] = {"k", "m", "g", "t", "p"};
  const char* tails[] = {"", "b", "i", "ib"};
  const char* numbers[] = {"0", "1", "7", "1.5", "0.001", "1023.999", "3.14159", "8000", "8191.99", "9000000"};
  size_t checked = 0;
  for (size_t idx = 0; idx < 5; ++idx)
    for (const char* tail : tails)
      for (const char* n : numbers)
        for (bool upper : {false, true}) {
          std::string text = std::string(n) + units[idx] + tail;
          if (upper) for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
          double bytes = std::strtod(n, nullptr) * std::pow(1024.0, static_cast<double>(idx + 1));
          auto got = parse_ram_bytes(text);
          if (!(bytes < 9.2e18)) EXPECT_FALSE(got) << text;
          else EXPECT_EQ(got, std::optional<int64_t>(static_cast<int64_t>(bytes))) << text;
          ++checked;
        }
  EXPECT_EQ(checked, 400u);
}

TEST(Flags, EveryRuncFlagOfEveryCommand) {
  struct Case {
    const char* command;
    std::vector<const char*> flags;
  };
  const std::vector<Case> cases = {
      {"create", {"bundle", "b", "console-socket", "pid-file", "no-pivot", "no-new-keyring", "preserve-fds", "pidfd-socket"}},
      {"run", {"bundle", "b", "console-socket", "detach", "d", "keep", "pid-file", "no-subreaper", "no-pivot",
               "no-new-keyring", "preserve-fds", "pidfd-socket"}},
      {"delete", {"force", "f"}},
      {"events", {"interval", "stats"}},
      {"exec", {"console-socket", "cwd", "env", "e", "tty", "t", "user", "u", "additional-gids", "g", "process", "p",
                "detach", "d", "pid-file", "process-label", "apparmor", "no-new-privs", "cap", "c", "preserve-fds",
                "cgroup", "ignore-paused", "pidfd-socket"}},
      {"kill", {"all", "a"}},
      {"list", {"format", "f", "quiet", "q"}},
      {"ps", {"format", "f"}},
      {"spec", {"bundle", "b", "rootless"}},
      {"update", {"resources", "r", "blkio-weight", "cpu-period", "cpu-quota", "cpu-share", "cpu-rt-period",
                  "cpu-rt-runtime", "cpuset-cpus", "cpuset-mems", "kernel-memory", "kernel-memory-tcp", "memory",
                  "memory-reservation", "memory-swap", "pids-limit", "l3-cache-schema", "mem-bw-schema"}},
      {"checkpoint", {"image-path", "work-path", "parent-path", "leave-running", "tcp-established", "ext-unix-sk",
                      "shell-job", "lazy-pages", "status-fd", "page-server", "file-locks", "pre-dump",
                      "manage-cgroups-mode", "empty-ns", "auto-dedup"}},
      {"restore", {"console-socket", "image-path", "work-path", "tcp-established", "ext-unix-sk", "shell-job",
                   "file-locks", "manage-cgroups-mode", "bundle", "b", "detach", "d", "pid-file", "no-subreaper",
                   "no-pivot", "empty-ns", "auto-dedup", "lazy-pages", "lsm-profile", "lsm-mount-context"}},
  };
  for (const auto& c : cases) {
    const CommandSpec* cmd = find_command(c.command);
    ASSERT_NE(cmd, nullptr) << c.command;
    for (const char* f : c.flags) {
      bool found = false;
      for (const auto& s : cmd->flags)
        for (const auto& n : s.names) found = found || n == f;
      EXPECT_TRUE(found) << c.command << " --" << f;
    }
  }
  for (const char* name : {"pause", "resume", "start", "state", "features"}) EXPECT_NE(find_command(name), nullptr);
}

TEST(Flags, GlobalFlags) {
  auto r = parse_flags(global_flags(), {"--root", "/r", "--log=/l", "--log-format", "json", "--debug",
                                        "--systemd-cgroup", "--rootless", "true", "--criu", "c", "state", "x"},
                       false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->get_string("root"), "/r");
  EXPECT_EQ(r->get_string("log"), "/l");
  EXPECT_EQ(r->get_string("log-format"), "json");
  EXPECT_TRUE(r->get_bool("debug"));
  EXPECT_TRUE(r->get_bool("systemd-cgroup"));
  EXPECT_EQ(r->get_string("rootless"), "true");
  EXPECT_EQ(r->args, (std::vector<std::string>{"state", "x"}));
}

// Each command is built from the table only when a call names it: the table's name and the
// built command's must agree, or find_command would answer with another command.
TEST(Flags, EveryCommandFoundByItsOwnName) {
  std::set<std::string> seen;
  for (const auto& c : commands()) {
    EXPECT_TRUE(seen.insert(c.name).second) << c.name;
    const CommandSpec* found = find_command(c.name);
    ASSERT_NE(found, nullptr) << c.name;
    EXPECT_EQ(found->name, c.name);
    EXPECT_EQ(found, find_command(c.name)) << c.name << " built twice";
  }
  EXPECT_EQ(seen.size(), 17u);
  EXPECT_EQ(find_command("runn"), nullptr);
  EXPECT_EQ(find_command(""), nullptr);
}

TEST(Flags, HelpListsEveryFlag) {
  for (const auto& c : commands()) {
    std::string help = command_help(c);
    for (const auto& f : c.flags) {
      if (f.hidden) continue;
      EXPECT_NE(help.find("--" + f.names[0]), std::string::npos) << c.name << " " << f.names[0];
    }
  }
}

}  // namespace
}  // namespace berth::cli
