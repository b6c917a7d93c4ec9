// PageBuildSlot: see page_build_slots.h.
#include "http/page_build_slots.h"

#include <algorithm>
#include <semaphore>
#include <thread>

namespace runledger::http {
namespace {

// Beyond any machine's count of cores times kPageBuildsPerCore.
constexpr ptrdiff_t kSlotsMax = 1 << 16;

std::counting_semaphore<kSlotsMax>& slots() {
  static std::counting_semaphore<kSlotsMax> s(static_cast<ptrdiff_t>(PageBuildSlot::count()));
  return s;
}

}  // namespace

size_t PageBuildSlot::count() {
  const size_t cores = std::max<size_t>(1, std::thread::hardware_concurrency());
  return std::min<size_t>(kSlotsMax, std::max<size_t>(2, cores * kPageBuildsPerCore));
}

PageBuildSlot::PageBuildSlot() { slots().acquire(); }

PageBuildSlot::~PageBuildSlot() { slots().release(); }

}  // namespace runledger::http
