// Process-engine test fixture: the child-side sequences (init stages, exec tenant,
// payload) run in the test process against RecordingSys, with the runtime's end of the sync
// socket in the test's hands (the messages a sequence waits for queued up front, what it
// sent read back afterwards). Configs: a table of identities and privilege settings.
#pragma once

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <vector>

#include "container/process/init.h"
#include "container/process/payload.h"
#include "container/process/sync.h"
#include "container/process/tenant.h"
#include "support/fakes/recording_sys.h"

namespace berth::container::process::testing {

// One sync socket: `child` is what the sequence gets as cfg.sync_fd.
class Channel {
 public:
  static constexpr int kChildFd = 100;
  Channel() {
    auto p = sync_pair();
    runtime_ = std::move(p->first);
    // A fixed number, so that the payload's close_range around it reads the same in every run.
    child_ = ::fcntl(p->second.get(), F_DUPFD_CLOEXEC, kChildFd);
    ::fcntl(runtime_.get(), F_SETFL, O_NONBLOCK);
  }
  ~Channel() {
    if (!child_closed_) ::close(child_);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  int child() const { return child_; }
  // The init's payload closes its end itself once `start` came.
  void child_was_closed() { child_closed_ = true; }
  // The runtime exits: the child reads EOF from here on.
  void runtime_gone() { runtime_.reset(); }
  void queue(Msg m, int times = 1) {
    for (int i = 0; i < times; ++i) (void)send(runtime_.get(), m);
  }
  // What the child sent so far, in order.
  std::vector<Message> sent() {
    std::vector<Message> out;
    while (true) {
      auto m = receive(runtime_.get());
      if (!m) break;
      out.push_back(std::move(*m));
    }
    return out;
  }
  // The text of the first kError sent, or "".
  std::string error() {
    for (const auto& m : sent())
      if (m.type == Msg::kError) return to_error(m).message();
    return "";
  }

 private:
  UniqueFd runtime_;
  int child_ = -1;
  bool child_closed_ = false;
};

// The log without inspection (fstat, fstatfs, fstatat, read_file: they change nothing),
// the fd of every setns shown as "fd" (some are real: namespace files the code opened).
inline std::string changes(const test::RecordingSys& sys) {
  std::string out;
  static const std::regex real_fd(R"(^setns\((\d{1,6}),)");
  for (const auto& l : sys.log()) {
    if (l.rfind("fstat", 0) == 0 || l.rfind("read_file(", 0) == 0) continue;
    out += std::regex_replace(l, real_fd, "setns(fd,") + "\n";
  }
  return out;
}

// Where the init payload tests put exec.fifo: a fixed number, so that the close_range around
// it reads the same in every run (the sync socket is Channel::kChildFd).
constexpr int kFifoFd = 102;

// The container's passwd and group files, in the fake's model.
inline void add_user_files(test::RecordingSys& sys) {
  sys.add_dir("/etc");
  sys.add_file("/etc/passwd", "root:x:0:0::/root:/bin/sh\nu:x:1000:1000::/home/u:/bin/sh\n");
  sys.add_file("/etc/group", "root:x:0:\nwheel:x:10:u\naudio:x:29:u\n");
}

// A payload's identity and privileges.
struct Identity {
  const char* name;
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> additional_gids;
  bool no_new_privileges = false;
  bool seccomp = false;
  bool caps = true;
};

inline const std::vector<Identity>& identities() {
  static const std::vector<Identity> all = {
      {"root_defaults", 0, 0, {}, false, false, true},
      {"user_nnp_seccomp_groups", 1000, 1000, {10, 29}, true, true, true},
      {"user_seccomp_without_nnp", 1000, 1000, {}, false, true, true},
      {"rootless_no_caps", 0, 0, {}, true, false, false},
      {"user_seccomp_no_caps_without_nnp", 1000, 1000, {}, false, true, false},
  };
  return all;
}

// The payload config of an exec tenant (Launch::kTenant) or an init.
inline InitConfig payload_config(const Identity& id, int sync_fd, bool tenant) {
  InitConfig cfg;
  cfg.sync_fd = sync_fd;
  cfg.launch = tenant ? Launch::kTenant : Launch::kInit;
  cfg.process.args = {"/bin/sh", "-c", "true"};
  cfg.process.env = {"PATH=/usr/bin:/bin"};
  cfg.process.cwd = "/srv/app";
  cfg.process.user.uid = id.uid;
  cfg.process.user.gid = id.gid;
  cfg.process.user.additional_gids = id.additional_gids;
  cfg.process.no_new_privileges = id.no_new_privileges;
  if (id.caps) {
    cfg.has_caps = true;
    cfg.caps.bounding = cfg.caps.permitted = cfg.caps.effective = 0x20000420;  // NET_BIND_SERVICE, KILL, AUDIT_WRITE
    cfg.caps.inheritable = 0;
    cfg.caps.ambient = 0x400;
  }
  if (id.seccomp) {
    cfg.seccomp.emplace();
    cfg.seccomp->default_action = "SCMP_ACT_ERRNO";
  }
  return cfg;
}

// Stage two of an init without a mount namespace: names, a chroot and every process
// attribute set, so that each call of the stage is on the log.
inline InitConfig stage_two_config(int sync_fd, linux::NamespacePlan* plan) {
  InitConfig cfg;
  cfg.sync_fd = sync_fd;
  cfg.ns = plan;
  cfg.container_id = "c1";
  cfg.set_hostname = cfg.set_domainname = true;
  cfg.hostname = "box";
  cfg.domainname = "example";
  cfg.chroot = "/rootfs";
  cfg.process.rlimits = {{"RLIMIT_NOFILE", 1024, 512}};
  cfg.process.oom_score_adj = 100;
  cfg.process.scheduler = spec::Scheduler{"SCHED_BATCH", 5, 0, {}, 0, 0, 0};
  cfg.process.io_priority = spec::IoPriority{"IOPRIO_CLASS_BE", 4};
  cfg.personality = spec::Personality{"LINUX", {}};
  cfg.memory_policy = spec::MemoryPolicy{"MPOL_BIND", "0", {}};
  return cfg;
}

}  // namespace berth::container::process::testing
