// Idempotency keys (docs/api.md "Idempotency", docs/domain.md invariant 7): the
// same key with the same request repeats the first reply and acts once; with
// another request it is a 409; a 4xx first reply is kept, a 5xx is not; keys
// outlive a restart.
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/idempotency.h"
#include "tests/engine/engine_harness.h"

namespace runledger::testing {
namespace {

// The job streams' event counts, to see that a replay acted on nothing.
uint32_t version_of(EventStore& store, const std::string& stream) {
  uint32_t v = 0;
  EXPECT_TRUE(store.stream_version(stream, &v).ok());
  return v;
}

// Long enough for a few threads to send their requests while it lasts.
constexpr auto kSlowWrite = std::chrono::milliseconds(100);

jobs::Claim claim_any(const std::string& token) { return jobs::Claim{"w", {}, 30, token}; }

class Idempotency : public ::testing::Test {
 protected:
  void enqueue_two() {
    ASSERT_EQ(run(h.engine(), enqueue_command("a", "k", "t-a")).status, 200);
    ASSERT_EQ(run(h.engine(), enqueue_command("b", "k", "t-b")).status, 200);
  }
  EngineHarness h;
};

TEST_F(Idempotency, TheSameKeyAndRequestRepeatsTheFirstReplyAndActsOnce) {
  // Given two queued jobs
  enqueue_two();
  // When the same claim is sent twice with one key
  Reply first = h.engine().execute(keyed_request(claim_any(lease_token("1")), "key-1", "claim"));
  uint64_t seq_after_first = h.store().last_seq();
  Reply second = h.engine().execute(keyed_request(claim_any(lease_token("1")), "key-1", "claim"));
  // Then the second reply is the first, byte for byte
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(second.status, first.status);
  EXPECT_EQ(second.body, first.body);
  // and only one job was leased: the repeat changed nothing
  EXPECT_EQ(h.store().last_seq(), seq_after_first);
  EXPECT_EQ(version_of(h.store(), job_stream("a")), 2u);
  EXPECT_EQ(version_of(h.store(), job_stream("b")), 1u);
}

TEST_F(Idempotency, TheSameKeyWithAnotherRequestIsAConflict) {
  // Given a claim made with a key
  enqueue_two();
  ASSERT_EQ(h.engine().execute(keyed_request(claim_any(lease_token("1")), "key-1", "claim")).status,
            200);
  uint64_t seq = h.store().last_seq();
  // When the key comes back with another request
  Reply r =
      h.engine().execute(keyed_request(jobs::Cancel{"b", "no longer needed"}, "key-1", "cancel b"));
  // Then it is refused with 409 idempotency_key_reused, and nothing happened
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(body_json(r).value("code", ""), "idempotency_key_reused");
  EXPECT_EQ(h.store().last_seq(), seq);
}

TEST_F(Idempotency, AFourHundredFirstReplyIsKeptEvenWhenTheRequestWouldNowSucceed) {
  // Given a start of an unknown job, sent with a key and refused with 404
  Reply first = h.engine().execute(
      keyed_request(jobs::Start{"late", lease_token("late"), ""}, "key-404", "start late"));
  ASSERT_EQ(first.status, 404);
  // and then the job exists and is leased with that very token
  ASSERT_EQ(run(h.engine(), enqueue_command("late", "k", "t")).status, 200);
  ASSERT_EQ(run(h.engine(), claim_any(lease_token("late"))).status, 200);
  uint64_t seq = h.store().last_seq();
  // When the same request is repeated with the same key
  Reply again = h.engine().execute(
      keyed_request(jobs::Start{"late", lease_token("late"), ""}, "key-404", "start late"));
  // Then the first reply comes back and the job was not started
  EXPECT_EQ(again.status, 404);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(h.store().last_seq(), seq);
}

TEST_F(Idempotency, AReplyDecidedBeforeTheEngineIsKeptUnderItsKey) {
  // Given a request refused by validation (422) with a key
  Request bad = keyed_request(enqueue_command("j", "k", "t"), "key-422", "enqueue j");
  bad.fixed_reply = Reply::error(422, "invalid_field", "field 'kind' is too long");
  Reply first = h.engine().execute(std::move(bad));
  ASSERT_EQ(first.status, 422);
  // When the same request comes again with the same key, validated or not
  Reply again =
      h.engine().execute(keyed_request(enqueue_command("j", "k", "t"), "key-422", "enqueue j"));
  // Then the 422 is repeated and no job was made
  EXPECT_EQ(again.status, 422);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(version_of(h.store(), job_stream("j")), 0u);
}

TEST_F(Idempotency, AFiveHundredReplyIsNotKeptSoTheRetryRuns) {
  // Given an enqueue with a key whose write failed (503)
  h.faults().fail_next_appends(1);
  Reply failed =
      h.engine().execute(keyed_request(enqueue_command("j", "k", "t"), "key-503", "enqueue j"));
  ASSERT_EQ(failed.status, 503);
  std::string record;
  EXPECT_EQ(h.store().get_idempotency("key-503", &record).code(), Status::Code::kNotFound);
  // When it is retried with the same key
  Reply retried =
      h.engine().execute(keyed_request(enqueue_command("j", "k", "t"), "key-503", "enqueue j"));
  // Then it runs this time, and from then on its reply is the kept one
  EXPECT_EQ(retried.status, 200);
  EXPECT_EQ(version_of(h.store(), job_stream("j")), 1u);
  Reply third =
      h.engine().execute(keyed_request(enqueue_command("j", "k", "t"), "key-503", "enqueue j"));
  EXPECT_EQ(third.status, 200);
  EXPECT_EQ(third.body, retried.body);
}

TEST_F(Idempotency, RepeatsOfOneKeyInOneBatchActOnceAndAllGetTheSameReply) {
  // Given queued jobs, and a slow write in progress (the repeats sent
  // meanwhile queue up and are decided together in the next batch, before
  // the first of them is in the store)
  for (int i = 0; i < 4; ++i) {
    std::string id = "j" + std::to_string(i);
    ASSERT_EQ(run(h.engine(), enqueue_command(id, "k", "t-" + id)).status, 200);
  }
  h.store().set_append_delay(kSlowWrite);
  std::atomic<bool> writing{false};
  std::thread slow([&] {
    Request r = command_request(enqueue_command("slow", "other", "t-slow"));
    r.render = [&](const State& s, const Decision* d) {
      writing = true;
      return outcome_reply(s, d);
    };
    h.engine().execute(std::move(r));
  });
  while (!writing.load()) std::this_thread::yield();
  // When sixteen threads send the same keyed claim meanwhile
  constexpr int kThreads = 16;
  std::vector<Reply> replies(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      replies[t] = h.engine().execute(
          keyed_request(claim_any(lease_token("same")), "key-same", "claim same"));
    });
  }
  for (auto& t : threads) t.join();
  slow.join();
  // Then all got one reply, and exactly one job was leased
  for (const auto& r : replies) {
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, replies[0].body);
  }
  int leased = 0;
  for (int i = 0; i < 4; ++i) {
    leased += static_cast<int>(version_of(h.store(), job_stream("j" + std::to_string(i)))) - 1;
  }
  EXPECT_EQ(leased, 1);
}

TEST_F(Idempotency, KeysSurviveARestart) {
  // Given a keyed claim answered before a restart
  enqueue_two();
  Reply first = h.engine().execute(keyed_request(claim_any(lease_token("1")), "key-r", "claim"));
  ASSERT_EQ(first.status, 200);
  // When the engine restarts on the same folder
  h.reopen();
  uint64_t seq = h.store().last_seq();
  // Then the same request with the key gets the first reply and acts on nothing
  Reply again = h.engine().execute(keyed_request(claim_any(lease_token("1")), "key-r", "claim"));
  EXPECT_EQ(again.status, first.status);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(h.store().last_seq(), seq);
  // and another request with it is still a conflict
  Reply other = h.engine().execute(keyed_request(jobs::Cancel{"b", "x"}, "key-r", "cancel b"));
  EXPECT_EQ(other.status, 409);
  EXPECT_EQ(body_json(other).value("code", ""), "idempotency_key_reused");
}

TEST_F(Idempotency, KeysAreKeptForADayThenPurgedByTheTimerTick) {
  constexpr int64_t kHourMs = 3'600'000;
  // Given a keyed claim
  enqueue_two();
  Reply first = h.engine().execute(keyed_request(claim_any(lease_token("1")), "key-p", "claim"));
  ASSERT_EQ(first.status, 200);
  // When 24 hours pass and the timer ticks (which may start a purge)
  h.clock.advance_ms(24 * kHourMs);
  h.engine().tick();
  ASSERT_TRUE(h.engine().finish_idempotency_purge().ok());
  // Then the key is still kept: another request with it is a conflict
  Reply kept = h.engine().execute(keyed_request(jobs::Cancel{"b", "x"}, "key-p", "cancel b"));
  EXPECT_EQ(kept.status, 409);
  EXPECT_EQ(body_json(kept).value("code", ""), "idempotency_key_reused");
  // When more than the retention has passed and the timer ticks again
  h.clock.advance_ms(2 * kHourMs);
  h.engine().tick();
  ASSERT_TRUE(h.engine().finish_idempotency_purge().ok());
  // Then the key is gone: the request with it acts as a new one
  uint32_t before = version_of(h.store(), job_stream("b"));
  Reply fresh = h.engine().execute(keyed_request(jobs::Cancel{"b", "x"}, "key-p", "cancel b"));
  EXPECT_LT(fresh.status, 300) << fresh.body;
  EXPECT_GT(version_of(h.store(), job_stream("b")), before);
}

// A record an earlier version kept: under the key itself, with a
// fingerprint of method, path and body alone, the reply in clear.
std::string earlier_versions_record(int64_t recorded_at_ms, const std::string& request_text) {
  std::string v;
  for (int i = 7; i >= 0; --i) v.push_back(static_cast<char>((recorded_at_ms >> (8 * i)) & 0xff));
  v += std::string("\x00\xc9", 2);  // 201
  const Hash fp = legacy_request_fingerprint("POST", "/test", request_text);
  v.append(reinterpret_cast<const char*>(fp.data()), fp.size());
  return v + R"({"kept":"by an earlier version"})";
}

TEST_F(Idempotency, AnEarlierVersionsRecordIsAnsweredToTheAnonymousCallerOnly) {
  // Given a record an earlier version kept under "old-key"
  enqueue_two();
  AppendBatch legacy;
  legacy.idempotency.emplace_back("old-key", earlier_versions_record(h.clock.now_ms(), "cancel b"));
  ASSERT_TRUE(h.store().append(legacy).ok());
  const uint64_t seq_before = h.store().last_seq();
  // When the anonymous caller sends that request again
  Request anonymous = keyed_request(jobs::Cancel{"b", "x"}, "old-key", "cancel b");
  anonymous.legacy_fingerprint = legacy_request_fingerprint("POST", "/test", "cancel b");
  Reply replayed = h.engine().execute(std::move(anonymous));
  // Then it gets the kept reply, and nothing is appended
  EXPECT_EQ(replayed.status, 201);
  EXPECT_EQ(replayed.body, R"({"kept":"by an earlier version"})");
  // When a caller with a token (no legacy fingerprint) sends it
  Reply other = h.engine().execute(keyed_request(jobs::Cancel{"b", "x"}, "old-key", "cancel b"));
  // Then it is a conflict, and still nothing is appended
  EXPECT_EQ(other.status, 409);
  EXPECT_EQ(body_json(other).value("code", ""), "idempotency_key_reused");
  EXPECT_EQ(h.store().last_seq(), seq_before);
}

// The reply of a claim carries its lease token: the record keeps it sealed,
// and only the same key's retry gets it back.
TEST_F(Idempotency, AReplysSecretIsNotInTheStoredRecordYetTheRetryGetsIt) {
  // Given a keyed request whose reply carries a secret
  enqueue_two();
  const std::string secret = lease_token("sealed");
  auto with_secret = [&] {
    Request r = keyed_request(claim_any(secret), "key-s", "claim");
    r.reply_secret = secret;
    r.render = [secret](const State&, const Decision*) {
      return Reply{200, R"({"lease_token":")" + secret + R"("})"};
    };
    return r;
  };
  Reply first = h.engine().execute(with_secret());
  ASSERT_EQ(first.body, R"({"lease_token":")" + secret + R"("})");
  // When the record is read from the store after a restart
  h.reopen();
  std::string stored;
  ASSERT_TRUE(h.store().get_idempotency(idempotency_record_key("key-s"), &stored).ok());
  Reply again = h.engine().execute(with_secret());
  // Then the stored bytes hold neither the secret nor the key, and the retry gets the first reply
  EXPECT_EQ(stored.find(secret), std::string::npos);
  EXPECT_EQ(stored.find("key-s"), std::string::npos);
  EXPECT_FALSE(h.store().get_idempotency("key-s", &stored).ok());
  EXPECT_EQ(again.body, first.body);
}

}  // namespace
}  // namespace runledger::testing
