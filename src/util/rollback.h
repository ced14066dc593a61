// Rollback: undo steps pushed as an operation proceeds (remove the state dir, rmdir the
// cgroup, kill the init), run in reverse order unless commit() is reached. This is how a
// failed create leaves nothing behind.
#pragma once

#include <functional>
#include <utility>
#include <vector>

namespace berth {

class Rollback {
 public:
  Rollback() = default;
  Rollback(const Rollback&) = delete;
  Rollback& operator=(const Rollback&) = delete;
  ~Rollback() { run(); }

  void push(std::function<void()> undo) { steps_.push_back(std::move(undo)); }
  void commit() { steps_.clear(); }
  void run() {
    while (!steps_.empty()) {
      auto step = std::move(steps_.back());
      steps_.pop_back();
      step();
    }
  }
  size_t size() const { return steps_.size(); }

 private:
  std::vector<std::function<void()>> steps_;
};

}  // namespace berth
