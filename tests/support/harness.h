// Test harness for integration tests: runs the real berth binary (and runc, for
// differential cases) against busybox bundles in temporary directories, each test with its
// own state root. Needs root; every test cleans up what it creates.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "berth/spec.h"

namespace berth::test {

struct CmdResult {
  int code = -1;  // exit status, or 128+signal
  std::string out, err;
};

// Runs argv (no shell), feeding `input` on stdin; kills it after timeout_s.
CmdResult run_cmd(const std::vector<std::string>& argv, const std::string& input = "", int timeout_s = 30,
                  const std::vector<std::string>& extra_env = {});

std::string berth_binary();
// The whole content of a host file (empty when it cannot be read).
std::string file_text(const std::string& path);
std::string source_dir();
// runc for the twin tests: $RUNC, else the first of /usr/sbin, /usr/bin, /usr/local/sbin,
// /usr/local/bin that has it ("" when none).
std::string runc_binary();
bool have_runc();
// Whether /sys/fs/cgroup/<controller> is a cgroup v1 hierarchy (hybrid and v1 hosts; a
// v2-only host, Debian 12's default, has none): tests that read v1 files skip without it.
bool have_cgroup_v1(const std::string& controller);

// A temporary directory removed (recursively, unmounting nothing) on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "berth-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A busybox-static bundle: rootfs (copied from a per-run template) + config.json built
// from `spec()` (the default spec with terminal off and sh -c 'true').
class Bundle {
 public:
  Bundle();
  spec::Spec& spec() { return spec_; }
  const std::string& path() const { return dir_.path(); }
  std::string rootfs() const { return dir_.path() + "/rootfs"; }
  // process.args = {"sh", "-c", script}
  Bundle& script(const std::string& script);
  void write() const;

 private:
  TempDir dir_;
  spec::Spec spec_;
};

// A runtime binary with its own state root.
class Runtime {
 public:
  explicit Runtime(std::string binary = berth_binary());
  ~Runtime();  // deletes (force) every container still under the root
  CmdResult operator()(const std::vector<std::string>& args, const std::string& input = "", int timeout_s = 30) const;
  const std::string& root() const { return root_.path(); }
  const std::string& binary() const { return binary_; }

 private:
  std::string binary_;
  TempDir root_;
};

// The lines of /proc/self/mountinfo whose mount point lies under `prefix` (default: every
// test bundle): proof that a test left no mount behind, unperturbed by
// whatever else the host mounts meanwhile.
std::vector<std::string> mount_lines(const std::string& prefix = "/tmp/berth-bundle.");

}  // namespace berth::test
