// The job's view written as text is the tree's dump() byte for byte: in every
// attempt state, with every kind of stored output, with strings that need
// escapes, and for random jobs; and where dump() throws, it throws too.
#include <cmath>
#include <cstdint>
#include <random>

#include "base/time_text.h"
#include "projections/job.h"
#include "tests/projections/job_testing.h"
#include "tests/projections/random_json.h"

namespace runledger::job_tests {
namespace {

using nlohmann::json;

// Text that needs every escape dump() knows, bytes it writes raw (0x7f, "/"),
// and characters of two, three and four bytes.
const std::string kAwkward =
    std::string("a \"quoted\" back\\slash /slash\b\f\n\r\t ") + std::string(1, '\0') +
    "\x01\x1f\x7f caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC " + "\xF0\x9F\x98\x80 end";

class JobViewText : public JobTest {
 protected:
  // Then: the text equals the tree's dump() for this job.
  void expect_same(const std::string& id) {
    SCOPED_TRACE("job " + id);
    const jobs::Job& j = job_of(id);
    EXPECT_EQ(jobs::view_text(g.state, j), jobs::view(g.state, j).dump());
  }
};

TEST_F(JobViewText, AQueuedJobIsWrittenWithSortedKeys) {
  enqueue("j1");
  // Written out once by hand: the order of the keys at every level, nulls,
  // the input re-serialized with its keys sorted.
  const std::string t = format_time_ms(g.now_ms);
  std::string steps;
  for (const char* name : {"FETCH", "VALIDATE", "LOAD", "AGGREGATE"}) {
    if (!steps.empty()) steps += ",";
    steps += std::string(R"({"finished_at":null,"name":")") + name +
             R"(","started_at":null,"state":"PENDING"})";
  }
  const std::string expected =
      R"({"attempt":1,"attempts":[{"attempt":1,"finished_at":null,"started_at":null,)"
      R"("state":"QUEUED"}],"blocked_by":null,"cancel_reason":null,"cancel_requested":false,)"
      R"("cleanup_needed":false,"client_token":"j1-a1","created_at":")" +
      t + R"(","error":null,"execution_handle":null,"id":"j1",)" +
      R"("input":{"from":"2026-05-06T00:00:00Z","shop":"A"},"kind":"load",)" +
      R"("last_completed_step":null,"lease":null,"max_attempts":3,)" +
      R"("plan":["FETCH","VALIDATE","LOAD","AGGREGATE"],"priority":0,)" +
      R"("reuse_on_rerun":["FETCH"],"state":"QUEUED","steps":[)" + steps +
      R"(],"target":"t1","updated_at":")" + t + R"(","version":1})";
  EXPECT_EQ(jobs::view_text(g.state, job_of("j1")), expected);
  expect_same("j1");
}

TEST_F(JobViewText, LeasedAndRunningJobsShowTheirLease) {
  jobs::Enqueue c = job("j1");
  c.priority = -7;
  c.max_attempts = 12;
  enqueue(c);
  ASSERT_EQ(claim("w\"9\\"), "j1");
  ASSERT_EQ(state_of("j1"), AttemptState::kLeased);
  expect_same("j1");
  expect_accepted(start("j1"));
  ASSERT_EQ(state_of("j1"), AttemptState::kRunning);
  expect_same("j1");
  expect_accepted(step_start("j1", "FETCH"));
  expect_same("j1");
}

TEST_F(JobViewText, AStaleJobAndTheJobItsHoldBlocks) {
  given_stale("j1", "t1");
  enqueue("j2", "t1");
  ASSERT_TRUE(view_of("j2")["blocked_by"].contains("hold"));
  expect_same("j1");
  expect_same("j2");
}

TEST_F(JobViewText, AJobBlockedByAHoldPlacedByHand) {
  given_running("j1", "t1");
  enqueue("j2", "t1");
  expect_accepted(g.run(holds::Place{"h\"1\\", "t1", holds::kExecutionStateUnknown, "m", ""}));
  ASSERT_EQ(view_of("j2")["blocked_by"], json({{"hold", "h\"1\\"}}));
  expect_same("j2");
}

TEST_F(JobViewText, AJobBlockedByAnotherJob) {
  given_running("first", "t1");
  enqueue("second", "t1");
  ASSERT_EQ(view_of("second")["blocked_by"], json({{"job", "first"}}));
  expect_same("first");
  expect_same("second");
}

TEST_F(JobViewText, SucceededFailedAndCancelledJobs) {
  given_succeeded("ok", "t1");
  expect_same("ok");
  given_failed("bad", "t2");
  expect_same("bad");
  given_cancelled("gone", "t3");
  expect_same("gone");
}

TEST_F(JobViewText, ErrorTextsAndCancelReasonsWithEscapesAndUnicode) {
  given_running("j1", "t1");
  expect_accepted(step_start("j1", "FETCH"));
  expect_accepted(step_fail("j1", "FETCH", true, kAwkward));
  ASSERT_EQ(job_of("j1").attempts.size(), 2u) << "a retry follows";
  expect_same("j1");

  given_running("j2", "t2");
  expect_accepted(cancel("j2", kAwkward));
  ASSERT_TRUE(job_of("j2").latest().cancel_requested);
  expect_same("j2");
  expect_accepted(cancel_ack("j2"));
  ASSERT_EQ(state_of("j2"), AttemptState::kCancelled);
  expect_same("j2");
}

TEST_F(JobViewText, AnExecutionHandleWithQuotesBackslashesAndControlCharacters) {
  enqueue("j1");
  ASSERT_EQ(claim(), "j1");
  const std::string printable = R"(a "quoted" back\slash /slash ~)";
  expect_accepted(g.run(jobs::Start{"j1", token["j1"], printable}));
  ASSERT_EQ(job_of("j1").latest().execution_handle, printable);
  expect_same("j1");
  // Start now takes printable ASCII only, but a log written before it may
  // hold any text in a handle, and its view is still written.
  jobs::Job older = job_of("j1");
  older.latest().execution_handle = kAwkward;
  jobs::adopt(g.state, std::move(older));
  ASSERT_EQ(job_of("j1").latest().execution_handle, kAwkward);
  expect_same("j1");
}

TEST_F(JobViewText, AYieldedAttemptAndTheOneAfterIt) {
  given_running("j1");
  expect_accepted(step_start("j1", "FETCH"));
  expect_accepted(step_done("j1", "FETCH", R"({"rows":3})"));
  expect_accepted(yield("j1", kAwkward));
  ASSERT_EQ(job_of("j1").attempts[0].state, AttemptState::kYielded);
  expect_same("j1");
  ASSERT_EQ(claim(), "j1");
  expect_accepted(start("j1"));
  expect_same("j1");
}

TEST_F(JobViewText, RerunsWithSeveralAttemptsAndReusedSteps) {
  given_succeeded("j1");
  expect_accepted(rerun("j1"));
  ASSERT_EQ(job_of("j1").attempts.size(), 2u);
  ASSERT_EQ(job_of("j1").latest().steps[0].state, StepState::kReused);
  expect_same("j1");
  ASSERT_EQ(claim(), "j1");
  expect_accepted(start("j1"));
  run_steps("j1", 1);
  ASSERT_EQ(state_of("j1"), AttemptState::kSucceeded);
  expect_same("j1");
  expect_accepted(rerun("j1"));
  ASSERT_EQ(claim(), "j1");
  expect_accepted(start("j1"));
  expect_accepted(step_start("j1", "VALIDATE"));
  expect_accepted(step_fail("j1", "VALIDATE", false, "schema \"v2\" missing"));
  ASSERT_EQ(job_of("j1").attempts.size(), 3u);
  expect_same("j1");
}

TEST_F(JobViewText, StepOutputsOfEveryShape) {
  given_running("j1");
  const std::vector<std::string> outputs = {
      // Keys out of order, nested objects and arrays.
      R"({"z":1,"a":[1,[2,[3,[]]],{}],"m":{"y":-5,"b":2.5,"a":null}})",
      // Numbers: floats, negatives, the integer limits and one past them.
      R"([1.0,-0.0,0.1,1e300,-12,3.14159,1E2,1.50,18446744073709551615,)"
      R"(-9223372036854775808,18446744073709551616,-9223372036854775809,-0,true,false,null])",
      // A string with escapes dump() writes differently or not at all.
      R"("\u00e9 \u65E5 \ud83d\ude00 \" \\ \/ \b\f\n\r\t \u0001 \u001F \u007f")",
      // Already in dump()'s form, so it may be copied as it is.
      json({{"b", {1, -2, 2.5, "日本"}}, {"a", std::string("\x01\"\\")}}).dump(),
  };
  const auto& plan = job_of("j1").plan;
  ASSERT_EQ(plan.size(), outputs.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    expect_accepted(step_start("j1", plan[i]));
    expect_accepted(step_done("j1", plan[i], outputs[i]));
    expect_same("j1");
  }
  ASSERT_EQ(state_of("j1"), AttemptState::kSucceeded);
}

TEST_F(JobViewText, StoredTextThatIsNotJsonIsShownAsAString) {
  given_running("j1");
  expect_accepted(step_start("j1", "FETCH"));
  expect_accepted(step_done("j1", "FETCH", "rows: 10, {not json"));
  ASSERT_TRUE(view_of("j1")["steps"][0]["output"].is_string());
  expect_same("j1");
  expect_accepted(step_start("j1", "VALIDATE"));
  expect_accepted(step_done("j1", "VALIDATE", kAwkward));
  expect_same("j1");
}

TEST_F(JobViewText, InputsInAnyForm) {
  const std::vector<std::string> inputs = {"",
                                           "null",
                                           R"({ "b" : 1 , "a" : [ 2 , 3 ] })",
                                           "{\"a\":1}\n",
                                           "not json",
                                           "[1,2,]",
                                           R"({"a":1,"a":2})",
                                           "\xEF\xBB\xBF{\"a\":1}",
                                           "\"" + kAwkward.substr(0, 2) + "\"",
                                           "-0",
                                           "1e400"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    jobs::Enqueue c = job("j" + std::to_string(i), "t" + std::to_string(i));
    c.input = inputs[i];
    enqueue(c);
    expect_same(c.id);
  }
}

// ---- jobs built directly, with contents no command would let through ----

using Outcome = std::string;

// What a rendering gives: its text, or the type_error it throws.
template <typename F>
Outcome outcome(F render) {
  try {
    return "text: " + render();
  } catch (const json::type_error& e) {
    return std::string("type_error: ") + e.what();
  }
}

Outcome text_outcome(const State& s, const jobs::Job& j) {
  return outcome([&] { return jobs::view_text(s, j); });
}
Outcome tree_outcome(const State& s, const jobs::Job& j) {
  return outcome([&] { return jobs::view(s, j).dump(); });
}

jobs::Job plain_job() {
  jobs::Job j;
  j.id = "j1";
  j.kind = "load";
  j.target = "t1";
  j.input = R"({"a":1})";
  j.plan = {"FETCH", "LOAD"};
  j.reuse_on_rerun = {"FETCH"};
  j.attempts.resize(1);
  jobs::Attempt& a = j.attempts[0];
  a.number = 1;
  a.state = AttemptState::kRunning;
  a.worker = "w1";
  a.execution_handle = "h";
  a.steps.resize(2);
  a.steps[0].name = "FETCH";
  a.steps[0].state = StepState::kDone;
  a.steps[0].output = R"({"rows":1})";
  a.steps[0].error = "e";
  a.steps[1].name = "LOAD";
  j.created_at_ms = j.updated_at_ms = 1'700'000'000'000;
  return j;
}

TEST(JobViewTextInvalidUtf8, EveryStringFieldBehavesAsTheTreeDoes) {
  // A lone continuation byte, a truncated sequence, an overlong form, a
  // surrogate and a byte that never starts one.
  const std::vector<std::string> bad = {"x\x80y", "x\xE6\x97", "\xC0\xAF", "\xED\xA0\x80", "\xFF"};
  using Field = std::string& (*)(jobs::Job&);
  const std::vector<std::pair<const char*, Field>> fields = {
      {"id", [](jobs::Job& j) -> std::string& { return j.id; }},
      {"kind", [](jobs::Job& j) -> std::string& { return j.kind; }},
      {"target", [](jobs::Job& j) -> std::string& { return j.target; }},
      {"input", [](jobs::Job& j) -> std::string& { return j.input; }},
      {"plan", [](jobs::Job& j) -> std::string& { return j.plan[1]; }},
      {"reuse_on_rerun", [](jobs::Job& j) -> std::string& { return j.reuse_on_rerun[0]; }},
      {"worker", [](jobs::Job& j) -> std::string& { return j.latest().worker; }},
      {"execution_handle",
       [](jobs::Job& j) -> std::string& { return j.latest().execution_handle; }},
      {"cancel_reason", [](jobs::Job& j) -> std::string& { return j.latest().cancel_reason; }},
      {"error", [](jobs::Job& j) -> std::string& { return j.latest().error; }},
      {"last_completed_step",
       [](jobs::Job& j) -> std::string& { return j.latest().last_completed_step; }},
      {"step name", [](jobs::Job& j) -> std::string& { return j.latest().steps[1].name; }},
      {"step error", [](jobs::Job& j) -> std::string& { return j.latest().steps[0].error; }},
      {"step output", [](jobs::Job& j) -> std::string& { return j.latest().steps[0].output; }},
  };
  State s;
  for (const auto& [name, field] : fields) {
    for (const std::string& b : bad) {
      for (bool inside_json : {false, true}) {
        jobs::Job j = plain_job();
        field(j) = inside_json ? "\"" + b + "\"" : b;
        SCOPED_TRACE(std::string(name) + (inside_json ? " (in a JSON string)" : ""));
        Outcome tree = tree_outcome(s, j);
        EXPECT_EQ(tree.rfind("type_error: ", 0), 0u) << "dump() refuses invalid UTF-8";
        EXPECT_EQ(text_outcome(s, j), tree);
        // and the writer that does not throw declines, for its caller to choose
        EXPECT_FALSE(jobs::try_view_text(s, j).has_value());
      }
    }
  }
  // Where every text is UTF-8, it writes the tree's bytes.
  EXPECT_EQ(jobs::try_view_text(s, plain_job()), jobs::view(s, plain_job()).dump());
  // Two bad fields: the error is the one the tree meets first.
  jobs::Job j = plain_job();
  j.id = "\xFF";
  j.kind = "ok\x80";
  EXPECT_EQ(text_outcome(s, j), tree_outcome(s, j));
}

// Pieces rich in escapes, bytes dump() writes raw, multi-byte characters
// and JSON syntax.
const std::vector<std::string> kJobTextPieces = {"a",
                                                 "Z",
                                                 "0",
                                                 " ",
                                                 "\"",
                                                 "\\",
                                                 "/",
                                                 "\b",
                                                 "\f",
                                                 "\n",
                                                 "\r",
                                                 "\t",
                                                 "\x01",
                                                 "\x1f",
                                                 "\x7f",
                                                 "\x1b",
                                                 std::string(1, '\0'),
                                                 "\xC3\xA9",
                                                 "é",
                                                 "日本",
                                                 "😀",
                                                 "{",
                                                 "}",
                                                 "[",
                                                 "]",
                                                 ":",
                                                 ",",
                                                 "-a1",
                                                 "\\u0041",
                                                 "null",
                                                 "1.5",
                                                 "e"};

// Random jobs whose every text is drawn from kJobTextPieces.
class RandomJobs : public testing::RandomJson {
 public:
  explicit RandomJobs(uint32_t seed)
      : RandomJson(seed, kJobTextPieces, /*max_depth=*/3, /*max_pieces=*/6) {}

  // Stored JSON text: mostly dump() output, sometimes indented, or not JSON.
  std::string stored() {
    switch (pick(6)) {
      case 0:
        return "";
      case 1:
        return text();
      case 2:
        return value().dump(1);
      default:
        return value().dump();
    }
  }

  int64_t time() {
    if (chance(30)) return 0;
    if (chance(5)) return -pick(1000);
    return 1'700'000'000'000 + pick(1'000'000'000);
  }

  jobs::Job job(int index) {
    jobs::Job j;
    j.id = "j" + std::to_string(index) + text(3);
    j.kind = text();
    j.target = "t" + std::to_string(pick(20));
    j.input = stored();
    for (int n = pick(5); n > 0; --n) j.plan.push_back(text(3));
    for (int n = pick(3); n > 0; --n) j.reuse_on_rerun.push_back(text(3));
    j.max_attempts = pick(201) - 100;
    j.priority = chance(10) ? INT32_MIN + pick(3) : pick(2001) - 1000;
    j.created_at_ms = time();
    j.updated_at_ms = time();
    j.version = chance(10) ? UINT32_MAX - pick(3) : static_cast<uint32_t>(pick(1000));
    for (int n = 1 + pick(4); n > 0; --n) {
      jobs::Attempt a;
      a.number = static_cast<int>(j.attempts.size()) + 1;
      a.state = static_cast<AttemptState>(pick(static_cast<int>(AttemptState::kYielded) + 1));
      a.started_at_ms = time();
      a.finished_at_ms = time();
      a.lease_expires_at_ms = time();
      if (chance(50)) a.error = text();
      if (chance(60)) a.worker = text(3);
      if (chance(50)) a.execution_handle = text();
      a.cancel_requested = chance(30);
      if (chance(40)) a.cancel_reason = text();
      if (chance(40)) a.last_completed_step = text(3);
      a.cleanup_needed = chance(30);
      for (int k = pick(5); k > 0; --k) {
        jobs::Step st;
        st.name = text(3);
        st.state = static_cast<StepState>(pick(5));
        st.started_at_ms = time();
        st.finished_at_ms = time();
        if (chance(60)) st.output = stored();
        if (chance(30)) st.error = text();
        st.reused_from = pick(5);
        a.steps.push_back(std::move(st));
      }
      j.attempts.push_back(std::move(a));
    }
    return j;
  }

  // Targets held by jobs and blocked by holds, so blocked_by shows both.
  void block_some_targets(State& s) {
    for (int t = 0; t < 20; ++t) {
      const std::string target = "t" + std::to_string(t);
      if (chance(40)) s.jobs.holder[target] = "holder" + text(3);
      if (chance(25)) s.holds.blocking_by_target[target].insert("hold" + text(3));
    }
  }
};

TEST(JobViewTextRandom, ThousandsOfRandomJobsMatchTheTree) {
  RandomJobs r(20260506);
  State s;
  r.block_some_targets(s);
  int texts = 0;
  int blocked = 0;
  for (int i = 0; i < 4000; ++i) {
    jobs::Job j = r.job(i);
    Outcome tree = tree_outcome(s, j);
    ASSERT_EQ(text_outcome(s, j), tree) << "job " << i;
    texts += tree.rfind("text: ", 0) == 0;
    blocked += tree.find(R"("blocked_by":{)") != std::string::npos;
  }
  // The alphabet holds only valid UTF-8: every job renders, some are blocked.
  EXPECT_EQ(texts, 4000);
  EXPECT_GT(blocked, 100);
}

}  // namespace
}  // namespace runledger::job_tests
