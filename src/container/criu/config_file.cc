// org.criu.config (and runc's /etc/criu/runc.conf): the checks before CRIU reads the file,
// and keeping its content out of errors (see config_file.h, docs/checkpoint.md).
#include "container/criu/config_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "container/criu/request.h"
#include "util/strings.h"
#include "util/trusted_path.h"

namespace berth::container::criu {
namespace {

// CRIU's config files are a few lines; anything larger is not one.
constexpr size_t kMaxConfigBytes = 1u << 20;

bool is_bind(const spec::Mount& m) {
  if (m.type == "bind") return true;
  for (const auto& o : m.options)
    if (o == "bind" || o == "rbind") return true;
  return false;
}

// An option's name as CRIU reads a line's first word ("--" is added when missing):
// lower-case letters, digits and dashes, "=value" aside.
bool option_name(std::string_view word, std::string_view* key, std::string_view* value) {
  if (word.substr(0, 2) == "--") word.remove_prefix(2);
  size_t eq = word.find('=');
  std::string_view name = word.substr(0, eq);
  if (name.empty() || name.size() > 64 || name[0] == '-') return false;
  for (char ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-')) return false;
  if (key) *key = name;
  if (value) *value = eq == std::string_view::npos ? std::string_view() : word.substr(eq + 1);
  return true;
}

// One line as CRIU splits it: words between blanks, up to a word starting with '#'.
bool blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f'; }

std::vector<std::string_view> line_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !blank(line[i])) ++i;
    if (start == i) break;
    std::string_view w = line.substr(start, i - start);
    if (w[0] == '#') break;
    words.push_back(w);
  }
  return words;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

Error refused(const std::string& what, const std::string& named, const std::string& problem) {
  return Error::generic(what + " " + named + ": " + problem);
}

// The file may be none of these places, nor lie below one: compared by device and inode
// (a bind, a link or a second name of the same directory cannot hide it) and by resolved path.
Status outside_container(const trusted::Walked& w, const std::string& what, const std::string& named,
                         const ContainerPaths& c) {
  auto check = [&](const std::string& place, const std::string& how) -> Status {
    if (place.empty()) return ok();
    struct stat st;
    if (::stat(place.c_str(), &st) < 0) return ok();  // nothing there: nothing to write into
    trusted::DirId id{st.st_dev, st.st_ino};
    bool inside = id == trusted::DirId{w.st.st_dev, w.st.st_ino};
    for (const auto& d : w.dirs) inside = inside || d == id;
    char real[PATH_MAX];
    if (!inside && ::realpath(place.c_str(), real)) {
      std::string r = real;
      inside = w.path == r || str::starts_with(w.path, r == "/" ? r : r + "/");
    }
    if (inside) return refused(what, named, "inside " + how + " " + place + " (the container can write there)");
    return ok();
  };
  BERTH_TRY(check(c.rootfs, "the container's rootfs"));
  BERTH_TRY(check(c.bundle, "the bundle"));
  for (const auto& s : c.bind_sources) BERTH_TRY(check(s, "the bind mount source"));
  return ok();
}

Result<std::string> read_bounded(int fd, const std::string& what, const std::string& named) {
  std::string text;
  char buf[8192];
  for (off_t off = 0;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::sys(errno, "read " + what + " " + named);
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    off += n;
    if (text.size() > kMaxConfigBytes) return refused(what, named, "larger than 1 MiB: not a CRIU configuration file");
  }
}

}  // namespace

ContainerPaths container_paths(const spec::Spec& spec, const std::string& bundle, const std::string& rootfs) {
  ContainerPaths c{bundle, rootfs, {}};
  for (const auto& m : spec.mounts) {
    if (!is_bind(m) || m.source.empty()) continue;
    c.bind_sources.push_back(m.source[0] == '/' ? m.source : bundle + "/" + m.source);
  }
  return c;
}

size_t first_line_not_an_option(std::string_view text) {
  auto lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    auto words = line_words(lines[i]);
    if (!words.empty() && !option_name(words[0], nullptr, nullptr)) return i + 1;
  }
  return 0;
}

std::string scrub_config_values(const std::string& criu_text, std::string_view config_text, const std::string& named) {
  for (auto line : lines_of(config_text)) {
    auto words = line_words(line);
    std::string_view key, first_value;
    if (words.empty() || !option_name(words[0], &key, &first_value)) continue;
    std::vector<std::string_view> values(words.begin() + 1, words.end());
    values.push_back(first_value);
    for (auto v : values) {
      // A value's quotes are CRIU's syntax; what it may print is the text between them.
      while (!v.empty() && v.front() == '"') v.remove_prefix(1);
      while (!v.empty() && v.back() == '"') v.remove_suffix(1);
      if (v.size() < 3 || criu_text.find(v) == std::string::npos) continue;
      return "CRIU refused the value of option \"" + std::string(key) + "\" of " + named + " (the value is not shown)";
    }
  }
  return criu_text;
}

Result<std::optional<ConfigFile>> open_config_file(const std::string& named, const std::string& what,
                                                   const ContainerPaths& c) {
  if (named.empty()) return std::optional<ConfigFile>();
  if (named[0] != '/') return refused(what, named, "not an absolute path");
  BERTH_ASSIGN(auto walked, trusted::open_file(named, {what, ::geteuid(), false}));
  BERTH_TRY(outside_container(walked, what, named, c));
  // A file that does not exist is ignored by CRIU: none is passed, so nothing made later
  // is read. One named inside the container is refused all the same (above).
  if (walked.missing) return std::optional<ConfigFile>();
  BERTH_ASSIGN(std::string text, read_bounded(walked.fd.get(), what, named));
  if (size_t bad = first_line_not_an_option(text))
    return refused(what, named, "line " + std::to_string(bad) + " is not a CRIU option (its content is not shown)");
  return std::optional<ConfigFile>(ConfigFile{std::move(walked.fd), named, std::move(text)});
}

Result<std::optional<ConfigFile>> check_config_file(const spec::Spec& spec, const ContainerPaths& c) {
  bool annotated = spec.annotations.count("org.criu.config") != 0;
  return open_config_file(config_file(spec), annotated ? "org.criu.config" : "CRIU configuration file", c);
}

void use_config_file(Request& r, const std::optional<ConfigFile>& f) {
  if (!f) {
    r.config_file.clear();
    return;
  }
  // CRIU fopen()s the name: through the fd checked above, which its worker inherits under
  // the same number, nothing swapped in after the checks is read.
  r.config_fd = f->fd.get();
  r.config_named = f->named;
  r.config_text = f->text;
  r.config_file = "/proc/self/fd/" + std::to_string(r.config_fd);
}

}  // namespace berth::container::criu
