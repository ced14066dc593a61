// Where berth's processes land in the v1 hierarchies, now that they move themselves there
// (tasks ← 0 on fds the parent opened): the init of create + start, an exec'd process and
// the direct init of `run` are in the container's cgroup in every hierarchy berth made one
// in (and in the caller's in the others, as before), the pids limit counts them (N
// processes fit, the next fork fails), and no runtime process is left in the caller's
// cgroup. The test process runs from a cgroup of its own in every hierarchy, so that its
// tasks are only the test's.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <set>

#include "support/exec_helpers.h"

namespace berth::test {
namespace {

// hierarchy directory under /sys/fs/cgroup ("unified" for the 0:: line) → the path that
// /proc/<pid>/cgroup shows there.
std::map<std::string, std::string> cgroups_of(const std::string& pid) {
  std::map<std::string, std::string> out;
  std::istringstream in(read_text("/proc/" + pid + "/cgroup"));
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrls = line.substr(a + 1, b - a - 1);
    if (ctrls.rfind("name=", 0) == 0) ctrls = ctrls.substr(5);
    if (ctrls.empty()) ctrls = "unified";
    if (std::filesystem::is_directory("/sys/fs/cgroup/" + ctrls)) out[ctrls] = line.substr(b + 1);
  }
  return out;
}

// A cgroup of ours in every hierarchy where this process is at the root, which it moves
// into for the test's life and leaves at the end. A hierarchy where it is not at the root
// is an arrangement of whoever started the tests (a memory limit on them, say): left as it
// is, and out of the comparison.
class CallerCgroup {
 public:
  CallerCgroup() : name_("/berth-caller-" + std::to_string(::getpid())) {
    for (const auto& [h, path] : cgroups_of("self"))
      if (path == "/") home_[h] = path;
      else elsewhere_[h] = path;
    for (const auto& [h, path] : home_) {
      std::string dir = "/sys/fs/cgroup/" + h + name_;
      ::mkdir(dir.c_str(), 0755);
      if (h == "cpuset")  // a new v1 cpuset takes no task before it has cpus and mems
        for (const char* f : {"cpuset.cpus", "cpuset.mems"})
          write_text(dir + "/" + f, read_text("/sys/fs/cgroup/cpuset/" + std::string(f)));
      write_text(dir + "/cgroup.procs", std::to_string(::getpid()));
    }
  }
  ~CallerCgroup() {
    for (const auto& [h, path] : home_) {
      write_text("/sys/fs/cgroup/" + h + path + "/cgroup.procs", std::to_string(::getpid()));
      ::rmdir(("/sys/fs/cgroup/" + h + name_).c_str());
    }
  }
  // Where a process of ours is in hierarchy h.
  std::string path(const std::string& h) const {
    auto it = elsewhere_.find(h);
    return it == elsewhere_.end() ? name_ : it->second;
  }
  // Every thread in our cgroup, per hierarchy ("h:tid" lines, sorted).
  std::set<std::string> tasks() const {
    std::set<std::string> out;
    for (const auto& [h, path] : home_) {
      std::istringstream in(read_text("/sys/fs/cgroup/" + h + name_ + (h == "unified" ? "/cgroup.threads" : "/tasks")));
      std::string tid;
      while (in >> tid) out.insert(h + ":" + tid);
    }
    return out;
  }

 private:
  std::string name_;
  std::map<std::string, std::string> home_, elsewhere_;
};

// The container's process is in `path` wherever berth made that cgroup, and in the
// caller's cgroup elsewhere (a hierarchy berth does not manage); at least the v1 pids,
// memory and cpu hierarchies are checked.
void expect_placed(const std::string& pid, const std::string& path, const CallerCgroup& caller, const char* who) {
  auto in = cgroups_of(pid);
  ASSERT_FALSE(in.empty()) << who << ": no /proc/" << pid << "/cgroup";
  int v1_checked = 0;
  for (const auto& [h, at] : in) {
    bool made = std::filesystem::is_directory("/sys/fs/cgroup/" + h + path);
    EXPECT_EQ(at, made ? path : caller.path(h)) << who << " in the " << h << " hierarchy";
    if (made && h != "unified") ++v1_checked;
  }
  for (const char* h : {"pids", "memory", "cpu"}) {
    if (std::filesystem::is_directory(std::string("/sys/fs/cgroup/") + h + path)) {
      EXPECT_EQ(in[h], path) << who << " in " << h;
    }
  }
  EXPECT_GE(v1_checked, 3) << who << ": fewer v1 hierarchies than pids, memory and cpu";
}

bool have_v1_hierarchies() { return have_cgroup_v1("pids") && have_cgroup_v1("memory") && have_cgroup_v1("cpu"); }

TEST(CgroupPlacement, InitExecAndDirectRunInTheContainersCgroupNothingLeftInTheCallers) {
  if (!have_v1_hierarchies()) GTEST_SKIP() << "no cgroup v1 pids, memory and cpu hierarchies on this host";
  CallerCgroup caller;
  auto before = caller.tasks();
  ASSERT_FALSE(before.empty()) << "the test process is not in its own cgroup";
  Runtime rt;
  Bundle b;
  b.script("sleep 30");
  b.write();
  const std::string& path = b.spec().linux->cgroups_path;
  std::string init_file = b.path() + "/init.pid";
  auto c = rt({"create", "--bundle", b.path(), "--pid-file", init_file, "p-init"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(caller.tasks(), before) << "a runtime process stayed in the caller's cgroup after create";
  ASSERT_EQ(rt({"start", "p-init"}).code, 0);
  std::string init = std::to_string(std::atoi(read_text(init_file).c_str()));
  expect_placed(init, path, caller, "the init (create + start)");
  std::string exec_file = b.path() + "/exec.pid";
  auto e = rt({"exec", "-d", "--pid-file", exec_file, "p-init", "sleep", "30"});
  ASSERT_EQ(e.code, 0) << e.err;
  expect_placed(std::to_string(std::atoi(read_text(exec_file).c_str())), path, caller, "an exec'd process");
  EXPECT_EQ(caller.tasks(), before) << "a runtime process stayed in the caller's cgroup after exec";
  EXPECT_EQ(rt({"delete", "-f", "p-init"}).code, 0);

  // `run` of a container nothing needs the runtime for until its payload: the direct init.
  Bundle d;
  d.script("sleep 30");
  d.write();
  std::string run_file = d.path() + "/run.pid";
  auto r = rt({"run", "-d", "--pid-file", run_file, "--bundle", d.path(), "p-run"});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_placed(std::to_string(std::atoi(read_text(run_file).c_str())), d.spec().linux->cgroups_path, caller,
                "the init of run -d");
  EXPECT_EQ(caller.tasks(), before) << "a runtime process stayed in the caller's cgroup after run";
  EXPECT_EQ(rt({"delete", "-f", "p-run"}).code, 0);
}

// busybox sh exits at the first fork the pids controller refuses ("can't fork"): the
// number of "started" lines is the number of sleeps that fit beside the shell.
const char* const kForkUntilRefused = "for i in 1 2 3 4 5 6 7 8; do sleep 30 & echo started $i; done";

int started(const std::string& out) {
  int n = 0;
  for (size_t at = out.find("started "); at != std::string::npos; at = out.find("started ", at + 1)) ++n;
  return n;
}

TEST(CgroupPlacement, PidsLimitCountsTheInitAndTheExecdProcess) {
  if (!have_cgroup_v1("pids")) GTEST_SKIP() << "no cgroup v1 pids hierarchy on this host";
  CallerCgroup caller;
  Runtime rt;
  // run (the direct init): pids.max = 4 holds the shell and 3 sleeps; the 4th is refused.
  {
    Bundle b;
    if (!b.spec().linux->resources) b.spec().linux->resources.emplace();
    b.spec().linux->resources->pids = spec::Pids{4};
    b.script(kForkUntilRefused);
    b.write();
    auto r = rt({"run", "--bundle", b.path(), "p-pids-run"});
    EXPECT_EQ(started(r.out), 3) << r.out << r.err;
    EXPECT_NE(r.code, 0) << "the shell's fork was refused: " << r.out;
    (void)rt({"delete", "-f", "p-pids-run"});
  }
  // create + start (the classic init), then exec into it: the sleeping init counts 1, the
  // exec'd shell 1, so 2 sleeps fit in 4.
  Bundle b;
  if (!b.spec().linux->resources) b.spec().linux->resources.emplace();
  b.spec().linux->resources->pids = spec::Pids{4};
  b.script("sleep 30");
  b.write();
  ASSERT_EQ(rt({"create", "--bundle", b.path(), "p-pids"}).code, 0);
  ASSERT_EQ(rt({"start", "p-pids"}).code, 0);
  auto e = rt({"exec", "p-pids", "sh", "-c", kForkUntilRefused});
  EXPECT_EQ(started(e.out), 2) << e.out << e.err;
  EXPECT_NE(e.code, 0) << e.out;
  EXPECT_EQ(rt({"delete", "-f", "p-pids"}).code, 0);
}

}  // namespace
}  // namespace berth::test
