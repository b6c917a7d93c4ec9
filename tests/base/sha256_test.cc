// SHA-256 of the hash chain and of stored lease tokens: the FIPS 180-2 test
// vectors, from several threads at once (each thread keeps its own context).
#include <cctype>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/sha256.h"

namespace runledger::testing {
namespace {

TEST(Sha256, MatchesTheStandardTestVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, EqualsHexAgreesWithComparingToHex) {
  const Hash h = sha256("abc");
  const std::string hex = to_hex(h);
  EXPECT_TRUE(equals_hex(h, hex));
  EXPECT_FALSE(equals_hex(h, ""));
  EXPECT_FALSE(equals_hex(h, hex.substr(0, 63)));
  EXPECT_FALSE(equals_hex(h, hex + "0"));
  // Upper case is not how tokens are stored, so it is not equal.
  std::string upper = hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_NE(upper, hex);
  EXPECT_FALSE(equals_hex(h, upper));
  // Any one digit changed, at any place, is a mismatch.
  for (size_t i = 0; i < hex.size(); ++i) {
    std::string other = hex;
    other[i] = other[i] == '0' ? '1' : '0';
    EXPECT_FALSE(equals_hex(h, other)) << "digit " << i;
  }
}

TEST(Sha256, ThreadsHashingAtOnceEachGetTheRightDigest) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 20'000;
  const std::string want = sha256_hex("abc");
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) wrong[t] += sha256_hex("abc") != want;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace runledger::testing
