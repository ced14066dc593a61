// pause, resume, ps, events and update: flags → libberth's cgroup operations.
#include <unistd.h>

#include <algorithm>
#include <set>

#include "berth/container.h"
#include "berth/container_ops.h"
#include "cli/commands.h"
#include "util/file.h"
#include "util/strings.h"

namespace berth::cli {
namespace {

Status out(const std::string& s) { return file::write_all(STDOUT_FILENO, s); }

// runc update's flags: only those given (non-empty) are set.
Result<spec::Resources> resources_from_flags(const ParsedFlags& f) {
  spec::Resources r;
  auto bytes = [&](const char* name, std::optional<int64_t>& dst) -> Status {
    if (!f.has(name)) return ok();
    std::string v = f.get_string(name);
    if (v == "-1") return dst = -1, ok();
    auto b = parse_ram_bytes(v);
    if (!b) return Error::invalid_argument("invalid value for " + std::string(name) + ": " + v);
    dst = *b;
    return ok();
  };
  auto number = [&](const char* name, auto& dst) -> Status {
    if (!f.has(name)) return ok();
    auto v = str::parse_i64(f.get_string(name));
    if (!v) return Error::invalid_argument("invalid value for " + std::string(name) + ": " + f.get_string(name));
    dst = static_cast<std::remove_reference_t<decltype(*dst)>>(*v);
    return ok();
  };
  spec::Memory m;
  BERTH_TRY(bytes("memory", m.limit));
  BERTH_TRY(bytes("memory-reservation", m.reservation));
  BERTH_TRY(bytes("memory-swap", m.swap));
  BERTH_TRY(bytes("kernel-memory", m.kernel));
  BERTH_TRY(bytes("kernel-memory-tcp", m.kernel_tcp));
  if (m != spec::Memory{}) r.memory = m;
  spec::Cpu c;
  BERTH_TRY(number("cpu-share", c.shares));
  BERTH_TRY(number("cpu-quota", c.quota));
  BERTH_TRY(number("cpu-period", c.period));
  BERTH_TRY(number("cpu-burst", c.burst));
  BERTH_TRY(number("cpu-rt-period", c.realtime_period));
  BERTH_TRY(number("cpu-rt-runtime", c.realtime_runtime));
  BERTH_TRY(number("cpu-idle", c.idle));
  c.cpus = f.get_string("cpuset-cpus");
  c.mems = f.get_string("cpuset-mems");
  if (c != spec::Cpu{}) r.cpu = c;
  if (f.has("pids-limit")) r.pids = spec::Pids{f.get_int("pids-limit")};
  if (f.has("blkio-weight")) {
    spec::BlockIo b;
    b.weight = static_cast<uint16_t>(f.get_uint("blkio-weight"));
    r.block_io = b;
  }
  if (f.has("l3-cache-schema") || f.has("mem-bw-schema"))
    return Error::unsupported("linux.intelRdt: Intel RDT is not supported by berth");
  return r;
}

}  // namespace

Result<int> cmd_pause(Context& ctx) {
  BERTH_TRY(pause_container(ctx.global.root, ctx.flags.args.at(0)));
  return 0;
}

Result<int> cmd_resume(Context& ctx) {
  BERTH_TRY(resume_container(ctx.global.root, ctx.flags.args.at(0)));
  return 0;
}

Result<int> cmd_ps(Context& ctx) {
  const auto& a = ctx.flags.args;
  std::string format = ctx.flags.get_string("format", "table");
  if (format != "table" && format != "json") return Error::invalid_argument("invalid format option");
  BERTH_ASSIGN(auto pids, container_pids(ctx.global.root, a[0]));
  if (format == "json") {
    std::string s = "[";
    for (size_t i = 0; i < pids.size(); ++i) s += (i ? "," : "") + std::to_string(pids[i]);
    BERTH_TRY(out(s + "]\n"));
    return 0;
  }
  // Table: ps(1) with the given options (default -ef), keeping the header and the rows whose
  // PID column is one of the container's processes.
  std::vector<std::string> ps_args(a.begin() + 1, a.end());
  if (ps_args.empty()) ps_args = {"-ef"};
  std::string cmd = "ps";
  for (const auto& arg : ps_args) cmd += " " + str::go_quote(arg);
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return Error::sys(errno, "run ps");
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = ::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  int st = ::pclose(p);
  if (st != 0) return Error::generic("ps failed: " + text);
  auto lines = str::split(text, '\n');
  auto header = str::split_nonempty(lines.empty() ? "" : lines[0], ' ');
  auto col = std::find(header.begin(), header.end(), "PID");
  if (col == header.end()) return Error::generic("couldn't find PID field in ps output");
  size_t idx = static_cast<size_t>(col - header.begin());
  std::set<pid_t> mine(pids.begin(), pids.end());
  std::string result = lines[0] + "\n";
  for (size_t i = 1; i < lines.size(); ++i) {
    auto fields = str::split_nonempty(lines[i], ' ');
    if (fields.size() <= idx) continue;
    auto pid = str::parse_i64(fields[idx]);
    if (pid && mine.count(static_cast<pid_t>(*pid))) result += lines[i] + "\n";
  }
  BERTH_TRY(out(result));
  return 0;
}

Result<int> cmd_events(Context& ctx) {
  const std::string& id = ctx.flags.args.at(0);
  if (ctx.flags.get_bool("stats")) {
    BERTH_ASSIGN(std::string e, stats_event(ctx.global.root, id));
    BERTH_TRY(out(e + "\n"));
    return 0;
  }
  int64_t interval = ctx.flags.get_duration_ns("interval", 5'000'000'000);
  if (interval <= 0) return Error::invalid_argument("duration interval must be greater than 0");
  BERTH_TRY(stream_events(ctx.global.root, id, interval, [](const std::string& e) { (void)out(e + "\n"); }));
  return 0;
}

Result<int> cmd_update(Context& ctx) {
  const std::string& id = ctx.flags.args.at(0);
  BERTH_TRY(to_status(container_state(ctx.global.root, id)));  // runc checks the container first
  spec::Resources r;
  std::string file = ctx.flags.get_string("resources");
  if (!file.empty()) {
    auto text = file == "-" ? file::read_fd(STDIN_FILENO) : file::read(file);
    if (!text) return std::move(text).error().context("read resources");
    BERTH_ASSIGN(r, spec::parse_resources(*text, file == "-" ? "resources" : file));
  } else {
    BERTH_ASSIGN(r, resources_from_flags(ctx.flags));
  }
  BERTH_TRY(update_container(ctx.global.root, id, r));
  return 0;
}

}  // namespace berth::cli
