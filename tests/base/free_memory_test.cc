// Free memory goes back to the system (base/free_memory.h): after a program
// frees much of what it allocated the allocator keeps it resident, and
// return_free_memory_over() / FreeMemoryKeeper give it back. The tests run on
// the C library's malloc (tcmalloc is linked into the two binaries only).
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/free_memory.h"

namespace runledger::testing {
namespace {

constexpr size_t kBlockBytes = 4096;  // under malloc's mmap threshold: heap memory
constexpr size_t kFreedBytes = size_t{192} << 20;
constexpr size_t kGivenBackAtLeast = size_t{128} << 20;

uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0;
  uint64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Allocates and touches kFreedBytes in small blocks, then frees them behind
// a block that stays: the freed memory is not at the heap's top, where
// free() alone would give it back. Returns the block that stays; `peak`
// gets the resident bytes before the frees.
std::unique_ptr<char[]> allocate_and_free_behind_a_kept_block(uint64_t* peak) {
  std::vector<std::unique_ptr<char[]>> blocks(kFreedBytes / kBlockBytes);
  for (auto& b : blocks) {
    b.reset(new char[kBlockBytes]);
    std::memset(b.get(), 1, kBlockBytes);
  }
  auto kept = std::make_unique<char[]>(kBlockBytes);
  *peak = resident_bytes();
  return kept;  // `blocks` are freed here
}

TEST(FreeMemory, KeepsFreedMemoryUntilGivenBack) {
  const uint64_t before = resident_bytes();
  uint64_t peak = 0;
  auto kept = allocate_and_free_behind_a_kept_block(&peak);
  const uint64_t after_free = resident_bytes();
  // The control: freeing alone gives back next to nothing.
  ASSERT_GT(after_free, before + kGivenBackAtLeast);
  EXPECT_GT(after_free + kGivenBackAtLeast, peak);
  EXPECT_GE(heap_figures().free_resident_bytes, kGivenBackAtLeast);

  EXPECT_TRUE(return_free_memory_over(kFreeBytesKept));
  EXPECT_LT(resident_bytes() + kGivenBackAtLeast, after_free);
}

TEST(FreeMemory, LeavesAMarginAlone) {
  auto kept = std::make_unique<char[]>(kBlockBytes);
  // A fresh test process has far less than the margin free.
  ASSERT_LT(heap_figures().free_resident_bytes, kFreeBytesKept);
  EXPECT_FALSE(return_free_memory_over(kFreeBytesKept));
}

TEST(FreeMemoryKeeper, GivesBackOnItsOwn) {
  FreeMemoryKeeper keeper(std::chrono::milliseconds(20));
  const uint64_t before = resident_bytes();
  uint64_t peak = 0;
  auto kept = allocate_and_free_behind_a_kept_block(&peak);
  ASSERT_GT(peak, before + kGivenBackAtLeast);
  // (The keeper may give back while the blocks are being freed.)
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((keeper.releases() == 0 || resident_bytes() + kGivenBackAtLeast >= peak) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_LT(resident_bytes() + kGivenBackAtLeast, peak);
  EXPECT_GE(keeper.releases(), 1u);
}

}  // namespace
}  // namespace runledger::testing
