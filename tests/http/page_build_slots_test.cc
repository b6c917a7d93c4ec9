// PageBuildSlot: at most count() page builds hold a slot at once, and one
// more waits until a holder lets go.
#include "http/page_build_slots.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace runledger::http {
namespace {

TEST(PageBuildSlots, EveryCoreCanBuild) {
  EXPECT_GE(PageBuildSlot::count(), 2u);
  EXPECT_GE(PageBuildSlot::count(), std::thread::hardware_concurrency());
}

TEST(PageBuildSlots, ABuildBeyondTheSlotsWaitsForOneToBeLetGo) {
  std::vector<std::optional<PageBuildSlot>> held(PageBuildSlot::count());
  for (auto& slot : held) slot.emplace();  // every slot taken, none waited
  std::atomic<bool> built{false};
  std::thread one_more([&] {
    const PageBuildSlot slot;
    built = true;
  });
  // Given every slot held, the build beyond them does not start, however
  // long it is given.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(built) << "a build ran beyond the slots";
  // When one holder lets go, it does.
  held.front().reset();
  one_more.join();
  EXPECT_TRUE(built);
}

}  // namespace
}  // namespace runledger::http
