// bpf(2) for the v2 device filter (linux.resources.devices on cgroup v2): load a
// BPF_PROG_TYPE_CGROUP_DEVICE program, query and attach it to a cgroup directory. No
// libbpf: four commands of the raw syscall are all berth needs.
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cgroups/v2/v2.h"

namespace berth::cgroups::v2 {
namespace {

long bpf(int cmd, union bpf_attr* attr) {
  return ::syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

Result<UniqueFd> prog_fd_by_id(uint32_t id) {
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.prog_id = id;
  long fd = bpf(BPF_PROG_GET_FD_BY_ID, &attr);
  if (fd < 0) return Error::sys(errno, "bpf(BPF_PROG_GET_FD_BY_ID " + std::to_string(id) + ")");
  return UniqueFd(static_cast<int>(fd));
}

Status attach(int cgroup_fd, int prog_fd, uint32_t flags, int replace_fd) {
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.target_fd = static_cast<uint32_t>(cgroup_fd);
  attr.attach_bpf_fd = static_cast<uint32_t>(prog_fd);
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = flags;
  attr.replace_bpf_fd = static_cast<uint32_t>(replace_fd < 0 ? 0 : replace_fd);
  if (bpf(BPF_PROG_ATTACH, &attr) < 0) return Error::sys(errno, "bpf(BPF_PROG_ATTACH)");
  return ok();
}

Status detach(int cgroup_fd, int prog_fd) {
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.target_fd = static_cast<uint32_t>(cgroup_fd);
  attr.attach_bpf_fd = static_cast<uint32_t>(prog_fd);
  attr.attach_type = BPF_CGROUP_DEVICE;
  if (bpf(BPF_PROG_DETACH, &attr) < 0) return Error::sys(errno, "bpf(BPF_PROG_DETACH)");
  return ok();
}

}  // namespace

Result<UniqueFd> load_device_program(const std::vector<bpf_insn>& prog) {
  static const char kLicense[] = "Apache-2.0";
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = reinterpret_cast<uint64_t>(prog.data());
  attr.insn_cnt = static_cast<uint32_t>(prog.size());
  attr.license = reinterpret_cast<uint64_t>(kLicense);
  std::memcpy(attr.prog_name, "berth_dev", sizeof "berth_dev");
  long fd = bpf(BPF_PROG_LOAD, &attr);
  if (fd >= 0) return UniqueFd(static_cast<int>(fd));
  int err = errno;
  // Load again with the verifier's log to say why (only on failure: logging costs time).
  static char log[16384];
  log[0] = 0;
  attr.log_level = 1;
  attr.log_buf = reinterpret_cast<uint64_t>(log);
  attr.log_size = sizeof log;
  if (bpf(BPF_PROG_LOAD, &attr) >= 0) return Error::sys(err, "bpf(BPF_PROG_LOAD)");
  std::string why = log[0] ? std::string(": ") + log : "";
  return Error::sys(err, "bpf(BPF_PROG_LOAD) of the device filter" + why);
}

Result<std::vector<uint32_t>> attached_device_programs(int cgroup_fd) {
  uint32_t ids[64];
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.query.target_fd = static_cast<uint32_t>(cgroup_fd);
  attr.query.attach_type = BPF_CGROUP_DEVICE;
  attr.query.prog_ids = reinterpret_cast<uint64_t>(ids);
  attr.query.prog_cnt = 64;
  if (bpf(BPF_PROG_QUERY, &attr) < 0) return Error::sys(errno, "bpf(BPF_PROG_QUERY)");
  uint32_t n = attr.query.prog_cnt < 64 ? attr.query.prog_cnt : 64;
  return std::vector<uint32_t>(ids, ids + n);
}

Status attach_device_program(int cgroup_fd, int prog_fd) {
  BERTH_ASSIGN(auto old_ids, attached_device_programs(cgroup_fd));
  std::vector<UniqueFd> old;
  for (uint32_t id : old_ids) {
    BERTH_ASSIGN(auto fd, prog_fd_by_id(id));
    old.push_back(std::move(fd));
  }
  if (old.size() == 1) {
    // One program (ours from create): swap it in one step.
    auto st = attach(cgroup_fd, prog_fd, BPF_F_ALLOW_MULTI | BPF_F_REPLACE, old[0].get());
    if (st || st.error().err() != EINVAL) return st;
    // Kernels before 5.6 have no BPF_F_REPLACE: fall through to attach-then-detach.
  }
  // Attach first, then detach the old ones: with ALLOW_MULTI every attached program must
  // allow an access, so the overlap is stricter, never looser.
  BERTH_TRY(attach(cgroup_fd, prog_fd, BPF_F_ALLOW_MULTI, -1));
  for (const auto& fd : old) BERTH_TRY(detach(cgroup_fd, fd.get()));
  return ok();
}

}  // namespace berth::cgroups::v2
