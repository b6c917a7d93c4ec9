// The group commit's writer thread (engine/batch_writer.h) on a real
// RocksDB store: one batch at a time, settle() waits for it and tells a
// failure once, the failure is told to the owner before settle() returns,
// the owner may hand the next batch over from inside `written`, and stop()
// writes the batch in hand first.
#include "engine/batch_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "events/forwarding_store.h"
#include "events/rocksdb_store.h"
#include "tests/support/faulty_store.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

// An append waits until the test opens the gate: a write the test can hold
// in flight.
class GatedStore final : public ForwardingStore {
 public:
  explicit GatedStore(EventStore* inner) : ForwardingStore(inner) {}
  void close_gate() {
    std::lock_guard<std::mutex> lk(mu_);
    open_ = false;
  }
  void open_gate() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // Waits until an append is held at the gate.
  void wait_for_a_held_append() {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [this] { return held_ > 0; });
  }
  Status append(const AppendBatch& batch) override {
    {
      std::unique_lock<std::mutex> lk(mu_);
      ++held_;
      cv_.notify_all();
      cv_.wait(lk, [this] { return open_; });
      --held_;
    }
    return ForwardingStore::append(batch);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int held_ = 0;
};

// A unit that writes one idempotency record, `key`.
std::unique_ptr<WriteUnit> unit_writing(const std::string& key) {
  auto unit = std::make_unique<WriteUnit>();
  unit->out.idempotency.emplace_back(key, "reply of " + key);
  return unit;
}

class BatchWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(open_rocksdb_store(dir_.path(), StoreOptions{}, &rocks_).ok());
    faulty_ = std::make_unique<FaultyStore>(rocks_.get());
    gated_ = std::make_unique<GatedStore>(faulty_.get());
  }

  bool stored(const std::string& key) {
    std::string value;
    return rocks_->get_idempotency(key, &value).ok() && value == "reply of " + key;
  }

  // Hooks that record what the writer told, in order, and what was stored
  // when it did.
  BatchWriter::Hooks recording_hooks() {
    BatchWriter::Hooks hooks;
    hooks.failed = [this](const Status& why) {
      std::lock_guard<std::mutex> lk(mu_);
      told_.push_back("failed: " + why.ToString());
    };
    hooks.written = [this](std::unique_ptr<WriteUnit> unit, const Status& outcome) {
      std::lock_guard<std::mutex> lk(mu_);
      const std::string key = unit->out.idempotency.front().first;
      told_.push_back("written " + key + (outcome.ok() ? " ok" : " failed") +
                      (stored(key) ? " stored" : " not stored"));
    };
    return hooks;
  }
  std::vector<std::string> told() {
    std::lock_guard<std::mutex> lk(mu_);
    return told_;
  }

  TempDir dir_;
  std::unique_ptr<EventStore> rocks_;
  std::unique_ptr<FaultyStore> faulty_;
  std::unique_ptr<GatedStore> gated_;
  std::mutex mu_;
  std::vector<std::string> told_;
};

TEST_F(BatchWriterTest, SettleWaitsUntilTheBatchInHandIsDurable) {
  BatchWriter writer(*gated_, recording_hooks());
  gated_->close_gate();
  writer.hand(unit_writing("a"));
  gated_->wait_for_a_held_append();
  EXPECT_TRUE(writer.busy()) << "the write is held at the gate";
  EXPECT_FALSE(stored("a"));

  gated_->open_gate();
  EXPECT_FALSE(writer.settle()) << "the write succeeded";
  EXPECT_FALSE(writer.busy());
  EXPECT_TRUE(stored("a"));
  writer.stop();
  EXPECT_EQ(told(), std::vector<std::string>{"written a ok stored"});
}

TEST_F(BatchWriterTest, AFailedWriteIsToldBeforeSettleReturnsAndToSettleOnce) {
  std::atomic<bool> failure_told{false};
  BatchWriter::Hooks hooks = recording_hooks();
  hooks.failed = [&](const Status&) { failure_told = true; };
  BatchWriter writer(*gated_, std::move(hooks));

  faulty_->fail_next_appends(1);
  writer.hand(unit_writing("a"));
  EXPECT_TRUE(writer.settle()) << "the write failed";
  EXPECT_TRUE(failure_told) << "the owner knows before settle() returns";
  EXPECT_FALSE(stored("a"));
  EXPECT_FALSE(writer.settle()) << "a failure is told once";

  writer.hand(unit_writing("b"));
  EXPECT_FALSE(writer.settle());
  EXPECT_TRUE(stored("b"));
}

TEST_F(BatchWriterTest, TheOwnerMayHandTheNextBatchOverFromInsideWritten) {
  BatchWriter* self = nullptr;
  std::atomic<int> written{0};
  BatchWriter::Hooks hooks;
  hooks.failed = [](const Status&) {};
  hooks.written = [&](std::unique_ptr<WriteUnit>, const Status&) {
    // As the engine does when its sequencer sleeps (take_open_batch).
    if (written.fetch_add(1) == 0) self->hand(unit_writing("b"));
  };
  BatchWriter writer(*gated_, std::move(hooks));
  self = &writer;
  writer.hand(unit_writing("a"));
  // The second settle() may come before the hook handed "b" over: wait for
  // both writes rather than for the writer to be idle once.
  while (written.load() < 2) writer.settle();
  EXPECT_TRUE(stored("a"));
  EXPECT_TRUE(stored("b"));
}

TEST_F(BatchWriterTest, StopWritesTheBatchInHandFirst) {
  {
    BatchWriter writer(*gated_, recording_hooks());
    gated_->close_gate();
    writer.hand(unit_writing("a"));
    gated_->wait_for_a_held_append();
    std::thread opener([this] { gated_->open_gate(); });
    writer.stop();
    opener.join();
  }
  EXPECT_TRUE(stored("a"));
  EXPECT_EQ(told(), std::vector<std::string>{"written a ok stored"});
  // And a batch the thread has not even taken yet when stop() comes.
  for (int i = 0; i < 50; ++i) {
    const std::string key = "b" + std::to_string(i);
    BatchWriter writer(*gated_, recording_hooks());
    writer.hand(unit_writing(key));
    writer.stop();
    ASSERT_TRUE(stored(key)) << key;
  }
}

TEST_F(BatchWriterTest, AUnitWithNothingToWriteIsWrittenAsDoneWithoutAnAppend) {
  BatchWriter::Hooks hooks;
  std::atomic<int> written{0};
  hooks.failed = [](const Status&) {};
  hooks.written = [&](std::unique_ptr<WriteUnit>, const Status& outcome) {
    EXPECT_TRUE(outcome.ok());
    ++written;
  };
  BatchWriter writer(*gated_, std::move(hooks));
  faulty_->fail_all_appends(true);  // an append would fail
  writer.hand(std::make_unique<WriteUnit>());
  EXPECT_FALSE(writer.settle());
  writer.stop();
  EXPECT_EQ(written.load(), 1);
  EXPECT_EQ(faulty_->failed_appends(), 0);
}

TEST_F(BatchWriterTest, HandingOverASecondBatchBeforeSettlingStopsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // RocksDB's threads run already
  EXPECT_DEATH(
      {
        BatchWriter writer(*gated_, recording_hooks());
        gated_->close_gate();
        writer.hand(unit_writing("a"));
        writer.hand(unit_writing("b"));
      },
      "handed over only once the one before is settled");
}

}  // namespace
}  // namespace runledger::testing
