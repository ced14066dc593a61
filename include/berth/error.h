// berth::Error — the one error type of libberth: errno, a kind that maps to runc's wording,
// and a context chain read outer → inner ("create: mount /proc: Operation not permitted").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace berth {

// Kinds that callers (and containerd/Docker, which match substrings) care about.
enum class ErrorKind {
  kGeneric,
  kNotExist,        // "container does not exist"
  kExists,          // "container with id exists: <id>"
  kNotRunning,      // "container not running"
  kNotStopped,      // "cannot delete container <id> that is not stopped"
  kInvalidSpec,     // config.json / process.json / update JSON is wrong; names the field
  kInvalidArgument, // bad command-line value
  kUsage,           // wrong flags/arguments: runc prints "Incorrect Usage."
  kNotImplemented,  // "<command>: not implemented yet"
  kUnsupported,     // a known field berth (or this host) cannot honour
};

class Error {
 public:
  Error() = default;
  Error(int err, ErrorKind kind, std::string message);

  // errno-carrying error: message is what was attempted, strerror(err) is appended.
  static Error sys(int err, std::string what);
  static Error invalid_spec(std::string message);
  static Error invalid_argument(std::string message);
  static Error usage(std::string message);
  static Error not_exist(std::string message = "container does not exist");
  static Error generic(std::string message);
  static Error unsupported(std::string message);

  // Prepends an outer context ("start container") to the chain.
  Error& context(std::string_view outer) &;
  Error&& context(std::string_view outer) &&;

  int err() const { return errno_; }
  ErrorKind kind() const { return kind_; }
  // The chain joined with ": ", then strerror(errno) when errno is set.
  std::string message() const;
  // The innermost message alone (without context or strerror).
  const std::string& root() const;
  // The chain joined with ": ", without strerror.
  std::string chain_text() const;

 private:
  int errno_ = 0;
  ErrorKind kind_ = ErrorKind::kGeneric;
  std::vector<std::string> chain_;  // outermost first
};

}  // namespace berth
