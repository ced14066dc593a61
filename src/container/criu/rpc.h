// CRIU's RPC messages (rpc.proto's criu_req/criu_resp, packed and unpacked by the protobuf-c
// code CRIU's package installs): a Request as the packed criu_req berth sends to `criu swrk`,
// and a packed criu_resp read back. No system call: unit tests decode what is sent.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "berth/result.h"
#include "container/criu/request.h"

namespace berth::container::criu {

// The fd numbers the message names: images_dir_fd and work_dir_fd are berth's own (CRIU opens
// /proc/<peer>/fd/N), the inherit fds are CRIU's (same order as Request::inherit_fds).
struct RpcFds {
  int images_dir = -1;
  int work_dir = -1;
  std::vector<int> inherit;
};

// The request of r.kind, with notify_scripts on (hooks, the orphan pts master and the lazy
// pages' "status-ready" all arrive as notifications) and, at restore, rst_sibling (the
// restored init becomes berth's child, as runc asks).
Result<std::vector<uint8_t>> pack_request(const Request& r, const RpcFds& fds);
// criu_req of type NOTIFY answering one notification.
Result<std::vector<uint8_t>> pack_notify_ack(bool success);
// criu_req FEATURE_CHECK asking for lazy_pages; VERSION.
Result<std::vector<uint8_t>> pack_lazy_pages_check();
Result<std::vector<uint8_t>> pack_version_request();

// A packed criu_req as text, one option a line ("type DUMP", "leave_running", "ext_mnt
// /data:/data", "inherit_fd pipe:[7]:0"): what tests compare.
Result<std::string> describe_packed_request(const std::vector<uint8_t>& packed);

struct Response {
  std::string type;        // "DUMP", "NOTIFY", ...
  bool is_notify = false;
  bool success = false;
  std::string script;      // NOTIFY: the action ("setup-namespaces", "status-ready")
  pid_t pid = 0;           // NOTIFY: the notify pid; RESTORE: the restored init
  int cr_errno = 0;
  std::string cr_errmsg;
  bool lazy_pages = false;  // FEATURE_CHECK
  int version = 0;          // VERSION: major*10000 + minor*100 + sublevel
};

Result<Response> unpack_response(const uint8_t* data, size_t len);

// rpc.proto's name of the request type of `k` ("DUMP", "PRE_DUMP", "RESTORE"), as runc's
// error text shows it.
const char* request_type_name(Kind k);

}  // namespace berth::container::criu
