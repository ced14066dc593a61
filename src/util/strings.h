// Small string helpers shared by every module: splitting, trimming, integer parsing with
// range checks, Go-style quoting (runc's log lines quote as Go's %q does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace berth::str {

std::vector<std::string> split(std::string_view s, char sep);
// Splits on sep, dropping empty pieces.
std::vector<std::string> split_nonempty(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string to_lower(std::string_view s);

// Whole-string integer parsing in base 10 (base 0 allows 0x/0 prefixes); nullopt on any
// junk, sign error or overflow.
std::optional<int64_t> parse_i64(std::string_view s, int base = 10);
std::optional<uint64_t> parse_u64(std::string_view s, int base = 10);

// Go's strconv.Quote: "..." with \" \\ \n \t and \x/\u escapes for the unprintable.
std::string go_quote(std::string_view s);

}  // namespace berth::str
