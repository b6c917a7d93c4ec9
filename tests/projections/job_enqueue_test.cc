// Enqueue: what it records, idempotent re-posts, and the checks the decider
// makes itself (the HTTP layer checks shapes too).
#include "tests/projections/job_testing.h"

namespace runledger::job_tests {
namespace {

using JobEnqueue = JobTest;
using runledger::testing::Given;

TEST_F(JobEnqueue, RecordsTheJobWithItsDefaultsAsQueued) {
  Decision d = enqueue("j1", "dataset/orders");
  ASSERT_EQ(Given::types(d), Types{"JobEnqueued"});
  EXPECT_EQ(d.events[0].stream, "job/j1");
  const jobs::Job& j = job_of("j1");
  EXPECT_EQ(j.plan, (std::vector<std::string>{"FETCH", "VALIDATE", "LOAD", "AGGREGATE"}));
  EXPECT_EQ(j.reuse_on_rerun, std::vector<std::string>{"FETCH"});
  EXPECT_EQ(j.max_attempts, 3);
  EXPECT_EQ(j.priority, 0);
  EXPECT_EQ(j.created_at_ms, g.now_ms);
  EXPECT_EQ(j.version, 1u);
  ASSERT_EQ(j.attempts.size(), 1u);
  EXPECT_EQ(j.latest().number, 1);
  EXPECT_EQ(j.latest().state, AttemptState::kQueued);
  EXPECT_EQ(j.latest().steps.size(), 4u);
  EXPECT_EQ(ready_ids(g.state.jobs), std::vector<std::string>{"j1"});
}

TEST_F(JobEnqueue, TheSameBodyAgainIsAcceptedWithoutEvents) {
  enqueue("j1");
  Decision d = g.run(job("j1"));
  EXPECT_FALSE(d.rejection);
  EXPECT_TRUE(d.events.empty());
  EXPECT_EQ(d.body, nlohmann::json({{"existing", true}}));
  EXPECT_EQ(job_of("j1").version, 1u);
}

TEST_F(JobEnqueue, TheSameIdWithADifferentBodyIsADuplicate) {
  enqueue("j1");
  jobs::Enqueue other = job("j1");
  other.priority = 7;
  expect_refused(g.run(other), 409, "duplicate_id");
  other = job("j1", "another-target");
  expect_refused(g.run(other), 409, "duplicate_id");
  EXPECT_EQ(job_of("j1").priority, 0);
}

TEST_F(JobEnqueue, TheSameIdAfterTheJobRanIsStillRecognised) {
  given_succeeded("j1");
  Decision d = g.run(job("j1"));
  EXPECT_TRUE(d.events.empty());
  EXPECT_EQ(d.body["existing"], true);
}

struct BadEnqueue {
  const char* name;
  const char* field;
  void (*spoil)(jobs::Enqueue&);
};

class JobEnqueueChecks : public JobTest, public ::testing::WithParamInterface<BadEnqueue> {};

TEST_P(JobEnqueueChecks, AreRefusedNamingTheField) {
  jobs::Enqueue c = job("j1");
  GetParam().spoil(c);
  Decision d = g.run(c);
  expect_refused(d, 422, "invalid_field");
  ASSERT_TRUE(d.rejection);
  EXPECT_EQ(d.rejection->extra["field"], GetParam().field);
  EXPECT_NE(d.rejection->message.find(GetParam().field), std::string::npos) << d.rejection->message;
  EXPECT_TRUE(g.state.jobs.by_id.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, JobEnqueueChecks,
    ::testing::Values(
        BadEnqueue{"EmptyPlan", "plan", [](jobs::Enqueue& c) { c.plan.clear(); }},
        BadEnqueue{"TooManySteps", "plan",
                   [](jobs::Enqueue& c) {
                     c.plan.clear();
                     for (size_t i = 0; i <= jobs::kPlanStepsMax; ++i) {
                       c.plan.push_back("S" + std::to_string(i));
                     }
                     c.reuse_on_rerun.clear();
                   }},
        BadEnqueue{"DuplicateStep", "plan",
                   [](jobs::Enqueue& c) {
                     c.plan = {"FETCH", "LOAD", "FETCH"};
                   }},
        BadEnqueue{"LongStepName", "plan",
                   [](jobs::Enqueue& c) {
                     c.plan.push_back(std::string(jobs::kStepNameBytesMax + 1, 'S'));
                   }},
        BadEnqueue{"EmptyStepName", "plan", [](jobs::Enqueue& c) { c.plan.push_back(""); }},
        BadEnqueue{"ReuseOutsidePlan", "reuse_on_rerun",
                   [](jobs::Enqueue& c) {
                     c.reuse_on_rerun = {"FETCH", "PUBLISH"};
                   }},
        BadEnqueue{"ZeroMaxAttempts", "max_attempts", [](jobs::Enqueue& c) { c.max_attempts = 0; }},
        BadEnqueue{"TooManyMaxAttempts", "max_attempts",
                   [](jobs::Enqueue& c) { c.max_attempts = jobs::kMaxAttemptsMax + 1; }},
        BadEnqueue{"HugeInput", "input",
                   [](jobs::Enqueue& c) {
                     c.input = "\"" + std::string(jobs::kInputBytesMax, 'i') + "\"";
                   }},
        BadEnqueue{"NoKind", "kind", [](jobs::Enqueue& c) { c.kind.clear(); }},
        BadEnqueue{"NoTarget", "target", [](jobs::Enqueue& c) { c.target.clear(); }}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(JobEnqueue, TheLimitsThemselvesAreAccepted) {
  jobs::Enqueue c = job("j1");
  c.plan.clear();
  for (size_t i = 0; i < jobs::kPlanStepsMax; ++i) {
    std::string name = "S" + std::to_string(i);
    c.plan.push_back(name + std::string(jobs::kStepNameBytesMax - name.size(), '_'));
  }
  c.reuse_on_rerun = {c.plan.front()};
  c.max_attempts = jobs::kMaxAttemptsMax;
  enqueue(c);
  EXPECT_EQ(job_of("j1").plan.size(), jobs::kPlanStepsMax);
}

}  // namespace
}  // namespace runledger::job_tests
