// Per-create host discovery from procfs, sysfs and /dev (see discover.h).
#include "devices/nvidia/discover.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "devices/nvidia/rootdir.h"
#include "util/file.h"
#include "util/strings.h"

namespace berth::devices::nvidia {
namespace {

// "Key:\tvalue" lines: split on the first ':' and trim both sides.
std::map<std::string, std::string> key_values(std::string_view text) {
  std::map<std::string, std::string> out;
  for (const auto& line : str::split(text, '\n')) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    out[std::string(str::trim(line.substr(0, colon)))] = std::string(str::trim(line.substr(colon + 1)));
  }
  return out;
}

std::optional<uint32_t> u32(std::string_view s) {
  auto v = str::parse_u64(str::trim(s));
  if (!v || *v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = ::opendir(path.c_str());
  if (!d) return out;
  while (struct dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') out.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_or_empty(const std::string& path) {
  auto t = file::read(path, 1u << 20);
  return t ? *t : std::string();
}

Result<std::vector<Gpu>> read_gpus(const HostView& host) {
  std::vector<Gpu> gpus;
  for (const auto& bus : list_dir(host.proc("/driver/nvidia/gpus"))) {
    std::string path = host.proc("/driver/nvidia/gpus/" + bus + "/information");
    BERTH_ASSIGN(std::string text, file::read(path, 1u << 16).context("read GPU information"));
    BERTH_ASSIGN(Gpu g, parse_information(text, bus).context(path));
    gpus.push_back(std::move(g));
  }
  // NVML and CUDA number GPUs in PCI bus order; the minor is the driver's own numbering.
  std::sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
    return pci_key(a.bus_id).value_or(0) < pci_key(b.bus_id).value_or(0);
  });
  for (size_t i = 0; i < gpus.size(); ++i) gpus[i].index = static_cast<unsigned>(i);
  return gpus;
}

}  // namespace

std::string HostView::proc(std::string_view rel) const { return join_root(proc_root, std::string(rel)); }
std::string HostView::sys(std::string_view rel) const { return join_root(sys_root, std::string(rel)); }
std::string HostView::dev(std::string_view rel) const { return join_root(dev_root, std::string(rel)); }

std::optional<std::string> parse_version_file(std::string_view text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Thu ..." or the open
  // module's "NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build ...":
  // the first dotted all-digit token after "Module".
  auto line = std::string(text.substr(0, text.find('\n')));
  auto at = line.find("Module");
  if (at == std::string::npos) return std::nullopt;
  for (const auto& tok : str::split_nonempty(line.substr(at), ' ')) {
    std::string t(str::trim(tok));
    if (t.empty() || t.find('.') == std::string::npos) continue;
    bool ok = std::all_of(t.begin(), t.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
    if (ok && t.front() != '.' && t.back() != '.') return t;
  }
  return std::nullopt;
}

Result<Gpu> parse_information(std::string_view text, const std::string& bus_id) {
  auto kv = key_values(text);
  Gpu g;
  g.bus_id = bus_id;
  g.model = kv["Model"];
  g.uuid = kv["GPU UUID"];
  auto minor = u32(kv["Device Minor"]);
  if (!minor) return Error::generic("no \"Device Minor\" line");
  if (!str::starts_with(g.uuid, "GPU-")) return Error::generic("no \"GPU UUID\" line");
  g.minor = *minor;
  return g;
}

Majors parse_proc_devices(std::string_view text) {
  Majors m;
  bool chr = false;
  for (const auto& line : str::split(text, '\n')) {
    std::string_view l = str::trim(line);
    if (l == "Character devices:") { chr = true; continue; }
    if (l == "Block devices:") break;  // only character devices matter
    if (!chr || l.empty()) continue;
    auto sp = l.find(' ');
    if (sp == std::string_view::npos) continue;
    auto num = u32(l.substr(0, sp));
    std::string_view name = str::trim(l.substr(sp + 1));
    if (!num) continue;
    if (name == "nvidia" || name == "nvidia-frontend") m.nvidia = *num;
    else if (name == "nvidia-uvm") m.uvm = *num;
    else if (name == "nvidia-caps") m.caps = *num;
    else if (name == "nvidia-caps-imex-channels") m.imex = *num;
    else if (name == "drm") m.drm = *num;
  }
  return m;
}

MigMinors parse_mig_minors(std::string_view text, const std::optional<std::set<uint32_t>>& gpu_minors) {
  MigMinors m;
  // Thousands of lines (every possible GPU, GI and CI) on every host: walked without
  // copies, and only the wanted GPUs' entries are kept.
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = str::trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    std::string_view key = line.substr(0, sp);
    // The key is filtered before the minor is parsed: most lines are other GPUs'.
    bool special = key == "config" || key == "monitor";
    if (gpu_minors && !special) {
      size_t slash = key.find('/');
      auto gpu = key.substr(0, 3) == "gpu" && slash != std::string_view::npos ? u32(key.substr(3, slash - 3)) : std::nullopt;
      if (!gpu || !gpu_minors->count(*gpu)) continue;
    }
    auto minor = u32(str::trim(line.substr(sp + 1)));
    if (!minor) continue;
    if (key == "config") { m.config = *minor; continue; }
    if (key == "monitor") { m.monitor = *minor; continue; }
    m.by_path.emplace(std::string(key), *minor);
  }
  return m;
}

MigMinors read_mig_minors(const HostView& host, const std::set<uint32_t>& gpu_minors) {
  return parse_mig_minors(read_or_empty(host.proc("/driver/nvidia-caps/mig-minors")), gpu_minors);
}

namespace {

std::string identity_line(const std::string& name, const struct stat& st) {
  char buf[160];
  snprintf(buf, sizeof buf, " %o %llu %lld.%09ld\n", st.st_mode & S_IFMT, static_cast<unsigned long long>(st.st_ino),
           static_cast<long long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec);
  return name + buf;
}

// The tree is a few levels deep (gpuN/mig/giX/ciY/access); the depth bound keeps a
// strange tree from costing more than a few hundred stats.
void walk_identities(const std::string& dir, const std::string& rel, int depth, std::string& out) {
  if (depth > 6) return;
  for (const auto& name : list_dir(dir)) {
    struct stat st;
    if (::lstat((dir + "/" + name).c_str(), &st) != 0) continue;
    out += identity_line(rel + name, st);
    if (S_ISDIR(st.st_mode)) walk_identities(dir + "/" + name, rel + name + "/", depth + 1, out);
  }
}

}  // namespace

std::string mig_state(const HostView& host) {
  std::string out;
  walk_identities(host.proc("/driver/nvidia/capabilities"), "capabilities/", 0, out);
  struct stat st;
  if (::lstat(host.dev("/nvidia-caps").c_str(), &st) == 0) out += identity_line("dev/nvidia-caps", st);
  return out;
}

bool mig_instance_exists(const HostView& host, uint32_t gpu_minor, unsigned gi, unsigned ci) {
  std::string g = host.proc("/driver/nvidia/capabilities/gpu" + std::to_string(gpu_minor) + "/mig/gi" + std::to_string(gi));
  struct stat st;
  return ::lstat((g + "/access").c_str(), &st) == 0 && ::lstat((g + "/ci" + std::to_string(ci) + "/access").c_str(), &st) == 0;
}

DeviceParams parse_params(std::string_view text) {
  auto kv = key_values(text);
  DeviceParams p;
  if (auto v = u32(kv["DeviceFileUID"])) p.uid = *v;
  if (auto v = u32(kv["DeviceFileGID"])) p.gid = *v;
  if (auto v = u32(kv["DeviceFileMode"])) p.mode = *v & 07777;
  return p;
}

std::optional<uint32_t> parse_access_minor(std::string_view text) {
  auto kv = key_values(text);
  return u32(kv["DeviceFileMinor"]);
}

std::string mask_params(std::string_view params) {
  std::string out;
  for (const auto& line : str::split(params, '\n')) {
    if (str::starts_with(line, "ModifyDeviceFiles:")) out += "ModifyDeviceFiles: 0\n";
    else if (!line.empty()) out += line + "\n";
  }
  return out;
}

std::optional<uint64_t> pci_key(std::string_view bus_id) {
  auto parts = str::split(bus_id, ':');
  if (parts.size() == 2) parts.insert(parts.begin(), "0");
  if (parts.size() != 3) return std::nullopt;
  auto dot = parts[2].find('.');
  if (dot == std::string::npos) return std::nullopt;
  auto dom = str::parse_u64(parts[0], 16), bus = str::parse_u64(parts[1], 16);
  auto dev = str::parse_u64(parts[2].substr(0, dot), 16), fn = str::parse_u64(parts[2].substr(dot + 1), 16);
  if (!dom || !bus || !dev || !fn || *dom > 0xffffffff || *bus > 0xff || *dev > 0x1f || *fn > 7) return std::nullopt;
  return (*dom << 16) | (*bus << 8) | (*dev << 3) | *fn;
}

Result<std::optional<std::string>> read_driver_version(const HostView& host) {
  std::string path = host.proc("/driver/nvidia/version");
  auto text = file::read(path, 1u << 16);
  if (!text) {
    if (text.error().err() == ENOENT) return std::optional<std::string>();
    return std::move(text).error();
  }
  auto v = parse_version_file(*text);
  if (!v) return Error::generic(path + ": no driver version in \"" + text->substr(0, text->find('\n')) + "\"");
  return v;
}

Result<HostDevices> discover_devices(const HostView& host, const std::string& version) {
  HostDevices d;
  d.driver_version = version;
  BERTH_ASSIGN(d.gpus, read_gpus(host));
  BERTH_ASSIGN(std::string devices, file::read(host.proc("/devices"), 1u << 16).context("read /proc/devices"));
  d.majors = parse_proc_devices(devices);
  if (!d.majors.nvidia)
    return Error::generic(host.proc("/devices") + ": no \"nvidia\" or \"nvidia-frontend\" character device");
  d.params_text = read_or_empty(host.proc("/driver/nvidia/params"));
  d.params = parse_params(d.params_text);
  d.version_text = read_or_empty(host.proc("/driver/nvidia/version"));
  d.registry_text = read_or_empty(host.proc("/driver/nvidia/registry"));
  for (const auto& name : list_dir(host.dev("/nvidia-caps-imex-channels")))
    if (str::starts_with(name, "channel"))
      if (auto n = u32(name.substr(7))) d.imex_channels.push_back(*n);
  std::sort(d.imex_channels.begin(), d.imex_channels.end());
  return d;
}

std::vector<DriNode> dri_nodes(const HostView& host, const std::string& bus_id) {
  std::vector<DriNode> out;
  std::string bus = bus_id;
  // sysfs names the domain with 4 digits; procfs and NVML may use 8.
  if (auto c = bus.find(':'); c == 8 && bus.compare(0, 4, "0000") == 0) bus = bus.substr(4);
  std::string dir = host.sys("/bus/pci/devices/" + str::to_lower(bus) + "/drm");
  for (const auto& name : list_dir(dir)) {
    if (!str::starts_with(name, "card") && !str::starts_with(name, "renderD")) continue;
    auto mm = str::split(str::trim(read_or_empty(dir + "/" + name + "/dev")), ':');
    if (mm.size() != 2) continue;
    auto ma = u32(mm[0]), mi = u32(mm[1]);
    if (!ma || !mi) continue;
    DriNode n{name, *ma, *mi};
    struct stat st;
    if (::stat(host.dev("/dri/" + name).c_str(), &st) == 0) n.mode = st.st_mode & 07777, n.uid = st.st_uid, n.gid = st.st_gid;
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace berth::devices::nvidia
