// NVIDIA Edits, part two: driver libraries, binaries, firmware, graphics configs and IPC
// bound from the driver root; SONAME links; ld.so.conf drop-ins and the in-container
// ldconfig run (see plan.h).
#include <algorithm>

#include "devices/nvidia/plan.h"
#include "devices/nvidia/rootdir.h"

namespace berth::devices::nvidia {
namespace {

const std::vector<std::string> kReadOnly = {"ro", "nosuid", "nodev"};
const std::vector<std::string> kReadOnlyData = {"ro", "nosuid", "nodev", "noexec"};
const std::vector<std::string> kIpc = {"nosuid", "nodev", "noexec"};

std::string base_name(const std::string& p) { return p.substr(p.rfind('/') + 1); }

void add_mount(const PlanInput& in, Edits& e, const std::string& source, const std::string& dest,
          const std::vector<std::string>& opts) {
  for (const auto& m : e.mounts)
    if (m.container_path == dest) return;
  e.mounts.push_back({join_root(in.driver_root, source), dest, opts});
}

void add_link(Edits& e, const std::string& dir, const std::string& name, const std::string& target) {
  if (name == target) return;
  std::string path = dir + "/" + name;
  for (const auto& l : e.symlinks)
    if (l.container_path == path) return;
  e.symlinks.push_back({target, path});
}

void libraries(const PlanInput& in, Edits& e, const std::vector<DriverFile>& libs, const std::string& dir) {
  for (const auto& l : libs) {
    if (!(l.caps & in.req->caps)) continue;
    std::string file = base_name(l.source);
    add_mount(in, e, l.source, dir + "/" + file, kReadOnly);
    // SONAME links made here, not left to ldconfig: images without glibc (or with a
    // broken ldconfig) still find libcuda.so.1.
    add_link(e, dir, l.path, file);
    for (const auto& [name, target] : extra_library_links(l.path)) add_link(e, dir, name, target);
  }
}

// A spec mount at dir or inside it, which a tmpfs at dir would hide: compared as written and
// as both resolve in the image. A destination not written plainly ("..", "//", "/./")
// counts as one: then the tmpfs is not used.
bool spec_mount_within(const PlanInput& in, const std::string& dir) {
  auto r = in.ct->resolved.find(dir);
  std::vector<std::string> forms = {dir};
  if (r != in.ct->resolved.end()) forms.push_back(r->second);
  for (std::string d : in.ct->spec_mounts) {
    if (d.find("..") != std::string::npos || d.find("//") != std::string::npos || d.find("/./") != std::string::npos)
      return true;
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    for (const auto& f : forms)
      if (d == f || d.compare(0, f.size() + 1, f + "/") == 0) return true;
  }
  return false;
}

void add_tmpfs(Edits& e, const std::string& dir) {
  if (std::find(e.tmpfs.begin(), e.tmpfs.end(), dir) == e.tmpfs.end()) e.tmpfs.push_back(dir);
}

// /usr/bin, /lib/firmware, a daemon's socket directory: where the image has nothing, a tmpfs
// holds the targets (the binaries' and sockets' mount points, the firmware's version
// directories and files), so a fresh overlay's upper layer gets its mount point only.
void own_dir(const PlanInput& in, Edits& e, const std::string& dir) {
  if (in.ct->empty_own_dirs.count(dir) && !spec_mount_within(in, dir)) add_tmpfs(e, dir);
}

std::string lines(const std::vector<std::string>& dirs) {
  std::string s;
  for (const auto& d : dirs) s += d + "\n";
  return s;
}

}  // namespace

// The libraries and their SONAME links are mount points and links in a directory; on a
// fresh overlayfs rootfs (what every engine gives a container) each is a new entry of the
// upper layer. A tmpfs of the module's own holds them instead: lib_dir itself where the
// image has nothing there, or <lib_dir>/berth-nvidia, named to the loader by the drop-in
// and the ld.so.cache ldconfig makes (or the musl .path file). An image whose loader would
// not be told (no libc found, glibc without an ldconfig to run) keeps them in lib_dir.
LibraryDir library_dir(const PlanInput& in, bool lib32) {
  const ContainerFacts& ct = *in.ct;
  LibraryDir d{lib32 ? ct.lib32_dir : ct.lib_dir, false};
  if (spec_mount_within(in, d.path)) return d;
  if (lib32 ? ct.lib32_dir_empty : ct.lib_dir_empty) {
    d.tmpfs = true;
    return d;
  }
  bool told = (ct.libc == Libc::kGlibc && !in.ldconfig.empty()) || ct.libc == Libc::kMusl;
  if (!told) return d;
  return {d.path + "/berth-nvidia", true};
}

void plan_driver_files(const PlanInput& in, Edits& e) {
  const DriverFiles& f = *in.files;
  uint32_t caps = in.req->caps;
  for (bool lib32 : {false, true}) {
    const auto& libs = lib32 ? f.libs32 : f.libs;
    if ((lib32 && !(caps & kCompat32)) || libs.empty()) continue;
    LibraryDir dir = library_dir(in, lib32);
    if (dir.tmpfs) add_tmpfs(e, dir.path);
    libraries(in, e, libs, dir.path);
  }
  // Every binary is /usr/bin/<name> (driver_files.cc), on the PATH of every image.
  if (std::any_of(f.bins.begin(), f.bins.end(), [&](const DriverFile& b) { return b.caps & caps; }))
    own_dir(in, e, "/usr/bin");
  for (const auto& b : f.bins)
    if (b.caps & caps) add_mount(in, e, b.source, b.path, kReadOnly);
  if (!f.firmware.empty()) own_dir(in, e, "/lib/firmware");
  for (const auto& fw : f.firmware) add_mount(in, e, fw.source, fw.path, kReadOnlyData);
  for (const auto& c : f.configs)
    if (c.caps & caps) add_mount(in, e, c.source, c.path, kReadOnlyData);
  for (const auto& i : f.ipc) {
    if (!(i.caps & caps)) continue;
    own_dir(in, e, i.path.substr(0, i.path.rfind('/')));
    add_mount(in, e, i.source, i.path, kIpc);
  }
}

void ld_config_edits(const ContainerFacts& ct, const std::vector<std::string>& dirs, const std::string& compat_dir,
                     const std::string& ldconfig, const std::string& dropin, Edits& e) {
  if (ct.libc == Libc::kMusl) {
    // musl reads one search path file instead of ld.so.cache; keep what the image has.
    std::string content = ct.musl_path_content.value_or("/lib\n/usr/local/lib\n/usr/lib\n");
    if (!content.empty() && content.back() != '\n') content += "\n";
    for (const auto& d : dirs)
      if (("\n" + content).find("\n" + d + "\n") == std::string::npos) content += d + "\n";
    e.files.push_back({ct.musl_path_file, content, 0644});
    return;
  }
  if (ct.libc != Libc::kGlibc) return;  // no dynamic loader in the image: SONAME links suffice
  std::vector<std::string> args = {"-f", "/etc/ld.so.conf", "-C", "/etc/ld.so.cache"};
  if (!compat_dir.empty()) {
    // Named to sort before the driver's drop-in and the image's own files, and given first
    // on the command line: the loader takes the first libcuda.so.1 that ldconfig records,
    // and that must be the compat one.
    e.files.push_back({"/etc/ld.so.conf.d/00-compat-berth.conf", compat_dir + "\n", 0644});
    args.push_back(compat_dir);
  }
  if (!dirs.empty()) e.files.push_back({"/etc/ld.so.conf.d/" + dropin, lines(dirs), 0644});
  if (!ct.has_ld_so_conf) e.files.push_back({"/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n", 0644});
  for (const auto& d : dirs) args.push_back(d);
  if (!ldconfig.empty()) e.ldconfig.push_back({ldconfig, args});
}

void plan_ld_config(const PlanInput& in, Edits& e) {
  std::vector<std::string> dirs = {library_dir(in, false).path};
  if ((in.req->caps & kCompat32) && !in.files->libs32.empty()) dirs.push_back(library_dir(in, true).path);
  std::string compat = in.use_compat && in.ct->compat ? in.ct->compat->dir : "";
  ld_config_edits(*in.ct, dirs, compat, in.ldconfig, "01-berth-nvidia.conf", e);
}

}  // namespace berth::devices::nvidia
