// FakeTree: a temporary cgroup host for unit tests (see fake_tree.h).
#include "unit/cgroups/fake_tree.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/strings.h"

namespace berth::cgroups::testing {

namespace fs = std::filesystem;

std::vector<std::string> FakeTree::default_v1_mounts() {
  return {"cpuset", "cpu,cpuacct", "memory", "devices", "freezer", "blkio", "pids",
          "hugetlb", "net_cls,net_prio", "rdma", "perf_event", "name=systemd"};
}

static std::string mount_dir(const std::string& m) {
  return str::starts_with(m, "name=") ? m.substr(5) : m;
}

FakeTree::FakeTree(Layout layout, std::vector<std::string> v1_mounts)
    : layout_(layout), mounts_(std::move(v1_mounts)) {
  char tmpl[] = "/tmp/berth-cgtree-XXXXXX";
  root_ = ::mkdtemp(tmpl);
  std::ostringstream mi, self;
  mi << "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n";
  int id = 32, hier = 1;
  if (layout != Layout::kV2) {
    for (const auto& m : mounts_) {
      mi << id << " 31 0:" << id << " / /sys/fs/cgroup/" << mount_dir(m)
         << " rw,relatime - cgroup cgroup rw," << m << "\n";
      ++id;
      fs::create_directories(root_ + "/sys/fs/cgroup/" + mount_dir(m));
      // The caller sits in /user.slice of every hierarchy.
      self << hier++ << ":" << m << ":/user.slice\n";
    }
  }
  if (layout == Layout::kV2) {
    mi.str("");
    mi << "31 23 0:28 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
    self << "0::/user.slice/session-1.scope\n";
  } else if (layout == Layout::kHybrid) {
    mi << id << " 31 0:40 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
    self << "0::/user.slice\n";
  }
  fs::create_directories(root_ + "/proc/self");
  fs::create_directories(root_ + unified_mount());
  write("proc/self/mountinfo", mi.str());
  write("proc/self/cgroup", self.str());
  if (layout != Layout::kV2) {
    // The root cpuset is what a new cgroup inherits.
    if (exists("sys/fs/cgroup/cpuset")) {
      write("sys/fs/cgroup/cpuset/cpuset.cpus", "0-3\n");
      write("sys/fs/cgroup/cpuset/cpuset.mems", "0\n");
    }
  } else {
    write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma\n");
    write("sys/fs/cgroup/cgroup.subtree_control", "");
  }
}

FakeTree::~FakeTree() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::string FakeTree::unified_mount() const {
  if (layout_ == Layout::kV2) return "/sys/fs/cgroup";
  if (layout_ == Layout::kHybrid) return "/sys/fs/cgroup/unified";
  return "/sys/fs/cgroup";
}

Host FakeTree::host() const { return probe(root_).value(); }

void FakeTree::write(const std::string& rel, const std::string& content) const {
  fs::create_directories(fs::path(root_ + "/" + rel).parent_path());
  std::ofstream(root_ + "/" + rel, std::ios::trunc) << content;
}

std::string FakeTree::read(const std::string& rel) const {
  std::ifstream in(root_ + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

bool FakeTree::exists(const std::string& rel) const { return fs::exists(root_ + "/" + rel); }

std::string FakeTree::file(const std::string& mount, const std::string& path,
                           const std::string& name) const {
  std::string base = mount.empty() ? unified_mount().substr(1) : "sys/fs/cgroup/" + mount_dir(mount);
  std::string p = path.empty() || path == "/" ? "" : (path.front() == '/' ? path : "/" + path);
  return base + p + "/" + name;
}

void FakeTree::add_cgroup(const std::string& path) {
  // Every level gets the files the kernel would give it (unless it already has them).
  std::string level;
  for (const auto& part : str::split_nonempty(path, '/')) {
    level += "/" + part;
    if (layout_ != Layout::kV2) {
      for (const auto& m : mounts_) {
        std::string dir = file(m, level, "");
        dir.pop_back();
        if (!exists(dir + "/cgroup.procs")) add_v1_files(m, dir);
      }
    }
    if (layout_ == Layout::kV1) continue;
    std::string dir = file("", level, "");
    dir.pop_back();
    if (exists(dir + "/cgroup.procs")) continue;
    if (layout_ == Layout::kV2) {
      add_v2_files(dir);
    } else {
      for (const char* f : {"cgroup.procs", "cgroup.events", "cgroup.freeze", "cgroup.controllers",
                            "cgroup.max.depth"})
        write(dir + "/" + f, "");
    }
  }
}

void FakeTree::add_v1_files(const std::string& mount, const std::string& dir) {
  auto w = [&](const std::string& f, const std::string& v) { write(dir + "/" + f, v); };
  w("cgroup.procs", "");
  w("tasks", "");
  for (const auto& c : str::split(mount, ',')) {
    if (c == "cpu") {
      w("cpu.shares", "1024\n"); w("cpu.cfs_period_us", "100000\n"); w("cpu.cfs_quota_us", "-1\n");
      w("cpu.cfs_burst_us", "0\n"); w("cpu.rt_period_us", "1000000\n"); w("cpu.rt_runtime_us", "0\n");
      w("cpu.idle", "0\n"); w("cpu.stat", "nr_periods 10\nnr_throttled 2\nthrottled_time 3000\n");
    } else if (c == "cpuacct") {
      w("cpuacct.usage", "5000\n"); w("cpuacct.usage_percpu", "3000 2000 \n");
      w("cpuacct.usage_all", "cpu user system\n0 2000 1000\n1 1500 500\n");
      w("cpuacct.stat", "user 3\nsystem 1\n");
    } else if (c == "cpuset") {
      w("cpuset.cpus", "\n"); w("cpuset.mems", "\n"); w("cpuset.cpu_exclusive", "0\n");
      w("cpuset.sched_load_balance", "1\n"); w("cpuset.sched_relax_domain_level", "-1\n");
    } else if (c == "memory") {
      for (const char* f : {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.kmem.limit_in_bytes",
                            "memory.kmem.tcp.limit_in_bytes", "memory.soft_limit_in_bytes"})
        w(f, "9223372036854771712\n");
      w("memory.swappiness", "60\n"); w("memory.use_hierarchy", "1\n");
      w("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
      w("memory.usage_in_bytes", "4096\n"); w("memory.max_usage_in_bytes", "8192\n"); w("memory.failcnt", "1\n");
      w("memory.memsw.usage_in_bytes", "4096\n"); w("memory.memsw.max_usage_in_bytes", "8192\n");
      w("memory.memsw.failcnt", "0\n"); w("memory.kmem.usage_in_bytes", "100\n");
      w("memory.stat", "cache 1234\nrss 4096\ntotal_cache 1234\n"); w("cgroup.event_control", "");
    } else if (c == "devices") {
      w("devices.allow", ""); w("devices.deny", ""); w("devices.list", "a *:* rwm\n");
    } else if (c == "freezer") {
      w("freezer.state", "THAWED\n");
    } else if (c == "blkio") {
      w("blkio.weight", "500\n"); w("blkio.leaf_weight", "500\n"); w("blkio.weight_device", "");
      w("blkio.leaf_weight_device", "");
      for (const char* f : {"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
                            "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"})
        w(f, "");
      w("blkio.throttle.io_service_bytes_recursive", "8:0 Read 100\n8:0 Write 200\nTotal 300\n");
      w("blkio.throttle.io_serviced_recursive", "8:0 Read 1\n8:0 Write 2\nTotal 3\n");
    } else if (c == "pids") {
      w("pids.max", "max\n"); w("pids.current", "3\n");
    } else if (c == "hugetlb") {
      for (const char* s : {"2MB", "1GB"}) {
        std::string b = std::string("hugetlb.") + s;
        w(b + ".limit_in_bytes", "9223372036854771712\n"); w(b + ".usage_in_bytes", "0\n");
        w(b + ".max_usage_in_bytes", "0\n"); w(b + ".failcnt", "0\n");
      }
    } else if (c == "net_cls") {
      w("net_cls.classid", "0\n");
    } else if (c == "net_prio") {
      w("net_prio.ifpriomap", "lo 0\n");
    } else if (c == "rdma") {
      w("rdma.max", ""); w("rdma.current", "");
    }
  }
}

void FakeTree::add_v2_files(const std::string& dir) {
  auto w = [&](const std::string& f, const std::string& v) { write(dir + "/" + f, v); };
  for (const char* f : {"cgroup.procs", "cgroup.subtree_control", "cgroup.freeze", "io.max", "rdma.max"}) w(f, "");
  w("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma\n");
  w("cgroup.events", "populated 1\nfrozen 0\n");
  w("cpu.weight", "100\n"); w("cpu.max", "max 100000\n"); w("cpu.max.burst", "0\n"); w("cpu.idle", "0\n");
  w("cpu.stat", "usage_usec 7\nuser_usec 5\nsystem_usec 2\nnr_periods 4\nnr_throttled 1\nthrottled_usec 9\n");
  w("cpu.pressure", "some avg10=0.50 avg60=0.00 avg300=0.00 total=12\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=3\n");
  w("cpuset.cpus", "\n"); w("cpuset.mems", "\n"); w("cpuset.cpus.effective", "0-1\n"); w("cpuset.mems.effective", "0\n");
  w("memory.max", "max\n"); w("memory.swap.max", "max\n"); w("memory.low", "0\n"); w("memory.current", "4096\n");
  w("memory.peak", "8192\n"); w("memory.swap.current", "0\n");
  w("memory.stat", "anon 4096\nfile 1234\n");
  w("memory.events", "low 0\nhigh 0\nmax 0\noom 1\noom_kill 1\n");
  w("pids.max", "max\n"); w("pids.current", "2\n");
  w("io.weight", "default 100\n"); w("io.stat", "8:0 rbytes=100 wbytes=200 rios=1 wios=2 dbytes=0 dios=0\n");
  w("hugetlb.2MB.max", "max\n"); w("hugetlb.2MB.current", "0\n"); w("hugetlb.2MB.events", "max 0\n");
}

}  // namespace berth::cgroups::testing

#include "unit/cgroups/fixture.h"

namespace berth::cgroups::testing {

void CgroupFixture::remove_file(const std::string& mount, const std::string& name) const {
  std::filesystem::remove(tree.root() + "/" + tree.file(mount, "/berth/c1", name));
}

}  // namespace berth::cgroups::testing
