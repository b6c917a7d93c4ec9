// A connector's documents (docs/domain.md 2.2, 2.6): statuses set by reports, and
// an abort of a 100,000-document sync recorded as one small event that fails
// every pending and running document.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "http/rejection_status.h"
#include "tests/projections/connector_testing.h"

namespace runledger::connectors {
namespace {

using testing::accept;
using testing::conn;
using testing::create;
using testing::Given;
using testing::start;

constexpr size_t kDocuments = 100'000;
constexpr size_t kIndexedDocuments = 1'000;  // finished before the abort
constexpr size_t kEventBytesMax = 1024;      // an abort record stays small

std::string doc_id(size_t i) { return fmt::format("doc-{:06}", i); }

// Reports `count` documents from `first` in batches of the report limit,
// half pending and half running.
void report_documents(Given& g, size_t first, size_t count) {
  for (size_t batch = first; batch < first + count; batch += kDocumentsPerReportMax) {
    DocumentReport r;
    size_t end = std::min(batch + kDocumentsPerReportMax, first + count);
    for (size_t i = batch; i < end; ++i) (i % 2 == 0 ? r.pending : r.running).push_back(doc_id(i));
    accept(g, ReportProgress{"c1", "s1", r});
  }
}

TEST(ConnectorDocuments, AbortOfAHundredThousandDocumentsIsOneEventAndFailsThemAll) {
  Given g;
  create(g);
  start(g, "s1");
  report_documents(g, 0, kDocuments);
  DocumentReport done;
  for (size_t i = 0; i < kIndexedDocuments; ++i) done.indexed.push_back(doc_id(i));
  accept(g, ReportProgress{"c1", "s1", done});

  Decision d = accept(g, AbortSync{"c1"});
  ASSERT_EQ(Given::types(d), std::vector<std::string>{"SyncAborted"});
  EXPECT_LT(g.log().back().size(), kEventBytesMax);
  nlohmann::json data = testing::event_data(g, d, 0);
  EXPECT_EQ(data["pending_failed"], (kDocuments - kIndexedDocuments) / 2);
  EXPECT_EQ(data["running_failed"], (kDocuments - kIndexedDocuments) / 2);

  const Connector& c = conn(g);
  size_t failed = 0;
  for (const auto& [id, doc] : c.documents) {
    if (doc.status != DocStatus::kFailed) continue;
    ++failed;
    EXPECT_EQ(doc.error, kAbortedDocumentError);
  }
  EXPECT_EQ(failed, kDocuments - kIndexedDocuments);
  EXPECT_EQ(view(c)["documents"], (nlohmann::json{{"pending", 0},
                                                  {"running", 0},
                                                  {"indexed", kIndexedDocuments},
                                                  {"failed", kDocuments - kIndexedDocuments}}));
  EXPECT_EQ(testing::replay(g.log()).connectors.by_id.at("c1"), c);
}

TEST(ConnectorDocuments, AnIdNamedInSeveralListsEndsInTheLatestLifecycleState) {
  Given g;
  create(g);
  start(g, "s1");
  DocumentReport r;
  r.pending = {"d1"};
  r.running = {"d1"};
  r.failed = {{"d1", "timeout"}};
  accept(g, ReportProgress{"c1", "s1", r});
  EXPECT_EQ(conn(g).documents.at("d1").status, DocStatus::kFailed);
  EXPECT_EQ(view(conn(g))["documents"]["failed"], 1);
  EXPECT_EQ(view(conn(g))["documents"]["pending"], 0);
}

TEST(ConnectorDocuments, ADocumentIndexedAfterFailingLosesItsError) {
  Given g;
  create(g);
  start(g, "s1");
  DocumentReport failed;
  failed.failed = {{"d1", "timeout"}};
  accept(g, ReportProgress{"c1", "s1", failed});
  DocumentReport indexed;
  indexed.indexed = {"d1"};
  accept(g, ReportSucceeded{"c1", "s1", indexed});
  EXPECT_EQ(conn(g).documents.at("d1"), (Document{DocStatus::kIndexed, ""}));
  EXPECT_EQ(conn(g).status, Status::kActive);
}

TEST(ConnectorDocuments, ADocumentErrorIsCutLikeLastError) {
  Given g;
  create(g);
  start(g, "s1");
  DocumentReport r;
  r.failed = {{"d1", std::string(kDocumentErrorCodePointsMax + 10, 'e')}};
  accept(g, ReportProgress{"c1", "s1", r});
  EXPECT_EQ(conn(g).documents.at("d1").error.size(), kDocumentErrorCodePointsMax);
}

TEST(ConnectorDocuments, AnEmptyDocumentIdIsInvalidInput) {
  Given g;
  create(g);
  start(g, "s1");
  Decision d = g.run(ReportSucceeded{"c1", "s1", testing::pending({"ok", ""})});
  ASSERT_TRUE(d.rejection);
  EXPECT_EQ(http::http_status(d.rejection->code), 422);
  EXPECT_EQ(conn(g).sync_status, SyncStatus::kRunning);
}

TEST(ConnectorDocuments, AnIdOfTheBoundIsTakenAndOneByteLongerIsInvalidInput) {
  Given g;
  create(g);
  start(g, "s1");
  const std::string longest(kDocumentIdBytesMax, 'd');
  accept(g, ReportProgress{"c1", "s1", testing::pending({longest})});
  EXPECT_EQ(conn(g).documents.count(longest), 1u);

  Decision d = g.run(ReportProgress{"c1", "s1", testing::pending({longest + "d"})});
  ASSERT_TRUE(d.rejection);
  EXPECT_EQ(http::http_status(d.rejection->code), 422);
  EXPECT_EQ(kDocumentIdBytesMax, 512u);  // docs/domain.md and docs/api.md say so
}

}  // namespace
}  // namespace runledger::connectors
