// Logging as runc does it: logrus-shaped lines to stderr or to --log FILE, in text
// (`time="..." level=error msg="..."`) or json (`{"level":"error","msg":"...","time":"..."}`).
// containerd's shim reads the last json line's msg as the error of a failed call.
#pragma once

#include <string>
#include <string_view>

namespace berth::log {

enum class Format { kText, kJson };
enum class Level { kDebug, kInfo, kWarning, kError };

// fd is owned from now on (closed at exit); -1 means stderr.
void configure(int fd, Format format, bool debug);
bool debug_enabled();
bool to_stderr();  // true when the log goes to stderr (no --log file)
int fd();          // where lines go

void write(Level level, std::string_view msg);
inline void error(std::string_view msg) { write(Level::kError, msg); }
inline void warn(std::string_view msg) { write(Level::kWarning, msg); }
inline void info(std::string_view msg) { write(Level::kInfo, msg); }
void debug(std::string_view msg);  // no-op (and cheap) unless --debug

// Formatting, exposed for tests.
std::string format_line(Format format, Level level, std::string_view msg, std::string_view time,
                        bool tty);
std::string rfc3339_now();

}  // namespace berth::log
