// The bundle (config.json), the terminal checks (process.terminal, --console-socket),
// --rootless, the state directory and the cgroups (linux.cgroupsPath, linux.resources): the
// steps create, run and restore take alike before their launches differ.
#include "container/bundle.h"

#include <fcntl.h>

#include "container/init_builder.h"
#include "container/status.h"
#include "linux/paths.h"
#include "linux/rootless.h"
#include "util/file.h"

namespace berth::container {

Result<spec::Spec> load_bundle(const std::string& bundle, const char* verb) {
  // The bundle is the caller's, but may be written by others (a FIFO there hung create).
  auto text = file::read_regular(AT_FDCWD, bundle + "/config.json", 64u << 20);
  if (!text) {
    if (text.error().err() == ENOENT) return Error::sys(ENOENT, "open " + bundle + "/config.json");
    return std::move(text).error();
  }
  BERTH_ASSIGN(spec::Spec spec, spec::parse_spec(*text, "config.json"));
  BERTH_TRY(spec::validate(spec, "config.json"));
  if (!spec.process)
    return Error::invalid_spec(std::string("config.json: process: must be set to ") + verb + " a container");
  if (!spec.root || spec.root->path.empty()) return Error::invalid_spec("config.json: root.path: must be set");
  BERTH_TRY(refuse_unsupported(spec));
  return spec;
}

Status check_terminal(const spec::Spec& spec, const std::string& console_socket, bool detached) {
  if (spec.process->terminal && console_socket.empty() && detached)
    return Error::invalid_argument("cannot allocate tty if berth will detach without setting console socket");
  if (!spec.process->terminal && !console_socket.empty())
    return Error::invalid_argument("cannot use console socket if berth will not detach or allocate tty");
  return ok();
}

Status load_staged(const StageRequest& r, Staged& s) {
  BERTH_ASSIGN(s.spec, load_bundle(linux::absolute_path(r.bundle), r.verb));
  BERTH_TRY(check_terminal(s.spec, r.console_socket, r.detached));
  BERTH_ASSIGN(s.rootless, linux::resolve_rootless(r.rootless, linux::Caller::current()));
  return ok();
}

Status prepare_state(const StageRequest& r, Staged& s, Rollback& undo) {
  BERTH_ASSIGN(auto store, StateStore::open(r.root));
  BERTH_ASSIGN(auto dir, store.create_locked(r.id, undo));
  s.dir.emplace(std::move(dir));
  s.record = new_record(s.spec, r.id, linux::absolute_path(r.bundle), r.systemd_cgroup);
  s.record.rootless = s.rootless;
  // The cgroups are recorded before any directory exists: killed between the mkdirs and
  // the next write, we would otherwise leave cgroups that no delete knows of.
  BERTH_ASSIGN(s.record.cgroup_paths, planned_cgroup_paths(s.spec, r.id, r.systemd_cgroup));
  s.record.cgroup_created = true;
  BERTH_TRY(s.dir->write_record(s.record));
  return s.dir->write_config(s.spec);
}

Status make_cgroups(const StageRequest& r, Staged& s, const std::vector<spec::DeviceRule>& extra_rules,
                    Rollback& undo) {
  BERTH_ASSIGN(s.cg, setup_cgroups(s.spec, r.id, r.systemd_cgroup, s.rootless, extra_rules));
  undo.push([&s, systemd = r.systemd_cgroup] {
    // systemd: only a unit this create started is stopped (begin_unit starts it; one whose
    // job was not awaited yet is abandoned). One that existed already (StartTransientUnit
    // answered UnitExists) is another container's.
    if (systemd && !s.cg.manager) return abandon_unit(s.cg);
    (void)remove_cgroups(s.cg.paths, systemd);
  });
  s.record.cgroup_paths = s.cg.paths;
  return s.dir->write_record(s.record);  // only if they differ from the planned paths
}

}  // namespace berth::container
