// berth::Error: construction, context chaining and the one-line message format.
#include "berth/error.h"

#include <cstring>

namespace berth {

Error::Error(int err, ErrorKind kind, std::string message) : errno_(err), kind_(kind) {
  chain_.push_back(std::move(message));
}

Error Error::sys(int err, std::string what) { return Error(err, ErrorKind::kGeneric, std::move(what)); }
Error Error::invalid_spec(std::string m) { return Error(0, ErrorKind::kInvalidSpec, std::move(m)); }
Error Error::invalid_argument(std::string m) { return Error(0, ErrorKind::kInvalidArgument, std::move(m)); }
Error Error::usage(std::string m) { return Error(0, ErrorKind::kUsage, std::move(m)); }
Error Error::not_exist(std::string m) { return Error(0, ErrorKind::kNotExist, std::move(m)); }
Error Error::generic(std::string m) { return Error(0, ErrorKind::kGeneric, std::move(m)); }
Error Error::unsupported(std::string m) { return Error(0, ErrorKind::kUnsupported, std::move(m)); }

Error& Error::context(std::string_view outer) & {
  chain_.insert(chain_.begin(), std::string(outer));
  return *this;
}

Error&& Error::context(std::string_view outer) && {
  chain_.insert(chain_.begin(), std::string(outer));
  return std::move(*this);
}

std::string Error::chain_text() const {
  std::string out;
  for (const auto& part : chain_) {
    if (part.empty()) continue;
    if (!out.empty()) out += ": ";
    out += part;
  }
  return out;
}

std::string Error::message() const {
  std::string out = chain_text();
  if (errno_ != 0) {
    if (!out.empty()) out += ": ";
    // strerrordesc_np: the plain description, independent of locale; lower-cased as Go
    // prints errnos, because Docker and containerd match runc's texts
    // ("no such file or directory", "permission denied") case-sensitively.
    const char* desc = strerrordesc_np(errno_);
    std::string d = desc ? desc : ("errno " + std::to_string(errno_));
    if (!d.empty() && d[0] >= 'A' && d[0] <= 'Z') d[0] = static_cast<char>(d[0] - 'A' + 'a');
    out += d;
  }
  return out;
}

const std::string& Error::root() const {
  static const std::string kEmpty;
  return chain_.empty() ? kEmpty : chain_.back();
}

}  // namespace berth
