// Helpers of the host-trouble tests: berth under any state root, a size-limited tmpfs that
// puts a state root in trouble (read-only, full), a second running container that must come
// through another's trouble untouched, and what a clear failure is.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>

#include "reliability/fixture.h"

namespace berth::test {

inline std::string read_text(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline CmdResult berth_at(const std::string& root, const std::vector<std::string>& args, int timeout_s = 30) {
  std::vector<std::string> argv = {berth_binary(), "--root", root};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_cmd(argv, "", timeout_s);
}

// A failure as runc reports one: exit 1, and one line on stderr that names the cause.
inline void expect_clear_failure(const CmdResult& r, const std::string& cause, const std::string& what) {
  EXPECT_EQ(r.code, 1) << what << ": " << r.err;
  EXPECT_NE(r.err.find(cause), std::string::npos) << what << ": " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": not one line: " << r.err;
}

// A tmpfs of `size` on a fresh directory under /tmp, unmounted (lazily) at the end.
class TmpfsDir {
 public:
  explicit TmpfsDir(const std::string& size) : dir_("berth-reltmpfs") {
    mounted_ = ::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, ("size=" + size + ",mode=0700").c_str()) == 0;
  }
  ~TmpfsDir() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  const std::string& path() const { return dir_.path(); }
  bool mounted() const { return mounted_; }
  bool set_readonly(bool ro) {
    return ::mount(nullptr, dir_.path().c_str(), nullptr, MS_REMOUNT | (ro ? MS_RDONLY : 0), nullptr) == 0;
  }

 private:
  TempDir dir_;
  bool mounted_ = false;
};

// A second container, created and started before a test's trouble: afterwards its state.json
// is byte for byte what it was, `state` says running, and its init is alive.
class Bystander {
 public:
  static constexpr const char* kId = "bystander";
  Bystander(RelEnv& env, std::string root) : root_(std::move(root)) {
    std::string bundle = env.bundle(kId, {"sleep", "300"});
    started_ = berth_at(root_, {"create", "--bundle", bundle, kId}).code == 0 && berth_at(root_, {"start", kId}).code == 0;
    record_ = read_text(record_path());
    std::smatch m;
    static const std::regex kPid("\"pid\":\\s*([0-9]+)");
    if (std::regex_search(record_, m, kPid)) pid_ = static_cast<pid_t>(std::stoi(m[1]));
  }
  Bystander(const Bystander&) = delete;
  bool started() const { return started_ && pid_ > 0; }
  void expect_untouched(const std::string& when) const {
    EXPECT_EQ(read_text(record_path()), record_) << when << ": the bystander's state.json changed";
    auto st = berth_at(root_, {"state", kId});
    EXPECT_EQ(st.code, 0) << when << ": " << st.err;
    EXPECT_NE(st.out.find("\"status\": \"running\""), std::string::npos) << when << ": " << st.out;
    EXPECT_EQ(::kill(pid_, 0), 0) << when << ": the bystander's init is gone";
  }
  // A test that stopped early (a failed ASSERT) still takes its bystander down.
  ~Bystander() {
    if (!removed_) berth_at(root_, {"delete", "--force", kId});
  }
  void remove() {
    auto r = berth_at(root_, {"delete", "--force", kId});
    EXPECT_EQ(r.code, 0) << r.err;
    removed_ = true;
  }

 private:
  std::string record_path() const { return root_ + "/" + kId + "/state.json"; }
  std::string root_;
  std::string record_;
  pid_t pid_ = 0;
  bool started_ = false;
  bool removed_ = false;
};

}  // namespace berth::test
