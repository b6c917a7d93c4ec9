// The records of the batches not yet written (engine/unwritten_idempotency.h):
// found while their batch is decided and while it is with the writer, the
// newer first, and gone once the writer's batch is settled.
#include "engine/unwritten_idempotency.h"

#include <gtest/gtest.h>

namespace runledger {
namespace {

std::string found(const UnwrittenIdempotency& u, const std::string& key) {
  const std::string* record = u.find(key);
  return record == nullptr ? "(none)" : *record;
}

TEST(UnwrittenIdempotency, ARecordIsFoundFromItsKeepingUntilItsBatchIsSettled) {
  UnwrittenIdempotency u;
  EXPECT_EQ(found(u, "k1"), "(none)");
  u.keep("k1", "reply 1");
  EXPECT_EQ(found(u, "k1"), "reply 1");  // its batch is being decided
  u.hand_over();
  EXPECT_EQ(found(u, "k1"), "reply 1");  // its batch is with the writer
  u.keep("k2", "reply 2");
  EXPECT_EQ(found(u, "k2"), "reply 2");
  u.writer_settled();
  EXPECT_EQ(found(u, "k1"), "(none)") << "the store holds it now";
  EXPECT_EQ(found(u, "k2"), "reply 2") << "its batch is still being decided";
}

TEST(UnwrittenIdempotency, TheBatchBeingDecidedIsAskedBeforeTheWritersAndKeepsTheLatest) {
  UnwrittenIdempotency u;
  u.keep("k", "older");
  u.hand_over();
  u.keep("k", "newer");
  EXPECT_EQ(found(u, "k"), "newer");
  u.keep("k", "newest");
  EXPECT_EQ(found(u, "k"), "newest");
}

TEST(UnwrittenIdempotency, AHandOverStartsTheNextBatchEmptyAndReplacesTheWritersRecords) {
  UnwrittenIdempotency u;
  u.keep("a", "1");
  u.hand_over();
  u.keep("b", "2");
  u.hand_over();  // the writer's batch before was settled in between, in the engine
  EXPECT_EQ(found(u, "a"), "(none)");
  EXPECT_EQ(found(u, "b"), "2");
  u.keep("c", "3");
  u.drop_deciding();
  EXPECT_EQ(found(u, "c"), "(none)") << "a batch dropped undecided keeps nothing";
  EXPECT_EQ(found(u, "b"), "2");
}

}  // namespace
}  // namespace runledger
