// SHA-256 (FIPS 180-4), small and dependency-free: berth hashes cache keys and checks cache
// files with it (src/seccomp/cache.cc). Not constant-time; never use it for secrets.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace berth {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void update(const void* data, size_t len);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Pads and returns the digest; the object must not be updated afterwards.
  Digest finish();

  static Digest digest(std::string_view s);
  static std::string hex(const Digest& d);  // lower-case, 64 characters

 private:
  void block(const uint8_t* p);

  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buffered_ = 0;
  uint64_t total_ = 0;  // bytes
};

}  // namespace berth
