// libFuzzer target: command-line parsing (NUL-separated words) against every command's
// flag table, plus Go durations and RAM sizes.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/flags.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words;
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      words.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  words.push_back(cur);
  (void)berth::cli::parse_flags(berth::cli::global_flags(), words, false);
  for (const auto& c : berth::cli::commands()) (void)berth::cli::parse_flags(c.flags, words, c.reorder);
  (void)berth::cli::parse_go_duration(words[0]);
  (void)berth::cli::parse_ram_bytes(words[0]);
  return 0;
}
