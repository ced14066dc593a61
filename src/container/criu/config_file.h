// CRIU's own configuration file (the org.criu.config annotation, or runc's
// /etc/criu/runc.conf): CRIU runs as root and that file sets any of its options
// (log-file truncates a host file, action-script and lib run code), so it is used only
// where the container cannot write it, checked on an fd that CRIU then reads through
// /proc/self/fd/N (issue 31 §3). Its content never reaches an error.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/result.h"
#include "berth/spec.h"
#include "util/unique_fd.h"

namespace berth::container::criu {

struct Request;

// Where the container can write: its bundle, its rootfs and every bind mount's source.
struct ContainerPaths {
  std::string bundle;   // absolute
  std::string rootfs;   // absolute
  std::vector<std::string> bind_sources;  // absolute
};
ContainerPaths container_paths(const spec::Spec& spec, const std::string& bundle, const std::string& rootfs);

struct ConfigFile {
  UniqueFd fd;          // O_RDONLY, checked; kept open in CRIU's worker
  std::string named;    // the path as the annotation (or runc's default) names it
  std::string text;     // its content, for the syntax check and to keep it out of errors
};

// The file `named` (""), checked: a regular file, never a link, owned by root or the caller,
// writable by nobody else, every directory above it likewise (util/trusted_path.h), none of
// them the bundle, the rootfs or a bind source (device and inode, and the resolved path),
// and every line a CRIU option ("log-file /x"), so that CRIU never quotes another kind of
// file back. nullopt: no file (none named, or it does not exist: CRIU ignores it then).
// `what` names it in a refusal: "org.criu.config".
Result<std::optional<ConfigFile>> open_config_file(const std::string& named, const std::string& what,
                                                   const ContainerPaths& c);

// open_config_file of the file the spec names (request.h, config_file).
Result<std::optional<ConfigFile>> check_config_file(const spec::Spec& spec, const ContainerPaths& c);
// The request names the checked fd (/proc/self/fd/N, N kept open in the worker), or no file.
void use_config_file(Request& r, const std::optional<ConfigFile>& f);

// The syntax check alone: 0 when every line (comments and blank lines aside) starts with an
// option's name ("tcp-established", "--log-file=x"), else the 1-based number of the first
// line that does not.
size_t first_line_not_an_option(std::string_view text);

// CRIU's error text with every value of the config file in it replaced: what CRIU quotes
// from the file is named by its option key only.
std::string scrub_config_values(const std::string& criu_text, std::string_view config_text, const std::string& named);

}  // namespace berth::container::criu
