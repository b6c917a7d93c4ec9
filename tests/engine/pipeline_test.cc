// The pipeline between the sequencer and the writer thread: a batch is
// decided while the one before it is still being written. A store whose
// appends wait at a gate holds a batch "in the fsync" for as long as a test
// needs, and a renderer that signals tells when the next batch has been
// decided on top of it. What must hold: nothing is read from disk that is
// not there yet (finished entities and idempotency records of the batch in
// flight are found in memory), and a failed write takes the batch decided
// on top of it down too, with nothing of either in the log or in memory.
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/state_loader.h"
#include "events/forwarding_store.h"
#include "events/rocksdb_store.h"
#include "tests/engine/engine_harness.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {
namespace {

// Appends wait while the gate is closed; allow(n) lets n through. The next
// append can be made to fail instead of writing.
class GatedStore final : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  Status append(const AppendBatch& batch) override {
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return open_ || passes_ > 0; });
      if (!open_) --passes_;
      if (fail_next_) {
        fail_next_ = false;
        return Status::IoError("injected: the disk refused the write");
      }
      ++appends_;
    }
    return ForwardingStore::append(batch);
  }
  // Appends let through (and not failed).
  int appends() {
    std::lock_guard<std::mutex> lk(mu_);
    return appends_;
  }

  void close() {
    std::lock_guard<std::mutex> lk(mu_);
    open_ = false;
  }
  void open() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void allow(int n) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      passes_ += n;
    }
    cv_.notify_all();
  }
  void fail_next() {
    std::lock_guard<std::mutex> lk(mu_);
    fail_next_ = true;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int passes_ = 0;
  bool fail_next_ = false;
  int appends_ = 0;
};

// An engine on a real RocksDB store behind the gate.
class Pipeline {
 public:
  // `snapshot_every_events`: 0 keeps the engine's default.
  explicit Pipeline(uint64_t snapshot_every_events = 0) {
    std::unique_ptr<EventStore> rocks;
    Status st = open_rocksdb_store(dir_.path(), StoreOptions{}, &rocks);
    if (!st.ok()) throw std::runtime_error(st.ToString());
    gate_ = std::make_shared<GatedStore>(std::shared_ptr<EventStore>(std::move(rocks)));
    EngineOptions options = test_engine_options();
    if (snapshot_every_events > 0) options.snapshot_every_events = snapshot_every_events;
    st = Engine::open(gate_, clock_, options, &engine_);
    if (!st.ok()) throw std::runtime_error(st.ToString());
  }
  ~Pipeline() {
    gate_->open();
    engine_->shutdown();
  }

  Engine& engine() { return *engine_; }
  GatedStore& gate() { return *gate_; }

  // Submits `c`; `decided` (if given) is set once the sequencer rendered
  // its reply, that is once the command was decided.
  std::future<Reply> submit(Command c, std::promise<void>* decided = nullptr,
                            const std::string& key = "") {
    Request r = key.empty() ? command_request(std::move(c))
                            : keyed_request(std::move(c), key, "POST /v1/jobs " + key);
    r.render = [decided](const State& s, const Decision* d) {
      Reply reply = outcome_reply(s, d);
      if (decided != nullptr) decided->set_value();
      return reply;
    };
    auto promise = std::make_shared<std::promise<Reply>>();
    auto reply = promise->get_future();
    engine_->submit(std::move(r), [promise](Reply rep) { promise->set_value(std::move(rep)); });
    return reply;
  }

  // A read on the sequencer that signals when it runs.
  std::future<Reply> signalling_read(std::promise<void>* ran) {
    auto promise = std::make_shared<std::promise<Reply>>();
    auto reply = promise->get_future();
    Request r;
    r.render = [ran](const State&, const Decision*) {
      ran->set_value();
      return Reply{200, ""};
    };
    engine_->submit(std::move(r), [promise](Reply rep) { promise->set_value(std::move(rep)); });
    return reply;
  }

  std::string job_state(const std::string& id) {
    return inspect(*engine_, [&](const State& s) {
      auto it = s.jobs.by_id.find(id);
      return it == s.jobs.by_id.end() ? std::string("absent")
                                      : std::string(jobs::to_string(it->second.latest().state));
    });
  }

  nlohmann::json memory_digest() { return engine_digest(*engine_); }
  nlohmann::json log_digest() {
    State s;
    LoadReport report;
    LoadOptions lo;
    lo.use_snapshot = false;
    Status st = load_state(*gate_, lo, &s, &report);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return state_digest(s);
  }

 private:
  TempDir dir_;
  ManualClock clock_;
  std::shared_ptr<GatedStore> gate_;
  std::unique_ptr<Engine> engine_;
};

constexpr auto kWait = std::chrono::seconds(30);

TEST(Pipeline, RequestsDecidedOneByOneDuringAWriteGoOutTogetherInTheNextOne) {
  // Given a batch held in its write
  Pipeline p;
  p.gate().close();
  std::promise<void> held_decided;
  auto held = p.submit(enqueue_command("x", "k", "t-x"), &held_decided);
  ASSERT_EQ(held_decided.get_future().wait_for(kWait), std::future_status::ready);
  const int appends_before = p.gate().appends();
  // When three requests come one after the other meanwhile
  std::vector<std::future<Reply>> replies;
  for (const char* id : {"a", "b", "c"}) {
    std::promise<void> decided;
    replies.push_back(p.submit(enqueue_command(id, "k", std::string("t-") + id), &decided));
    // Then each is decided while the write is still held
    ASSERT_EQ(decided.get_future().wait_for(kWait), std::future_status::ready) << id;
  }
  p.gate().open();
  // and once it ends, all three are written with one more append
  EXPECT_EQ(held.get().status, 200);
  for (auto& r : replies) EXPECT_EQ(r.get().status, 200);
  EXPECT_EQ(p.gate().appends() - appends_before, 2);
  EXPECT_TRUE(same_state(p.log_digest(), p.memory_digest()));
}

TEST(Pipeline, AWriteThatEndsWhileTheSequencerSleepsHandsTheOpenBatchOverItself) {
  Pipeline p;
  const uint64_t before = p.engine().metrics().writer_hand_overs();
  // The sequencer falls asleep right after it decided the second request,
  // but nothing outside the engine can see when: each round gives it longer
  // before the write ends, and the writer must take the open batch over in
  // one of them. A writer that always woke the sequencer never would.
  bool taken = false;
  for (int round = 0; round < 20 && !taken; ++round) {
    // Given a batch held in its write
    p.gate().close();
    const std::string held_id = "held-" + std::to_string(round);
    std::promise<void> held_decided;
    auto held = p.submit(enqueue_command(held_id, "k", "t-" + held_id), &held_decided);
    ASSERT_EQ(held_decided.get_future().wait_for(kWait), std::future_status::ready);
    const int appends_before = p.gate().appends();
    // and a request decided into the open batch meanwhile, the sequencer
    // then left with nothing to do
    const std::string open_id = "open-" + std::to_string(round);
    std::promise<void> open_decided;
    auto open = p.submit(enqueue_command(open_id, "k", "t-" + open_id), &open_decided);
    ASSERT_EQ(open_decided.get_future().wait_for(kWait), std::future_status::ready);
    std::this_thread::sleep_for(std::chrono::milliseconds(10 * (round + 1)));
    // When the write ends
    p.gate().open();
    // Then both are written, one append each, and answered
    EXPECT_EQ(held.get().status, 200);
    EXPECT_EQ(open.get().status, 200);
    EXPECT_EQ(p.gate().appends() - appends_before, 2);
    EXPECT_EQ(p.job_state(open_id), "QUEUED");
    taken = p.engine().metrics().writer_hand_overs() > before;
  }
  EXPECT_TRUE(taken) << "the writer never handed the open batch over to itself";
  // and what it wrote is what the sequencer decided
  EXPECT_TRUE(same_state(p.log_digest(), p.memory_digest()));
}

TEST(Pipeline, ASnapshotDueWithTheOpenBatchIsLeftToTheSequencer) {
  // Given an engine that snapshots after every batch, and a batch held in
  // its write
  Pipeline p(/*snapshot_every_events=*/1);
  p.gate().close();
  std::promise<void> held_decided;
  auto held = p.submit(enqueue_command("held", "k", "t-held"), &held_decided);
  ASSERT_EQ(held_decided.get_future().wait_for(kWait), std::future_status::ready);
  // and a request decided into the open batch meanwhile
  std::promise<void> open_decided;
  auto open = p.submit(enqueue_command("open", "k", "t-open"), &open_decided);
  ASSERT_EQ(open_decided.get_future().wait_for(kWait), std::future_status::ready);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // When the write ends
  p.gate().open();
  // Then the open batch is written with its snapshot, by the sequencer's
  // hand-over: the writer leaves a batch that carries one alone
  EXPECT_EQ(held.get().status, 200);
  EXPECT_EQ(open.get().status, 200);
  EXPECT_EQ(p.engine().metrics().writer_hand_overs(), 0u);
  EXPECT_TRUE(same_state(p.log_digest(), p.memory_digest()));
}

TEST(Pipeline, AJobRerunWhileItsCancelIsBeingWrittenLosesItsStoredView) {
  // Given a queued job
  Pipeline p;
  ASSERT_EQ(p.submit(enqueue_command("a", "k", "t-a")).get().status, 200);
  // When its cancel is being written (held at the gate)
  p.gate().close();
  std::promise<void> cancel_decided;
  auto cancel = p.submit(jobs::Cancel{"a", "operator"}, &cancel_decided);
  ASSERT_EQ(cancel_decided.get_future().wait_for(kWait), std::future_status::ready);
  // and its rerun is decided on top of it meanwhile
  std::promise<void> decided;
  auto rerun = p.submit(jobs::Rerun{"a", "again"}, &decided);
  ASSERT_EQ(decided.get_future().wait_for(kWait), std::future_status::ready);
  p.gate().open();
  // Then both succeed, in that order
  EXPECT_EQ(cancel.get().status, 200);
  Reply r = rerun.get();
  EXPECT_EQ(r.status, 200) << r.body;
  // and the job is live again: in memory, with no stale finished view on disk
  EXPECT_EQ(p.job_state("a"), "QUEUED");
  std::string view;
  EXPECT_EQ(p.engine().store().get_view("job/a", &view).code(), Status::Code::kNotFound) << view;
  EXPECT_TRUE(same_state(p.log_digest(), p.memory_digest()));
}

TEST(Pipeline, AnIdempotencyKeyRepeatedWhileItsFirstUseIsBeingWrittenReplaysIt) {
  // Given a batch held at the gate and, decided on top of it, a keyed enqueue
  Pipeline p;
  p.gate().close();
  std::promise<void> first_decided;
  auto first_batch = p.submit(enqueue_command("x", "k", "t-x"), &first_decided);
  ASSERT_EQ(first_decided.get_future().wait_for(kWait), std::future_status::ready);
  std::promise<void> keyed_decided;
  auto keyed = p.submit(enqueue_command("a", "k", "t-a"), &keyed_decided, "key-1");
  ASSERT_EQ(keyed_decided.get_future().wait_for(kWait), std::future_status::ready);
  // When the same request is sent again and decided while the keyed one is
  // still being written (the first batch passes, the keyed one is held)
  auto again = p.submit(enqueue_command("a", "k", "t-a"), nullptr, "key-1");
  std::promise<void> read_ran;
  auto read = p.signalling_read(&read_ran);
  p.gate().allow(1);
  ASSERT_EQ(read_ran.get_future().wait_for(kWait), std::future_status::ready);
  p.gate().open();
  // Then the repeat gets the first reply, and the job was enqueued once
  EXPECT_EQ(first_batch.get().status, 200);
  Reply one = keyed.get();
  Reply two = again.get();
  EXPECT_EQ(one.status, 200);
  EXPECT_EQ(two.status, one.status);
  EXPECT_EQ(two.body, one.body);
  EXPECT_EQ(read.get().status, 200);
  uint32_t version = 0;
  ASSERT_TRUE(p.engine().store().stream_version("job/a", &version).ok());
  EXPECT_EQ(version, 1u);
  EXPECT_TRUE(same_state(p.log_digest(), p.memory_digest()));
}

TEST(Pipeline, AFailedWriteAlsoRefusesTheBatchDecidedOnTopOfIt) {
  // Given a queued job
  Pipeline p;
  ASSERT_EQ(p.submit(enqueue_command("a", "k", "t-a")).get().status, 200);
  uint64_t before = p.engine().store().last_seq();
  // When its cancel's write is held and then fails, after another enqueue
  // was decided on top of it
  p.gate().close();
  p.gate().fail_next();
  std::promise<void> cancel_decided;
  auto cancel = p.submit(jobs::Cancel{"a", "operator"}, &cancel_decided);
  ASSERT_EQ(cancel_decided.get_future().wait_for(kWait), std::future_status::ready);
  std::promise<void> decided;
  auto enqueue = p.submit(enqueue_command("b", "k", "t-b"), &decided);
  ASSERT_EQ(decided.get_future().wait_for(kWait), std::future_status::ready);
  p.gate().open();
  // Then both get 503 and nothing of either is in the log or in memory
  EXPECT_EQ(cancel.get().status, 503);
  Reply r = enqueue.get();
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(body_json(r).value("code", ""), "unavailable");
  EXPECT_EQ(p.engine().store().last_seq(), before);
  EXPECT_EQ(p.job_state("a"), "QUEUED");
  EXPECT_EQ(p.job_state("b"), "absent");
  EXPECT_TRUE(same_state(p.log_digest(), p.memory_digest()));
  // and the engine takes both again
  EXPECT_TRUE(p.engine().writable());
  EXPECT_EQ(p.submit(jobs::Cancel{"a", "operator"}).get().status, 200);
  EXPECT_EQ(p.submit(enqueue_command("b", "k", "t-b")).get().status, 200);
  EXPECT_EQ(p.job_state("b"), "QUEUED");
}

}  // namespace
}  // namespace runledger::testing
