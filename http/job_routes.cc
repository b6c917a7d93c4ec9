// The Jobs section of the API: enqueue, the worker protocol, cancel, rerun,
// reads. Handlers validate shapes and limits (422 naming the field); the job
// decider checks everything that depends on state.
#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>

#include "base/time_text.h"
#include "engine/view_index.h"
#include "http/entity_reads.h"
#include "http/handler_support.h"
#include "http/routes.h"
#include "projections/limits.h"
#include "projections/stream_name.h"

namespace runledger::http {
namespace {

constexpr size_t kListLimitDefault = 100;

std::string lease_token(const JsonInput& in) {
  std::string t = in.str("lease_token", jobs::kLeaseTokenChars);
  bool hex = t.size() == jobs::kLeaseTokenChars;
  for (char c : t) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!hex) {
    throw FieldError{"invalid_field", "lease_token",
                     "field 'lease_token' must be the 32 hex characters the claim returned"};
  }
  return t;
}

// An execution_handle as docs/api.md bounds it, in every route that takes one.
std::optional<std::string> opt_execution_handle(const JsonInput& in) {
  auto handle = in.opt_str("execution_handle", std::numeric_limits<size_t>::max());
  if (handle && !jobs::valid_execution_handle(*handle)) {
    throw FieldError{"invalid_field", "execution_handle",
                     "field 'execution_handle' must be 1-" +
                         std::to_string(jobs::kExecutionHandleCharsMax) +
                         " printable ASCII characters (0x20-0x7E)"};
  }
  return handle;
}

// A step's `output` as JSON text, empty when absent or null.
std::string opt_output(const JsonInput& in) {
  const auto* v = in.raw("output");
  if (v == nullptr || v->is_null()) return "";
  std::string output = v->dump();
  if (output.size() > jobs::kOutputBytesMax) {
    throw FieldError{
        "invalid_field", "output",
        "field 'output' is larger than " + std::to_string(jobs::kOutputBytesMax) + " bytes"};
  }
  return output;
}

std::optional<jobs::Job const*> find_job(const State& s, const std::string& id) {
  auto it = s.jobs.by_id.find(id);
  if (it == s.jobs.by_id.end()) return std::nullopt;
  return &it->second;
}

std::optional<nlohmann::json> live_job(const State& s, const std::string& id) {
  auto j = find_job(s, id);
  if (!j) return std::nullopt;
  return jobs::view(s, **j);
}

// The job's JSON, the bytes Reply::json writes for jobs::view. Every job
// command's reply is rendered on the sequencer, and building and dumping the
// tree took more of its time there than deciding; the text writer gives the
// same bytes without it (the tree stays for a job with text that is not
// UTF-8, which Reply::json writes with replacement characters).
std::string job_json(const State& s, const jobs::Job& j) {
  if (auto text = jobs::try_view_text(s, j)) return std::move(*text);
  return Reply::json(200, jobs::view(s, j)).body;
}

// {"job": ..., "lease_expires_at": ..., "lease_token": ...}, keys in the
// order Reply::json sorts them; the lease part only when `token` is given.
// The token is hex the server made and the time is formatted: no escapes.
Reply job_with_lease(const State& s, const jobs::Job& j, const std::string& token) {
  std::string body = "{\"job\":" + job_json(s, j);
  if (!token.empty()) {
    body += ",\"lease_expires_at\":\"" + format_time_ms(j.latest().lease_expires_at_ms) +
            "\",\"lease_token\":\"" + token + "\"";
  }
  body += "}";
  return Reply{200, std::move(body)};
}

// Renders the job (or the refusal) after a command: `status` on success.
Renderer job_reply(std::string id, int status) {
  return [id = std::move(id), status](const State& s, const Decision* d) {
    if (d->rejection) return rejection_reply(*d->rejection);
    auto j = find_job(s, id);
    if (!j) return Reply::error(404, "not_found", "job " + id + " not found");
    return Reply{status, job_json(s, **j)};
  };
}

std::string input_json(const JsonInput& in) {
  const auto* v = in.raw("input");
  if (v == nullptr) return "null";
  std::string text = v->dump();
  if (text.size() > jobs::kInputBytesMax) {
    throw FieldError{
        "invalid_field", "input",
        "field 'input' is larger than " + std::to_string(jobs::kInputBytesMax) + " bytes"};
  }
  return text;
}

Request enqueue(const nlohmann::json& body) {
  JsonInput in(body);
  in.only({"id", "kind", "target", "input", "plan", "reuse_on_rerun", "max_attempts", "priority",
           "not_before"});
  jobs::Enqueue c;
  c.id = in.opt_id("id").value_or(new_id("job"));
  c.kind = in.str("kind", limits::kNameBytesMax);
  c.target = in.str("target", limits::kTargetBytesMax);
  c.input = input_json(in);
  if (auto p = in.opt_str_list("plan", jobs::kPlanStepsMax, jobs::kStepNameBytesMax)) {
    if (p->empty()) throw FieldError{"invalid_field", "plan", "field 'plan' must not be empty"};
    c.plan = std::move(*p);
  }
  if (auto r = in.opt_str_list("reuse_on_rerun", jobs::kPlanStepsMax, jobs::kStepNameBytesMax)) {
    c.reuse_on_rerun = std::move(*r);
  } else if (in.has("plan")) {
    // The default reuses FETCH only when the plan has such a step.
    std::vector<std::string> kept;
    for (const auto& s : c.reuse_on_rerun) {
      for (const auto& p : c.plan) {
        if (p == s) kept.push_back(s);
      }
    }
    c.reuse_on_rerun = std::move(kept);
  }
  c.max_attempts =
      static_cast<int>(in.opt_integer("max_attempts", 1, jobs::kMaxAttemptsMax).value_or(3));
  c.priority = static_cast<int>(
      in.opt_integer("priority", -limits::kPriorityAbsMax, limits::kPriorityAbsMax).value_or(0));
  c.not_before_ms = in.opt_time_ms("not_before").value_or(0);
  Request r;
  std::string id = c.id;
  r.render = [id](const State& s, const Decision* d) {
    if (d->rejection) return rejection_reply(*d->rejection);
    bool existing = d->body.is_object() && d->body.value("existing", false);
    auto j = find_job(s, id);
    if (!j) return Reply::error(404, "not_found", "job " + id + " not found");
    return Reply{existing ? 200 : 201, job_json(s, **j)};
  };
  r.command = std::move(c);
  return r;
}

// Claims wait in line with those of the same kinds (http/claim_waiters.h):
// the kinds, sorted, each after its length.
std::string claim_group(std::vector<std::string> kinds) {
  std::sort(kinds.begin(), kinds.end());
  std::string group;
  for (const auto& k : kinds) group.append(std::to_string(k.size())).append(":").append(k);
  return group;
}

Reply lease_reply(const State& s, const std::string& id, const std::string& token) {
  auto j = find_job(s, id);
  if (!j) return Reply::error(404, "not_found", "job " + id + " not found");
  return job_with_lease(s, **j, token);
}

// POST /v1/jobs/claim: a lease on the best claimable job, or 204; with
// wait_s, parked until one is (http/claim_wait.h).
Answer claim(ApiRequest& a, const ApiOptions& o) {
  std::optional<LongPoll> long_poll;
  Answer answer = prepare_command(a, [&](const nlohmann::json& body) {
    JsonInput in(body);
    in.only({"worker", "kinds", "lease_s", "wait_s"});
    jobs::Claim c;
    c.worker = in.str("worker", limits::kNameBytesMax);
    c.kinds = in.opt_str_list("kinds", limits::kKindsPerClaimMax, limits::kNameBytesMax)
                  .value_or(std::vector<std::string>{});
    c.lease_s = in.opt_integer("lease_s", o.lease_min_s, o.lease_max_s);
    const int64_t wait_s = in.opt_integer("wait_s", 0, limits::kClaimWaitSMax).value_or(0);
    if (wait_s > 0) long_poll = LongPoll{std::chrono::seconds(wait_s), claim_group(c.kinds)};
    c.lease_token = random_hex(jobs::kLeaseTokenChars / 2);
    Request r;
    r.reply_secret = c.lease_token;
    r.tried_again_on_no_content = long_poll.has_value();
    r.render = [token = c.lease_token](const State& s, const Decision* d) {
      if (d->rejection) return rejection_reply(*d->rejection);
      if (d->events.empty()) return Reply{204, ""};
      std::string id(stream_id(d->events.front().stream, StreamKind::kJob));
      return lease_reply(s, id, token);
    };
    r.command = std::move(c);
    return r;
  });
  if (answer.command && !answer.command->fixed_reply) answer.long_poll = std::move(long_poll);
  return answer;
}

// POST /v1/jobs/{id}/heartbeat: the lease renewed; whether a cancel waits.
Answer heartbeat(ApiRequest& a, const ApiOptions& o) {
  return prepare_command(a, [&](const nlohmann::json& body) {
    JsonInput in(body);
    in.only({"lease_token", "lease_s"});
    jobs::Heartbeat c{a.param("id"), lease_token(in),
                      in.opt_integer("lease_s", o.lease_min_s, o.lease_max_s)};
    Request r;
    r.render = [id = c.job_id](const State& s, const Decision* d) {
      if (d->rejection) return rejection_reply(*d->rejection);
      auto j = find_job(s, id);
      if (!j) return Reply::error(404, "not_found", "job " + id + " not found");
      const auto& at = (*j)->latest();
      return Reply::json(200, {{"lease_expires_at", format_time_ms(at.lease_expires_at_ms)},
                               {"cancel_requested", at.cancel_requested}});
    };
    r.command = std::move(c);
    return r;
  });
}

// POST /v1/jobs/{id}/reattach: a worker that lost its lease tells what it
// observed of the execution (docs/domain.md 1.8).
Answer reattach(ApiRequest& a, const ApiOptions& o) {
  return prepare_command(a, [&](const nlohmann::json& body) {
    JsonInput in(body);
    in.only({"worker", "execution_handle", "observed", "exit_code", "step", "output", "retryable",
             "lease_s"});
    jobs::Reattach c;
    c.job_id = a.param("id");
    c.worker = in.str("worker", limits::kNameBytesMax);
    auto handle = opt_execution_handle(in);
    if (!handle) {
      throw FieldError{"missing_field", "execution_handle", "field 'execution_handle' is required"};
    }
    c.execution_handle = std::move(*handle);
    c.observed = in.enumeration("observed", {"running", "exited"});
    if (auto code = in.opt_integer("exit_code", INT32_MIN, INT32_MAX)) {
      c.exit_code = static_cast<int>(*code);
    }
    if (c.observed == "exited" && !c.exit_code) {
      throw FieldError{"missing_field", "exit_code",
                       "field 'exit_code' is required when observed is 'exited'"};
    }
    // An observed exit of one step (docs/domain.md 1.8): its output, and whether
    // a failure may be retried, speak of that step only.
    if (in.has("step")) {
      c.step = in.str("step", jobs::kStepNameBytesMax);
      if (c.observed != "exited") {
        throw FieldError{"invalid_field", "step",
                         "field 'step' goes with observed 'exited' only: it names the step "
                         "whose exit was observed"};
      }
    }
    for (const char* field : {"output", "retryable"}) {
      if (in.has(field) && c.step.empty()) {
        throw FieldError{
            "invalid_field", field,
            std::string("field '") + field + "' speaks of one step's exit: it goes with 'step'"};
      }
    }
    c.output = opt_output(in);
    c.retryable = in.opt_bool("retryable").value_or(false);
    c.lease_s = in.opt_integer("lease_s", o.lease_min_s, o.lease_max_s);
    // A step's exit 0 lets the attempt run on under a new lease.
    if (c.observed == "running" || !c.step.empty()) {
      c.lease_token = random_hex(jobs::kLeaseTokenChars / 2);
    }
    Request r;
    r.reply_secret = c.lease_token;
    r.render = [id = c.job_id, token = c.lease_token](const State& s, const Decision* d) {
      if (d->rejection) return rejection_reply(*d->rejection);
      auto j = find_job(s, id);
      if (!j) return Reply::error(404, "not_found", "job " + id + " not found");
      const bool leased = !token.empty() && (*j)->latest().state == jobs::AttemptState::kRunning;
      return job_with_lease(s, **j, leased ? token : std::string());
    };
    r.command = std::move(c);
    return r;
  });
}

// Worker commands that carry the lease token and whose reply is the job.
void add_token_routes(Router& router) {
  auto token_only = [](auto make) {
    return [make](ApiRequest& a) {
      return prepare_command(a, [&](const nlohmann::json& body) {
        JsonInput in(body);
        Request r;
        r.command = make(a, in);
        r.render = job_reply(a.param("id"), 200);
        return r;
      });
    };
  };
  router.add_command("POST", "/v1/jobs/{id}/release",
                     token_only([](ApiRequest& a, JsonInput& in) -> Command {
                       in.only({"lease_token"});
                       return jobs::Release{a.param("id"), lease_token(in)};
                     }));
  router.add_command(
      "POST", "/v1/jobs/{id}/start", token_only([](ApiRequest& a, JsonInput& in) -> Command {
        in.only({"lease_token", "execution_handle"});
        return jobs::Start{a.param("id"), lease_token(in), opt_execution_handle(in).value_or("")};
      }));
  router.add_command("POST", "/v1/jobs/{id}/steps/{step}/start",
                     token_only([](ApiRequest& a, JsonInput& in) -> Command {
                       in.only({"lease_token"});
                       return jobs::StepStart{a.param("id"), a.param("step"), lease_token(in)};
                     }));
  router.add_command(
      "POST", "/v1/jobs/{id}/steps/{step}/done",
      token_only([](ApiRequest& a, JsonInput& in) -> Command {
        in.only({"lease_token", "output"});
        return jobs::StepDone{a.param("id"), a.param("step"), lease_token(in), opt_output(in)};
      }));
  router.add_command("POST", "/v1/jobs/{id}/steps/{step}/failed",
                     token_only([](ApiRequest& a, JsonInput& in) -> Command {
                       in.only({"lease_token", "error", "retryable"});
                       return jobs::StepFail{a.param("id"), a.param("step"), lease_token(in),
                                             in.str("error", kCutTextBytesMax),
                                             in.opt_bool("retryable").value_or(false)};
                     }));
  router.add_command("POST", "/v1/jobs/{id}/cancel-ack",
                     token_only([](ApiRequest& a, JsonInput& in) -> Command {
                       in.only({"lease_token"});
                       return jobs::CancelAck{a.param("id"), lease_token(in)};
                     }));
  router.add_command("POST", "/v1/jobs/{id}/outcome-unknown",
                     token_only([](ApiRequest& a, JsonInput& in) -> Command {
                       in.only({"lease_token", "kind", "detail"});
                       return jobs::OutcomeUnknown{
                           a.param("id"), lease_token(in),
                           in.enumeration("kind", {"EXECUTION_STATE_UNKNOWN", "RESULT_UNKNOWN"}),
                           in.opt_str("detail", kCutTextBytesMax).value_or("")};
                     }));
  router.add_command("POST", "/v1/jobs/{id}/yield",
                     token_only([](ApiRequest& a, JsonInput& in) -> Command {
                       in.only({"lease_token", "reason"});
                       return jobs::Yield{a.param("id"), lease_token(in),
                                          in.opt_str("reason", jobs::kReasonBytesMax).value_or("")};
                     }));
}

void add_worker_routes(Router& router, const ApiOptions& o) {
  router.add_command("POST", "/v1/jobs/claim", [o](ApiRequest& a) { return claim(a, o); });
  router.add_command("POST", "/v1/jobs/{id}/heartbeat",
                     [o](ApiRequest& a) { return heartbeat(a, o); });
  add_token_routes(router);
  router.add_command("POST", "/v1/jobs/{id}/reattach",
                     [o](ApiRequest& a) { return reattach(a, o); });
}

void add_operator_routes(Router& router) {
  router.add_command("POST", "/v1/jobs", [](ApiRequest& a) { return prepare_command(a, enqueue); });
  router.add_command("POST", "/v1/jobs/{id}/cancel", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput in(body);
      in.only({"reason"});
      Request r;
      r.command =
          jobs::Cancel{a.param("id"), in.opt_str("reason", jobs::kReasonBytesMax).value_or("")};
      r.render = job_reply(a.param("id"), 202);
      return r;
    });
  });
  router.add_command("POST", "/v1/jobs/{id}/rerun", [](ApiRequest& a) {
    return prepare_command(a, [&](const nlohmann::json& body) {
      JsonInput in(body);
      in.only({"reason"});
      Request r;
      r.command =
          jobs::Rerun{a.param("id"), in.opt_str("reason", jobs::kReasonBytesMax).value_or("")};
      r.render = job_reply(a.param("id"), 201);
      return r;
    });
  });
}

// Stored views are of finished jobs only. Of the filters, a target or a kind
// is the likeliest to be narrow; the others are checked on each view read.
StoredMatches stored_jobs_matching(const std::optional<std::string>& state,
                                   const std::optional<std::string>& target,
                                   const std::optional<std::string>& kind) {
  using view_index::Field;
  if (state && !jobs::is_terminal(*jobs::attempt_state_from(*state))) {
    return {StoredMatches::Mode::kNone, ""};
  }
  if (target)
    return {StoredMatches::Mode::kIndexed, view_index::prefix(Field::kJobTarget, *target)};
  if (kind) return {StoredMatches::Mode::kIndexed, view_index::prefix(Field::kJobKind, *kind)};
  if (state) return {StoredMatches::Mode::kIndexed, view_index::prefix(Field::kJobState, *state)};
  return {StoredMatches::Mode::kScan, ""};
}

Reply list_jobs(Engine& engine, const ApiRequest& a) {
  auto limit = static_cast<size_t>(
      query_int(a, "limit", kListLimitDefault, 1, static_cast<int64_t>(kListLimitMax)));
  std::optional<std::string> state, target, kind;
  if (const auto* v = a.query_value("state")) {
    if (!jobs::attempt_state_from(*v)) {
      throw ApiError{422,
                     "invalid_query",
                     "query parameter 'state' must be one of QUEUED, LEASED, RUNNING, STALE, "
                     "SUCCEEDED, FAILED, CANCELLED, YIELDED",
                     {{"field", "state"}}};
    }
    state = *v;
  }
  if (const auto* v = a.query_value("target")) target = *v;
  if (const auto* v = a.query_value("kind")) kind = *v;
  // The cursor is the id of the last job of a page (`next`).
  std::string after = query_id(a, "after").value_or("");
  auto keep = [&](const nlohmann::json& v) {
    return (!state || v.value("state", "") == *state) &&
           (!target || v.value("target", "") == *target) && (!kind || v.value("kind", "") == *kind);
  };
  auto live_page = [&](const State& s) {
    std::vector<nlohmann::json> out;
    for (auto it = s.jobs.by_id.upper_bound(after); it != s.jobs.by_id.end(); ++it) {
      const auto& j = it->second;
      if (state && jobs::to_string(j.latest().state) != *state) continue;
      if ((target && j.target != *target) || (kind && j.kind != *kind)) continue;
      out.push_back(jobs::view(s, j));
      if (out.size() > limit) break;
    }
    return out;
  };
  Page page = list_entities(engine, std::string(stream_prefix(StreamKind::kJob)), after, limit,
                            live_page, keep, stored_jobs_matching(state, target, kind));
  nlohmann::json out{{"jobs", std::move(page.items)}};
  out["next"] = page.next ? nlohmann::json(*page.next) : nlohmann::json(nullptr);
  return Reply::json(200, out);
}

void add_read_routes(Router& router, Engine& engine) {
  router.add("GET", "/v1/jobs", [&engine](ApiRequest& a) { return list_jobs(engine, a); });
  router.add("GET", "/v1/jobs/{id}", [&engine](ApiRequest& a) {
    std::string id = a.param("id");
    auto live = [id](const State& s) { return live_job(s, id); };
    if (a.query_value("as_of")) {
      // What blocked a queued job then: the jobs and holds on its target then.
      auto context = [&engine, id](State& scratch, uint64_t as_of) {
        auto it = scratch.jobs.by_id.find(id);
        if (it == scratch.jobs.by_id.end() ||
            it->second.latest().state != jobs::AttemptState::kQueued) {
          return Status::Ok();
        }
        const std::string target = it->second.target;
        return fold_target_as_of(engine, target, as_of, scratch);
      };
      return read_as_of(engine, a, job_stream(id), live, "job " + id, context);
    }
    return read_entity(engine, job_stream(id), live, "job " + id);
  });
  router.add("GET", "/v1/jobs/{id}/events", [&engine](ApiRequest& a) {
    return stream_events(engine, a, job_stream(a.param("id")), "job " + a.param("id"));
  });
}

}  // namespace

void add_job_routes(Router& router, Engine& engine, const ApiOptions& options) {
  add_worker_routes(router, options);
  add_operator_routes(router);
  add_read_routes(router, engine);
}

}  // namespace runledger::http
