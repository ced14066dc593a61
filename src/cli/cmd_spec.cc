// `berth spec [--bundle D] [--rootless]`: writes a starter config.json, as runc's does.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "berth/spec.h"
#include "cli/commands.h"
#include "util/file.h"

namespace berth::cli {

Result<int> cmd_spec(Context& ctx) {
  std::string bundle = ctx.flags.get_string("bundle");
  std::string dir = bundle.empty() ? "." : bundle;
  std::string path = dir + "/config.json";
  struct stat st;
  if (::stat(dir.c_str(), &st) < 0) return Error::sys(errno, "stat " + dir);
  if (::stat(path.c_str(), &st) == 0) return Error::generic("File config.json exists. Remove it first");
  std::string text = spec::to_json(spec::default_spec(ctx.flags.get_bool("rootless")), /*pretty=*/true);
  if (!text.empty() && text.back() == '\n') text.pop_back();  // runc writes no trailing newline
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return Error::sys(errno, "create " + path);
  auto st_write = file::write_all(fd, text);
  ::close(fd);
  BERTH_TRY(std::move(st_write).context("write " + path));
  return 0;
}

}  // namespace berth::cli
