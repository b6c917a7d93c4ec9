// GET /v1/jobs with its filters and its cursor (docs/api.md, Jobs: "query
// state, target, kind, limit ..., after (cursor)") and GET /v1/holds with
// its (query target, open), end to end over entities that are live and
// entities that finished and left memory. The finished ones are
// found through the index of stored views (engine/view_index.h); the same
// answers must come from a store written before that index existed, served
// read-only (a scan of the views) and then indexed by a writable start.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/view_index.h"
#include "events/event_store.h"
#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

struct Expected {
  std::string target;
  std::string kind;
  std::string state;
};

class JobListTest : public ServerTest {
 protected:
  // Jobs in every state a listing can filter on, on two targets and kinds;
  // fills `jobs_` with what each ends as.
  void make_jobs() {
    int n = 0;
    auto id = [&] {  // j00, j01, ...: ids sort as they were made
      const int i = n++;
      return "j" + std::to_string(i / 10) + std::to_string(i % 10);
    };
    // Each claim takes the one job queued: the others have finished.
    auto claim_only = [&](const std::string& job, const std::string& kind) {
      ApiReply c = claim(client(), "w", kind);
      EXPECT_EQ(c.json.at("job").value("id", ""), job) << c.body;
      EXPECT_TRUE(IsStatus(worker_call(client(), job, "start", token_of(c)), 200));
      return token_of(c);
    };
    for (const char* target : {"t-a", "t-b"}) {
      for (const char* kind : {"k1", "k2"}) {
        const std::string ok = id();
        add(ok, target, kind, "SUCCEEDED");
        const std::string ok_token = claim_only(ok, kind);
        ASSERT_EQ(run_steps(client(), ok, ok_token, kDefaultPlan).json.value("state", ""),
                  "SUCCEEDED");

        const std::string failed = id();
        add(failed, target, kind, "FAILED", json{{"max_attempts", 1}});
        const std::string failed_token = claim_only(failed, kind);
        ASSERT_TRUE(
            IsStatus(worker_call(client(), failed, "steps/FETCH/start", failed_token), 200));
        ApiReply f =
            worker_call(client(), failed, "steps/FETCH/failed", failed_token, json{{"error", "x"}});
        ASSERT_EQ(f.json.value("state", ""), "FAILED") << f.body;

        const std::string cancelled = id();
        add(cancelled, target, kind, "CANCELLED");
        ASSERT_TRUE(
            IsStatus(client().post("/v1/jobs/" + cancelled + "/cancel", json::object()), 202));
      }
    }
    // One attempt at a time may hold a target: one RUNNING job on each.
    const std::string running_a = id();
    add(running_a, "t-a", "k1", "RUNNING");
    claim_only(running_a, "k1");
    const std::string running_b = id();
    add(running_b, "t-b", "k2", "RUNNING");
    claim_only(running_b, "k2");
    for (const char* target : {"t-a", "t-b"}) {
      for (const char* kind : {"k1", "k2"}) add(id(), target, kind, "QUEUED");
    }
  }

  void add(const std::string& id, const std::string& target, const std::string& kind,
           const std::string& state, json extra = json::object()) {
    ASSERT_TRUE(IsStatus(enqueue(client(), id, target, kind, std::move(extra)), 201));
    jobs_[id] = Expected{target, kind, state};
  }

  // Every page of GET /v1/jobs?<query>&limit=<limit>, following `next`.
  std::vector<std::string> listed(const std::string& query, int limit) {
    std::vector<std::string> ids;
    std::string after;
    for (int pages = 0; pages < 100; ++pages) {
      std::string path = "/v1/jobs?limit=" + std::to_string(limit) + query;
      if (!after.empty()) path += "&after=" + after;
      ApiReply r = client().get(path);
      EXPECT_TRUE(IsStatus(r, 200));
      if (r.status != 200) return ids;
      for (const json& j : r.json.at("jobs")) ids.push_back(j.value("id", ""));
      if (r.json.at("next").is_null()) return ids;
      after = r.json.at("next").get<std::string>();
    }
    ADD_FAILURE() << "the cursor of " << query << " never ends";
    return ids;
  }

  std::vector<std::string> expected(const std::string& target, const std::string& kind,
                                    const std::string& state) const {
    std::vector<std::string> ids;
    for (const auto& [id, e] : jobs_) {  // ordered by id, as a listing is
      if ((target.empty() || e.target == target) && (kind.empty() || e.kind == kind) &&
          (state.empty() || e.state == state)) {
        ids.push_back(id);
      }
    }
    return ids;
  }

  // Every combination of filters, each read in pages of 1, 3 and 1000.
  void expect_every_listing() {
    for (const std::string target : {"", "t-a", "t-b", "t-none"}) {
      for (const std::string kind : {"", "k1", "k2"}) {
        for (const std::string state :
             {"", "QUEUED", "LEASED", "RUNNING", "STALE", "SUCCEEDED", "FAILED", "CANCELLED"}) {
          std::string query;
          if (!target.empty()) query += "&target=" + target;
          if (!kind.empty()) query += "&kind=" + kind;
          if (!state.empty()) query += "&state=" + state;
          const auto want = expected(target, kind, state);
          for (int limit : {1, 3, 1000}) {
            EXPECT_EQ(listed(query, limit), want) << query << " limit " << limit;
          }
        }
      }
    }
  }

  std::map<std::string, Expected> jobs_;
};

TEST_F(JobListTest, EveryFilterAndCursorListsLiveAndFinishedJobsInIdOrder) {
  make_jobs();
  ASSERT_EQ(jobs_.size(), 18u);
  expect_every_listing();
  // and the same after a restart, when every finished job is read from the store
  restart();
  expect_every_listing();
}

TEST_F(JobListTest, AStoreWithoutTheIndexIsScannedReadOnlyAndIndexedByAWritableStart) {
  make_jobs();
  // Given the store as a version before the index wrote it
  client().get("/v1/health");
  ASSERT_EQ(server().terminate(), 0) << server().log();
  {
    std::unique_ptr<EventStore> opened;
    ASSERT_TRUE(open_rocksdb_store(data(), StoreOptions{}, &opened).ok());
    EventStore& store = *opened;
    AppendBatch drop;
    Status s =
        store.scan_views(view_index::kKeyPrefix, "", [&](std::string_view k, std::string_view) {
          drop.views.emplace_back(std::string(k), std::nullopt);
          return true;
        });
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_GT(drop.views.size(), 12u);  // 12 finished jobs, 3 entries each, and the mark
    ASSERT_TRUE(store.append(drop).ok());
    ASSERT_FALSE(view_index::ready(store));
  }
  // When a read-only server serves it, listings scan the stored views
  start({"--read-only"});
  expect_every_listing();
  // When a writable server starts on it, it indexes them first
  restart();
  EXPECT_NE(server().log().find("indexed the stored views of 12 finished entities"),
            std::string::npos)
      << server().log();
  expect_every_listing();
}

class HoldListTest : public ServerTest {
 protected:
  std::string place(const std::string& target) {
    ApiReply r = client().post("/v1/holds", {{"target", target},
                                             {"kind", "EXECUTION_STATE_UNKNOWN"},
                                             {"reason", "a script may still write"}});
    EXPECT_TRUE(IsStatus(r, 201));
    return r.json.value("id", "");
  }
  void release(const std::string& id) {
    EXPECT_TRUE(IsStatus(client().post("/v1/holds/" + id + "/release",
                                       {{"note", "it exited"}, {"execution_stopped", true}}),
                         200));
  }
  std::vector<std::string> listed(const std::string& query) {
    ApiReply r = client().get("/v1/holds" + query);
    EXPECT_TRUE(IsStatus(r, 200));
    std::vector<std::string> ids;
    for (const json& h : r.json.value("holds", json::array())) ids.push_back(h.value("id", ""));
    std::sort(ids.begin(), ids.end());
    return ids;
  }
};

TEST_F(HoldListTest, TargetAndOpenFilterLiveAndReleasedHolds) {
  // Given on each of two targets a released hold and an open one
  const std::string a_released = place("t-a");
  release(a_released);
  const std::string a_open = place("t-a");
  const std::string b_released = place("t-b");
  release(b_released);
  const std::string b_open = place("t-b");
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  for (int pass = 0; pass < 2; ++pass) {  // live, then read after a restart
    EXPECT_EQ(listed(""), sorted({a_released, a_open, b_released, b_open}));
    EXPECT_EQ(listed("?target=t-a"), sorted({a_released, a_open}));
    EXPECT_EQ(listed("?target=t-b&open=false"), sorted({b_released}));
    EXPECT_EQ(listed("?target=t-b&open=true"), sorted({b_open}));
    EXPECT_EQ(listed("?open=false"), sorted({a_released, b_released}));
    EXPECT_EQ(listed("?open=true"), sorted({a_open, b_open}));
    EXPECT_EQ(listed("?target=t-none"), std::vector<std::string>{});
    restart();
  }
}

// Following `next` visits every hold once, live and released ones mixed,
// in id order, whatever the page size; it ends with null.
TEST_F(HoldListTest, PagesFollowedByNextVisitEveryHoldOnce) {
  std::vector<std::string> placed;
  for (int i = 0; i < 7; ++i) {
    placed.push_back(place("t-" + std::to_string(i % 3)));
    if (i % 2 == 0) release(placed.back());
  }
  std::sort(placed.begin(), placed.end());
  for (const int limit : {1, 2, 3, 7, 1000}) {
    std::vector<std::string> seen;
    std::string query = "?limit=" + std::to_string(limit);
    for (int pages = 0; pages < 20; ++pages) {
      ApiReply r = client().get("/v1/holds" + query);
      ASSERT_TRUE(IsStatus(r, 200));
      ASSERT_LE(r.json["holds"].size(), static_cast<size_t>(limit));
      for (const json& h : r.json["holds"]) seen.push_back(h.value("id", ""));
      if (r.json["next"].is_null()) break;
      query = "?limit=" + std::to_string(limit) + "&after=" + r.json["next"].get<std::string>();
    }
    EXPECT_EQ(seen, placed) << "limit " << limit;
  }
  EXPECT_TRUE(IsError(client().get("/v1/holds?limit=0"), 422, "invalid_query"));
  EXPECT_TRUE(IsError(client().get("/v1/holds?limit=1001"), 422, "invalid_query"));
  EXPECT_TRUE(IsError(client().get("/v1/holds?after=a%20b"), 422, "invalid_query"));
}

using ConnectorListTest = ServerTest;

TEST_F(ConnectorListTest, PagesFollowedByNextVisitEveryConnectorOnce) {
  std::vector<std::string> made;
  for (int i = 0; i < 5; ++i) {
    const std::string id = "c" + std::to_string(i);
    ASSERT_TRUE(IsStatus(client().post("/v1/connectors", {{"id", id}, {"name", "n"}}), 201));
    made.push_back(id);
  }
  std::vector<std::string> seen;
  std::string query = "?limit=2";
  for (int pages = 0; pages < 10; ++pages) {
    ApiReply r = client().get("/v1/connectors" + query);
    ASSERT_TRUE(IsStatus(r, 200));
    for (const json& c : r.json["connectors"]) seen.push_back(c.value("id", ""));
    if (r.json["next"].is_null()) break;
    query = "?limit=2&after=" + r.json["next"].get<std::string>();
  }
  EXPECT_EQ(seen, made);
  EXPECT_TRUE(IsError(client().get("/v1/connectors?limit=1001"), 422, "invalid_query"));
}

}  // namespace
}  // namespace runledger::testing
