// SHA-256 (util/sha256) against the FIPS 180-2 / NIST example vectors.
#include "util/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace berth {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256::hex(Sha256::digest("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::hex(Sha256::digest("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::hex(Sha256::digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256::hex(Sha256::digest("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnop"
                                       "qklmnopqrlmnopqrsmnopqrstnopqrstu")),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, MillionAsInUnevenPieces) {
  // Pieces of 1..127 bytes cross the 64-byte block boundary at every offset.
  std::string chunk(127, 'a');
  Sha256 h;
  size_t left = 1000000;
  for (size_t n = 1; left > 0; n = n % 127 + 1) {
    size_t take = std::min(n, left);
    h.update(chunk.data(), take);
    left -= take;
  }
  EXPECT_EQ(Sha256::hex(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingEdges) {
  // 55, 56 and 64 bytes: the length field fits, just does not fit, and a whole block.
  EXPECT_EQ(Sha256::hex(Sha256::digest(std::string(55, 'a'))),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256::hex(Sha256::digest(std::string(56, 'a'))),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256::hex(Sha256::digest(std::string(64, 'a'))),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

}  // namespace
}  // namespace berth
