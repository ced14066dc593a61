// state and list: the OCI state of one container, or a table/JSON of all of them.
#include <algorithm>

#include "berth/container.h"
#include "cli/commands.h"
#include "container/record.h"
#include "util/file.h"
#include "util/json.h"

namespace berth::cli {
namespace {

// Go's tabwriter as runc's list uses it: minwidth 12, padding 3; the last column is not padded.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  size_t cols = rows.empty() ? 0 : rows[0].size();
  std::vector<size_t> width(cols, 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < cols; ++i) width[i] = std::max(width[i], r[i].size());
  std::string out;
  for (const auto& r : rows) {
    for (size_t i = 0; i < cols; ++i) {
      out += r[i];
      if (i + 1 < cols) out += std::string(std::max<size_t>(12, width[i] + 3) - r[i].size(), ' ');
    }
    out += "\n";
  }
  return out;
}

}  // namespace

Result<int> cmd_state(Context& ctx) {
  BERTH_ASSIGN(OciState s, container_state(ctx.global.root, ctx.flags.args.at(0)));
  BERTH_TRY(file::write_all(1, oci_state_json(s, true) + "\n"));
  return 0;
}

Result<int> cmd_list(Context& ctx) {
  std::string format = ctx.flags.get_string("format", "table");
  if (format != "table" && format != "json") return Error::invalid_argument("invalid format option");
  BERTH_ASSIGN(auto all, list_containers(ctx.global.root));
  std::string out;
  if (ctx.flags.get_bool("quiet")) {
    for (const auto& s : all) out += s.id + "\n";
  } else if (format == "json") {
    if (all.empty()) {
      out = "null\n";
    } else {
      out = "[";
      for (size_t i = 0; i < all.size(); ++i) out += (i ? "," : "") + oci_state_json(all[i], false);
      out += "]\n";
    }
  } else {
    std::vector<std::vector<std::string>> rows = {{"ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER"}};
    for (const auto& s : all)
      rows.push_back({s.id, std::to_string(s.pid), s.status, s.bundle, s.created, s.owner});
    out = table(rows);
  }
  BERTH_TRY(file::write_all(1, out));
  return 0;
}

}  // namespace berth::cli
