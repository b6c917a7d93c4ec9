// The pooled random source of ids, lease tokens and nonces: the shape of its
// hex, draws past one pool, threads and forked children that never repeat
// each other's bytes.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/random_bytes.h"

namespace runledger::testing {
namespace {

TEST(RandomBytes, HexHasTwoLowercaseDigitsPerByte) {
  const std::string h = random_hex(16);
  ASSERT_EQ(h.size(), 32U);
  for (const char c : h) EXPECT_TRUE(std::isdigit(c) || (c >= 'a' && c <= 'f')) << h;
  EXPECT_EQ(random_hex(0), "");
  EXPECT_THROW(random_hex(65), std::invalid_argument);
}

TEST(RandomBytes, DrawsNeverRepeatWithinOrAcrossPools) {
  // 3.5 pools' worth in 16-byte tokens: a pool handed out twice, or a
  // refill that returned the same bytes, would repeat one.
  std::set<std::string> seen;
  for (size_t i = 0; i < kRandomPoolBytes * 7 / 2 / 16; ++i) {
    EXPECT_TRUE(seen.insert(random_hex(16)).second) << "draw " << i;
  }
  std::vector<unsigned char> big(3 * kRandomPoolBytes + 5);
  random_bytes(big);
  std::set<unsigned char> distinct(big.begin(), big.end());
  EXPECT_GT(distinct.size(), 200U);  // 12 KiB of uniform bytes hold nearly all 256
}

TEST(RandomBytes, ThreadsDrawDifferentBytes) {
  std::array<std::string, 4> drawn;
  std::vector<std::thread> threads;
  for (auto& d : drawn) threads.emplace_back([&d] { d = random_hex(32); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(std::set<std::string>(drawn.begin(), drawn.end()).size(), drawn.size());
}

TEST(RandomBytes, AForkedChildDoesNotRepeatItsParentsPool) {
  (void)random_hex(1);  // the parent's pool is full of bytes not handed out yet
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string h = random_hex(32);
    const bool written = write(pipe_fds[1], h.data(), h.size()) == static_cast<ssize_t>(h.size());
    _exit(written ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::string from_child(64, '\0');
  ASSERT_EQ(read(pipe_fds[0], from_child.data(), from_child.size()), 64);
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_NE(from_child, random_hex(32));
}

}  // namespace
}  // namespace runledger::testing
