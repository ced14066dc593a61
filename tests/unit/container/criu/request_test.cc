// The CRIU request berth sends for checkpoint, pre-dump and restore (runc's options,
// external mounts and namespaces), descriptors.json, the GPU/RDMA refusal and CRIU's error
// line (src/container/criu/request.cc), without CRIU.
#include "container/criu/request.h"

#include <gtest/gtest.h>
#include <sched.h>

namespace berth::container::criu {
namespace {

spec::Spec config() {
  spec::Spec s = spec::default_spec(false);
  s.mounts.push_back({"/data", "bind", "/srv/data", {"rbind", "ro"}, {}, {}});
  s.mounts.push_back({"/etc/app.conf", "none", "conf/app.conf", {"bind"}, {}, {}});
  s.linux->masked_paths = {"/proc/kcore", "/proc/acpi"};
  s.linux->devices = {{"/dev/fuse", "c", 10, 229, {}, {}, {}}};
  return s;
}

DumpFacts v2_facts() {
  DumpFacts f;
  f.pid = 4242;
  f.rootfs = "/b/rootfs";
  f.cgroup_paths = {{"", "/sys/fs/cgroup/berth/c1"}};
  f.masked_dirs = {"/proc/acpi"};
  return f;
}

TEST(CriuRequest, DumpMapsRuncsOptionsAndExternalMounts) {
  CheckpointOptions o;
  o.image_path = "/img";
  o.work_path = "/work";
  o.leave_running = true;
  o.tcp_established = true;
  o.ext_unix_sk = true;
  o.shell_job = true;
  o.file_locks = true;
  o.auto_dedup = true;
  o.manage_cgroups_mode = "strict";
  o.parent_path = "../pre";
  auto r = dump_request(o, config(), v2_facts());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(describe(*r),
            "type dump\n"
            "pid 4242\n"
            "images_dir /img\n"
            "work_dir /work\n"
            "parent_img ../pre\n"
            "root /b/rootfs\n"
            "log_file dump.log\n"
            "freeze_cgroup /sys/fs/cgroup/berth/c1\n"
            "leave_running\ntcp_established\next_unix_sk\nshell_job\nfile_locks\nauto_dedup\n"
            "orphan_pts_master\nmanage_cgroups\n"
            "manage_cgroups_mode strict\n"
            "empty_ns 1073741824\n"  // CLONE_NEWNET, always (runc)
            "config_file /etc/criu/runc.conf\n"  // runc's default: no org.criu.config
            "ext_mount /data:/data\n"
            "ext_mount /dev/fuse:/dev/fuse\n"
            "ext_mount /etc/app.conf:/etc/app.conf\n"
            "ext_mount /proc/kcore:/dev/null\n"
            "ext_mount /sys/fs/cgroup:/sys/fs/cgroup\n");
}

TEST(CriuRequest, PreDumpTracksMemoryAndKeepsRunning) {
  CheckpointOptions o;
  o.image_path = "/img";
  o.pre_dump = true;
  auto r = dump_request(o, config(), v2_facts());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, Kind::kPreDump);
  EXPECT_TRUE(r->track_mem);
  EXPECT_FALSE(r->leave_running);  // CRIU's pre-dump never stops the tasks
}

TEST(CriuRequest, JoinedNamespacesAreExternal) {
  spec::Spec s = config();
  for (auto& n : s.linux->namespaces)
    if (n.type == "network") n.path = "/run/netns/x";
  DumpFacts f = v2_facts();
  f.joined_ns_inodes = {{"network", 4026532000ull}, {"pid", 4026531836ull}};
  auto r = dump_request(CheckpointOptions{}, s, f);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->externals, (std::vector<std::string>{"net[4026532000]:extRootNetNS", "pid[4026531836]:extRootPidNS"}));
}

TEST(CriuRequest, CgroupV1HierarchiesAreOneBindEach) {
  DumpFacts f = v2_facts();
  f.cgroup_paths = {{"", "/sys/fs/cgroup/unified/c1"},
                    {"cpu", "/sys/fs/cgroup/cpu,cpuacct/c1"},
                    {"cpuacct", "/sys/fs/cgroup/cpu,cpuacct/c1"},
                    {"memory", "/sys/fs/cgroup/memory/c1"},
                    {"freezer", "/sys/fs/cgroup/freezer/c1"}};
  auto r = dump_request(CheckpointOptions{}, config(), f);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->freeze_cgroup, "/sys/fs/cgroup/freezer/c1");
  std::string d = describe(*r);
  for (const char* m : {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/freezer", "/sys/fs/cgroup/unified"})
    EXPECT_NE(d.find(std::string("ext_mount ") + m + ":" + m + "\n"), std::string::npos) << m << " in\n" << d;
  EXPECT_EQ(d.find("ext_mount /sys/fs/cgroup:"), std::string::npos);
}

TEST(CriuRequest, CgroupNamespaceMountsAreCriusOwn) {
  spec::Spec s = config();
  s.linux->namespaces.push_back({"cgroup", ""});
  auto r = dump_request(CheckpointOptions{}, s, v2_facts());
  ASSERT_TRUE(r);
  EXPECT_EQ(describe(*r).find("ext_mount /sys/fs/cgroup"), std::string::npos) << describe(*r);
}

TEST(CriuRequest, FlagsRefusedWithRuncsTexts) {
  CheckpointOptions o;
  o.manage_cgroups_mode = "loose";
  auto r = dump_request(o, config(), v2_facts());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "Invalid manage cgroups mode");
  o.manage_cgroups_mode = "";
  o.empty_ns = {"network", "ipc"};
  r = dump_request(o, config(), v2_facts());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "namespace \"ipc\" is not supported");
  o.empty_ns = {"network"};
  r = dump_request(o, config(), v2_facts());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->empty_ns, static_cast<uint32_t>(CLONE_NEWNET));
  o.page_server = "10.0.0.1";
  r = dump_request(o, config(), v2_facts());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "Use --page-server ADDRESS:PORT to specify page server");
  o.page_server = "10.0.0.1:http";
  EXPECT_EQ(dump_request(o, config(), v2_facts()).error().message(), "Invalid port number");
  o.page_server = "10.0.0.1:2701";
  r = dump_request(o, config(), v2_facts());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->page_server_address, "10.0.0.1");
  EXPECT_EQ(r->page_server_port, 2701);
}

TEST(CriuRequest, NetworkNamespaceContentsAreNeverSavedAsInRunc) {
  // runc sets CRIU's empty_ns for the network always ("runc doesn't manage network devices"):
  // a namespace of the container's own is left empty at dump and made empty at restore.
  spec::Spec s = config();
  s.linux->namespaces.push_back({"network", ""});
  auto plain = dump_request(CheckpointOptions{}, s, v2_facts());
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->empty_ns, static_cast<uint32_t>(CLONE_NEWNET));
  EXPECT_TRUE(plain->externals.empty()) << describe(*plain);
  CheckpointOptions o;
  o.empty_ns = {"network"};
  auto r = dump_request(o, s, v2_facts());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->empty_ns, static_cast<uint32_t>(CLONE_NEWNET));
  EXPECT_TRUE(r->externals.empty()) << describe(*r);
  // A namespace joined by path stays external, under its own inode.
  DumpFacts f = v2_facts();
  f.joined_ns_inodes = {{"network", 4026532000ull}};
  r = dump_request(o, s, f);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->externals, (std::vector<std::string>{"net[4026532000]:extRootNetNS"}));
  auto restore = restore_request(RestoreOptions{}, s, RestoreFacts{});
  ASSERT_TRUE(restore);
  EXPECT_EQ(restore->empty_ns, static_cast<uint32_t>(CLONE_NEWNET));
}

TEST(CriuRequest, RestoreBindsTheNewContainersSources) {
  RestoreOptions o;
  o.image_path = "/img";
  o.tcp_established = true;
  o.manage_cgroups_mode = "soft";
  RestoreFacts f;
  f.root = "/run/berth/c2/criu-root";
  f.bundle = "/b2";
  f.cgroup_paths = {{"", "/sys/fs/cgroup/berth/c2"}};
  f.descriptors = {"/dev/null", "pipe:[1234]", "pipe:[1235]"};
  f.joined_ns_fds = {{"network", 7}};
  f.cg_roots = {{"", "/berth/c2"}};
  auto r = restore_request(o, config(), f);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(describe(*r),
            "type restore\n"
            "images_dir /img\n"
            "root /run/berth/c2/criu-root\n"
            "log_file restore.log\n"
            "tcp_established\nevasive_devices\norphan_pts_master\nmanage_cgroups\n"
            "manage_cgroups_mode soft\n"
            "empty_ns 1073741824\n"
            "config_file /etc/criu/runc.conf\n"
            "ext_mount /data:/srv/data\n"
            "ext_mount /dev/fuse:/dev/fuse\n"
            "ext_mount /dev/null:/dev/null\n"
            "ext_mount /etc/app.conf:/b2/conf/app.conf\n"
            "ext_mount /sys/fs/cgroup:/sys/fs/cgroup/berth/c2\n"
            "inherit_fd extRootNetNS:7\n"
            "inherit_fd pipe:[1234]:1\n"
            "inherit_fd pipe:[1235]:2\n"
            "cg_root unified:/berth/c2\n");
}

// runc's org.criu.config: a file of the config's own; set but empty, no file at all; absent,
// /etc/criu/runc.conf (so a host set up for runc behaves the same). Checkpoint and restore.
TEST(CriuRequest, CriuConfigFileFollowsTheAnnotationAsRunc) {
  spec::Spec s = config();
  s.annotations["org.criu.config"] = "/etc/criu/app.conf";
  auto d = dump_request(CheckpointOptions{}, s, v2_facts());
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(d->config_file, "/etc/criu/app.conf");
  RestoreFacts f;
  f.root = "/run/berth/c2/criu-root";
  auto r = restore_request(RestoreOptions{}, s, f);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->config_file, "/etc/criu/app.conf");
  s.annotations["org.criu.config"] = "";
  d = dump_request(CheckpointOptions{}, s, v2_facts());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->config_file, "");
  EXPECT_EQ(describe(*d).find("config_file"), std::string::npos) << describe(*d);
  s.annotations.erase("org.criu.config");
  r = restore_request(RestoreOptions{}, s, f);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->config_file, "/etc/criu/runc.conf");
}

TEST(CriuRequest, HostileDestinationsStayInsideTheContainer) {
  spec::Spec s = config();
  s.mounts = {{"../../etc", "bind", "/x", {"bind"}, {}, {}}};
  auto r = dump_request(CheckpointOptions{}, s, v2_facts());
  ASSERT_TRUE(r);
  std::string d = describe(*r);
  EXPECT_NE(d.find("ext_mount /etc:/etc\n"), std::string::npos) << d;
  EXPECT_EQ(d.find(".."), std::string::npos) << d;
}

TEST(Descriptors, RoundTripAsRuncWritesThem) {
  std::vector<std::string> fds = {"/dev/null", "pipe:[99]", "/dev/pts/0"};
  EXPECT_EQ(descriptors_json(fds), R"(["/dev/null","pipe:[99]","/dev/pts/0"])");
  auto back = parse_descriptors(descriptors_json(fds));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, fds);
}

TEST(Descriptors, RefusesWhatRuncNeverWrites) {
  EXPECT_FALSE(parse_descriptors(R"({"0":"/dev/null"})"));
  EXPECT_FALSE(parse_descriptors(R"(["/dev/null", 1])"));
  EXPECT_FALSE(parse_descriptors("[\"/dev/null\""));
}

TEST(NativeDevices, GpuAndRdmaContainersAreRefused) {
  EXPECT_EQ(native_device_refusal({"/dev/null", "/dev/fuse", "/dev/pts/ptmx"}), "");
  std::string gpu = native_device_refusal({"/dev/null", "/dev/nvidia0"});
  EXPECT_NE(gpu.find("NVIDIA GPUs (/dev/nvidia0)"), std::string::npos) << gpu;
  EXPECT_NE(native_device_refusal({"dev/../dev/nvidiactl"}).find("/dev/nvidiactl"), std::string::npos);
  std::string rdma = native_device_refusal({"/dev/infiniband/uverbs0"});
  EXPECT_NE(rdma.find("RDMA devices (/dev/infiniband/uverbs0)"), std::string::npos) << rdma;
}

TEST(CriuLog, FirstErrorNamesWhatIsMissing) {
  EXPECT_EQ(first_log_error("(00.1) Version: 3.17.1\n"
                            "(00.2) Error (criu/vdso.c:381): vdso: Unexpected rt vDSO area bounds\n"
                            "(00.3) Error (criu/crtools.c:260): Could not initialize kernel features detection.\n"),
            "vdso: Unexpected rt vDSO area bounds");
  EXPECT_EQ(first_log_error("(01.8) Error (criu/util.c:642): exited, status=1\n"
                            "(01.9) Error (criu/filesystems.c:426): Can't dump tmpfs content\n"),
            "Can't dump tmpfs content");
  EXPECT_EQ(first_log_error("(00.1) Dumping finished successfully\n"), "");
}

}  // namespace
}  // namespace berth::container::criu
