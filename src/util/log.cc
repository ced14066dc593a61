// Logging (see log.h). The format follows logrus, which runc uses, byte for byte where
// containerd or Docker parse it.
#include "util/log.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>

#include "util/file.h"
#include "util/strings.h"

namespace berth::log {
namespace {

struct State {
  int fd = STDERR_FILENO;
  Format format = Format::kText;
  bool debug = false;
  bool tty = false;
  bool stderr_tty = false;  // looked at once per process: configure() reuses it
  struct timespec start {};
};

State& state() {
  static State s = [] {
    State init;
    init.stderr_tty = ::isatty(STDERR_FILENO) == 1;
    init.tty = init.stderr_tty;
    clock_gettime(CLOCK_MONOTONIC, &init.start);
    return init;
  }();
  return s;
}

const char* level_name(Level l) {
  switch (l) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarning: return "warning";
    case Level::kError: return "error";
  }
  return "error";
}

// logrus quotes a text value unless it is made only of these characters.
bool needs_quoting(std::string_view s) {
  if (s.empty()) return true;
  for (char c : s) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '.' || c == '_' || c == '/' || c == '@' || c == '^' || c == '+';
    if (!safe) return true;
  }
  return false;
}

std::string json_escape(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else if (c == '<' || c == '>' || c == '&') {
          // Go's encoding/json escapes these for HTML safety; match it.
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

}  // namespace

void configure(int fd, Format format, bool debug) {
  State& s = state();
  s.fd = fd < 0 ? STDERR_FILENO : fd;
  s.format = format;
  s.debug = debug;
  s.tty = fd < 0 && s.stderr_tty;
}

bool debug_enabled() { return state().debug; }
bool to_stderr() { return state().fd == STDERR_FILENO; }
int fd() { return state().fd; }

std::string rfc3339_now() {
  time_t now = ::time(nullptr);
  struct tm tm {};
  ::localtime_r(&now, &tm);
  char buf[64];
  size_t n = ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  long off = tm.tm_gmtoff;
  if (off == 0) {
    out += 'Z';
  } else {
    char z[40];
    std::snprintf(z, sizeof z, "%c%02ld:%02ld", off < 0 ? '-' : '+', (off < 0 ? -off : off) / 3600,
                  ((off < 0 ? -off : off) % 3600) / 60);
    out += z;
  }
  return out;
}

std::string format_line(Format format, Level level, std::string_view msg, std::string_view time,
                        bool tty) {
  if (format == Format::kJson) {
    return "{\"level\":\"" + std::string(level_name(level)) + "\",\"msg\":\"" + json_escape(msg) +
           "\",\"time\":\"" + std::string(time) + "\"}\n";
  }
  if (tty) {
    // logrus' colourless terminal form: ERRO[0000] message
    static const char* kShort[] = {"DEBU", "INFO", "WARN", "ERRO"};
    struct timespec now {};
    clock_gettime(CLOCK_MONOTONIC, &now);
    long secs = now.tv_sec - state().start.tv_sec;
    char head[32];
    std::snprintf(head, sizeof head, "%s[%04ld] ", kShort[static_cast<int>(level)], secs);
    return std::string(head) + std::string(msg) + "\n";
  }
  std::string m = needs_quoting(msg) ? str::go_quote(msg) : std::string(msg);
  return "time=\"" + std::string(time) + "\" level=" + level_name(level) + " msg=" + m + "\n";
}

void write(Level level, std::string_view msg) {
  State& s = state();
  if (level == Level::kDebug && !s.debug) return;
  std::string line = format_line(s.format, level, msg, rfc3339_now(), s.tty && s.format == Format::kText);
  // One write(2) per line, O_APPEND on the file: concurrent berth calls never interleave.
  (void)file::write_all(s.fd, line);
}

void debug(std::string_view msg) {
  if (!state().debug) return;
  write(Level::kDebug, msg);
}

}  // namespace berth::log
