// FaultyStore: injected write failures refuse appends and write nothing;
// everything else reaches the real store.
#include "tests/support/faulty_store.h"

#include <gtest/gtest.h>

#include "tests/events/store_test_support.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

TEST(FaultyStore, FailsTheNextAppendsThenLetsThemThrough) {
  TempDir dir;
  FaultyStore store(open_store(dir.path()));
  LogBuilder log;
  store.fail_next_appends(2);
  AppendBatch b = log.batch({"job/a"}, 3);
  EXPECT_EQ(store.append(b).code(), Status::Code::kIoError);
  EXPECT_EQ(store.append(b).code(), Status::Code::kIoError);
  EXPECT_EQ(store.last_seq(), 0u);
  EXPECT_TRUE(all_events(store).empty());
  EXPECT_TRUE(store.append(b).ok());
  EXPECT_EQ(store.last_seq(), 3u);
  EXPECT_EQ(store.failed_appends(), 2);
}

TEST(FaultyStore, FailsEveryAppendWhileTheDiskIsFull) {
  TempDir dir;
  auto real = open_store(dir.path());
  FaultyStore store(real.get());
  LogBuilder log;
  AppendBatch b = log.batch({"job/a"}, 1);
  store.fail_all_appends(true);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(store.append(b).code(), Status::Code::kIoError);
  store.fail_all_appends(false);
  EXPECT_TRUE(store.append(b).ok());
  EXPECT_EQ(real->last_seq(), 1u);
  uint32_t version = 0;
  ASSERT_TRUE(store.stream_version("job/a", &version).ok());
  EXPECT_EQ(version, 1u);
}

}  // namespace
}  // namespace runledger::testing
