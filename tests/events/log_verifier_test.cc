// verify_log(): counts, progress, and the per-event check hook.
#include "events/log_verifier.h"

#include <gtest/gtest.h>

#include "tests/events/store_test_support.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

TEST(LogVerifier, EmptyLogIsClean) {
  TempDir dir;
  auto store = open_store(dir.path());
  VerifyReport report;
  report.events = 99;
  ASSERT_TRUE(verify_log(*store, &report).ok());
  EXPECT_EQ(report.events, 0u);
  EXPECT_EQ(report.streams, 0u);
}

TEST(LogVerifier, ReportsProgressOfBothPhasesAndEndsAtTheTotal) {
  TempDir dir;
  auto store = open_store(dir.path());
  LogBuilder log;
  const uint64_t events = kVerifyProgressEvery + 10;
  while (log.seq() < events) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(5'000, events - log.seq()));
    ASSERT_TRUE(store->append(log.batch({"job/a", "job/b", "job/c", "job/d"}, n)).ok());
  }
  std::vector<VerifyProgress> seen;
  VerifyReport report;
  Status s = verify_log(*store, &report, [&](const VerifyProgress& p) { seen.push_back(p); });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(report.events, events);
  EXPECT_EQ(report.streams, 4u);
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen[0].phase, "log");
  EXPECT_EQ(seen[0].done, kVerifyProgressEvery);
  EXPECT_EQ(seen[0].total, events);
  EXPECT_EQ(seen[1].phase, "log");
  EXPECT_EQ(seen[1].done, events);
  EXPECT_EQ(seen.back().phase, "index");
  EXPECT_EQ(seen.back().done, 4u);
}

TEST(LogVerifier, CheckHookSeesEveryEventAndItsFindingNamesTheSeq) {
  TempDir dir;
  auto store = open_store(dir.path());
  LogBuilder log;
  ASSERT_TRUE(store->append(log.batch({"job/a", "job/b"}, 8)).ok());
  std::vector<uint64_t> seqs;
  VerifyReport report;
  Status s = verify_log(*store, &report, {}, [&](const fb::Event& e, std::string_view) {
    seqs.push_back(e.seq());
    return e.seq() == 6 ? Status::Corruption("not an allowed transition") : Status::Ok();
  });
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_EQ(s.seq(), 6u);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(report.events, 5u);  // the checked ones that passed
}

TEST(LogVerifier, VerifiesUpToTheTailSeenAtItsStartWhileAppendsGoOn) {
  TempDir dir;
  auto store = open_store(dir.path());
  LogBuilder log;
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 10)).ok());
  VerifyReport report;
  bool appended = false;
  Status s = verify_log(*store, &report, {}, [&](const fb::Event&, std::string_view) {
    if (!appended) appended = store->append(log.batch({"job/a"}, 5)).ok();
    return Status::Ok();
  });
  ASSERT_TRUE(appended);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(report.events, 10u);
  EXPECT_EQ(store->last_seq(), 15u);
}

}  // namespace
}  // namespace runledger::testing
