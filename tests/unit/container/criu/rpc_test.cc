// The packed criu_req berth sends to `criu swrk` (src/container/criu/rpc.cc), decoded with
// CRIU's own protobuf-c code: every option of the Request on the wire, notify_scripts and
// rst_sibling as runc sends them, the notification answer and the feature check.
#include "container/criu/rpc.h"

#include <gtest/gtest.h>
#include <sched.h>

#include "container/criu/driver.h"

namespace berth::container::criu {
namespace {

#define SKIP_WITHOUT_CRIU() \
  if (!built_with_criu()) GTEST_SKIP() << "berth was built without CRIU's rpc.proto code"

std::string decoded(const Result<std::vector<uint8_t>>& packed) {
  EXPECT_TRUE(packed) << packed.error().message();
  if (!packed) return "";
  auto text = describe_packed_request(*packed);
  EXPECT_TRUE(text) << text.error().message();
  return text ? *text : "";
}

TEST(CriuRpc, DumpCarriesEveryOption) {
  SKIP_WITHOUT_CRIU();
  Request r;
  r.kind = Kind::kDump;
  r.pid = 4242;
  r.parent_img = "../pre";
  r.root = "/b/rootfs";
  r.log_file = "dump.log";
  r.freeze_cgroup = "/sys/fs/cgroup/berth/c1";
  r.leave_running = r.tcp_established = r.ext_unix_sk = r.shell_job = r.file_locks = r.auto_dedup = true;
  r.lazy_pages = true;
  r.cg_mode = CgroupsMode::kStrict;
  r.empty_ns = CLONE_NEWNET;
  r.page_server_address = "0.0.0.0";
  r.page_server_port = 27277;
  r.status_fd = 9;  // answered through "status-ready", never sent
  r.ext_mounts = {{"/data", "/data"}, {"/proc/kcore", "/dev/null"}};
  r.externals = {"net[4026532000]:extRootNetNS"};
  EXPECT_EQ(decoded(pack_request(r, {5, 6, {}})),
            "type DUMP\n"
            "images_dir_fd 5\n"
            "work_dir_fd 6\n"
            "pid 4242\n"
            "parent_img ../pre\n"
            "root /b/rootfs\n"
            "log_file dump.log\n"
            "log_level 4\n"
            "freeze_cgroup /sys/fs/cgroup/berth/c1\n"
            "leave_running\ntcp_established\next_unix_sk\nshell_job\nfile_locks\nauto_dedup\n"
            "orphan_pts_master\nmanage_cgroups\nlazy_pages\nnotify_scripts\n"
            "manage_cgroups_mode 5\n"
            "empty_ns 1073741824\n"
            "ps 0.0.0.0:27277\n"
            "ext_mnt /data:/data\n"
            "ext_mnt /proc/kcore:/dev/null\n"
            "external net[4026532000]:extRootNetNS\n");
}

TEST(CriuRpc, RestoreIsASiblingWithItsInheritedFds) {
  SKIP_WITHOUT_CRIU();
  Request r;
  r.kind = Kind::kRestore;
  r.root = "/run/berth/c2/criu-root";
  r.log_file = "restore.log";
  r.evasive_devices = true;
  r.orphan_pts_master = false;
  r.manage_cgroups = false;
  r.config_file = "/etc/criu/runc.conf";
  r.lsm_profile = "apparmor:p";
  r.lsm_mount_context = "system_u:object_r:container_file_t:s0";
  r.inherit_fds = {{"extRootNetNS", 7}, {"pipe:[1234]", 1}};
  r.cg_roots = {{"", "/berth/c2"}, {"memory", "/berth/c2"}};
  EXPECT_EQ(decoded(pack_request(r, {3, -1, {7, 1}})),
            "type RESTORE\n"
            "images_dir_fd 3\n"
            "root /run/berth/c2/criu-root\n"
            "log_file restore.log\n"
            "log_level 4\n"
            "evasive_devices\nrst_sibling\nnotify_scripts\n"
            "config_file /etc/criu/runc.conf\n"
            "lsm_profile apparmor:p\n"
            "lsm_mount_context system_u:object_r:container_file_t:s0\n"
            "inherit_fd extRootNetNS:7\n"
            "inherit_fd pipe:[1234]:1\n"
            "cg_root :/berth/c2\n"
            "cg_root memory:/berth/c2\n");
}

TEST(CriuRpc, PreDumpAndTheSmallRequests) {
  SKIP_WITHOUT_CRIU();
  Request r;
  r.kind = Kind::kPreDump;
  r.track_mem = true;
  r.orphan_pts_master = r.manage_cgroups = false;
  std::string d = decoded(pack_request(r, {4, -1, {}}));
  EXPECT_EQ(d.substr(0, d.find('\n')), "type PRE_DUMP");
  EXPECT_NE(d.find("\ntrack_mem\n"), std::string::npos) << d;
  EXPECT_EQ(decoded(pack_notify_ack(true)), "type NOTIFY\nnotify_success true\n");
  EXPECT_EQ(decoded(pack_notify_ack(false)), "type NOTIFY\nnotify_success false\n");
  EXPECT_EQ(decoded(pack_lazy_pages_check()), "type FEATURE_CHECK\nfeatures lazy_pages\n");
  EXPECT_EQ(decoded(pack_version_request()), "type VERSION\n");
}

TEST(CriuRpc, GarbageIsNotAResponse) {
  SKIP_WITHOUT_CRIU();
  const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
  EXPECT_FALSE(unpack_response(junk, sizeof(junk)));
  EXPECT_FALSE(describe_packed_request(std::vector<uint8_t>(junk, junk + sizeof(junk))));
}

// runc's error text names the request type as rpc.proto does.
TEST(CriuRpc, RequestTypeNamesAreRpcProtos) {
  SKIP_WITHOUT_CRIU();
  EXPECT_STREQ(request_type_name(Kind::kDump), "DUMP");
  EXPECT_STREQ(request_type_name(Kind::kPreDump), "PRE_DUMP");
  EXPECT_STREQ(request_type_name(Kind::kRestore), "RESTORE");
}

}  // namespace
}  // namespace berth::container::criu
