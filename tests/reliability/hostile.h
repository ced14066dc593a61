// A hostile container against `berth exec`: the static helper (hostile.c) runs as the
// container's process and attacks every berth process it can see in the container's pid
// namespace (the exec tenant, until it execs the command), while the test runs `berth exec`
// again and again until the helper has met enough of them. What it reports comes back as
// lines ("seen 12", "denied 12 ptrace 1", "leaked 12 environ canary", ...; see hostile.c).
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "reliability/trouble.h"

namespace berth::test {

struct HostileReport {
  std::vector<std::string> lines;
  int execs = 0;  // `berth exec` runs made
  // Lines starting with `head`, and containing `part` if given.
  int count(const std::string& head, const std::string& part = "") const {
    int n = 0;
    for (const auto& l : lines) n += l.rfind(head, 0) == 0 && l.find(part) != std::string::npos;
    return n;
  }
  std::string text() const {
    std::string t;
    for (const auto& l : lines) t += l + "\n";
    return t;
  }
};

inline std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

// The environment of every `berth exec`: were the runtime's environ readable, this would show.
inline const char* const kCanary = "BERTH_HOSTILE_CANARY=exec-runtime-secret";

inline bool wait_for_line(const std::string& path, const std::string& line, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    for (const auto& l : lines_of(path))
      if (l == line) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Runs the helper in `mode` as container `id`; `berth exec` until it has seen `want` berth
// processes (at most 300 execs).
inline HostileReport hostile_run(RelEnv& env, const std::string& mode, const std::string& id, int want = 5) {
  namespace fs = std::filesystem;
  fs::copy_file(BERTH_HOSTILE_HELPER, env.rootfs() + "/hostile", fs::copy_options::overwrite_existing);
  std::string out = "/tmp/" + id + ".out", stop = "/tmp/" + id + ".stop";
  std::string bundle = env.bundle(id, {"/hostile", mode, out, stop, "120"});
  const Runtime& rt = env.rt();
  HostileReport r;
  if (rt({"create", "--bundle", bundle, id}).code != 0 || rt({"start", id}).code != 0) return r;
  if (!wait_for_line(env.rootfs() + out, "ready", 10000)) return r;
  std::vector<std::string> exec = {berth_binary(), "--root", rt.root(), "exec", id, "true"};
  while (r.execs < 300) {
    run_cmd(exec, "", 30, {kCanary});
    ++r.execs;
    int seen = 0;
    for (const auto& l : lines_of(env.rootfs() + out)) seen += l.rfind("seen ", 0) == 0;
    if (seen >= want) break;
  }
  std::ofstream(env.rootfs() + stop) << "stop\n";
  wait_for_line(env.rootfs() + out, "done", 10000);
  rt({"delete", "--force", id});
  r.lines = lines_of(env.rootfs() + out);
  return r;
}

}  // namespace berth::test
