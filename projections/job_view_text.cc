// The job's view (job_view.cc) written straight as text: the sequencer
// renders the view of every job that finishes, and building the json tree,
// re-parsing the stored JSON texts in it and dumping it took more of its time
// than anything else. The bytes are those of view(s, j).dump(): keys in the
// order std::map sorts them, strings escaped as dump() escapes them.
#include <optional>
#include <string_view>

#include "base/time_text.h"
#include "events/event_codec.h"
#include "projections/job_view_internal.h"
#include "projections/json_text.h"

namespace runledger::jobs {

namespace {

// Appends the pieces of one view. `ok` turns false at the first value that
// dump() would not write the way this does (text that is not UTF-8, where
// dump() throws): the caller then renders through the tree, so even the
// exception is the tree's own.
struct Writer {
  std::string& out;
  bool ok = true;

  void raw(std::string_view text) { out += text; }
  void string(std::string_view s) { ok = ok && json_text::append_string(out, s); }
  void integer(int64_t v) { json_text::append_int(out, v); }
  void boolean(bool v) { json_text::append_bool(out, v); }
  void text_or_null(const std::string& s) {
    if (s.empty()) {
      raw("null");
    } else {
      string(s);
    }
  }
  void time_or_null(int64_t ms) {
    if (ms == 0) {
      raw("null");
    } else {
      string(format_time_ms(ms));
    }
  }
  void strings(const std::vector<std::string>& list) {
    raw("[");
    for (size_t i = 0; i < list.size(); ++i) {
      if (i > 0) raw(",");
      string(list[i]);
    }
    raw("]");
  }
  // Stored JSON text, as parse_or_text then dump() render it. The text is
  // normally dump() output already (the HTTP layer stores that), and then it
  // is copied; anything else goes through the tree, for that value alone.
  void stored_json(const std::string& text) {
    if (text.empty()) {
      raw("null");
    } else if (json_text::is_dump_form(text)) {
      raw(text);
    } else {
      try {
        out += detail::parse_or_text(text).dump();
      } catch (const nlohmann::json::type_error&) {
        ok = false;
      }
    }
  }

  void step(const Step& st) {
    raw("{");
    if (!st.error.empty()) {
      raw(R"("error":)");
      string(st.error);
      raw(",");
    }
    raw(R"("finished_at":)");
    time_or_null(st.finished_at_ms);
    raw(R"(,"name":)");
    string(st.name);
    if (!st.output.empty()) {
      raw(R"(,"output":)");
      stored_json(st.output);
    }
    if (st.state == StepState::kReused) {
      raw(R"(,"reused_from":)");
      integer(st.reused_from);
    }
    raw(R"(,"started_at":)");
    time_or_null(st.started_at_ms);
    raw(R"(,"state":)");
    string(to_string(st.state));
    raw("}");
  }

  void attempt_summary(const Attempt& a) {
    raw(R"({"attempt":)");
    integer(a.number);
    if (!a.error.empty()) {
      raw(R"(,"error":)");
      string(a.error);
    }
    raw(R"(,"finished_at":)");
    time_or_null(a.finished_at_ms);
    raw(R"(,"started_at":)");
    time_or_null(a.started_at_ms);
    raw(R"(,"state":)");
    string(to_string(a.state));
    raw("}");
  }

  void lease(const Attempt& a) {
    if (a.state != AttemptState::kLeased && a.state != AttemptState::kRunning) {
      raw("null");
      return;
    }
    raw(R"({"expires_at":)");
    time_or_null(a.lease_expires_at_ms);
    raw(R"(,"worker":)");
    string(a.worker);
    raw("}");
  }

  void blocked_by(const State& s, const Job& j) {
    auto blocker = detail::blocked_by(s, j);
    if (!blocker) {
      raw("null");
      return;
    }
    raw("{");
    string(blocker->kind);
    raw(":");
    string(*blocker->id);
    raw("}");
  }

  void client_token(const Job& j, int attempt) {
    raw("\"");
    // The id and "-a<n>" escape apart as they would together: the suffix is
    // ASCII, and an id that is not UTF-8 stays invalid with it.
    ok = ok && json_text::append_escaped(out, j.id);
    raw("-a");
    integer(attempt);
    raw("\"");
  }

  void job(const State& s, const Job& j) {
    const Attempt& a = j.latest();
    raw(R"({"attempt":)");
    integer(a.number);
    raw(R"(,"attempts":[)");
    for (size_t i = 0; i < j.attempts.size(); ++i) {
      if (i > 0) raw(",");
      attempt_summary(j.attempts[i]);
    }
    raw(R"(],"blocked_by":)");
    blocked_by(s, j);
    raw(R"(,"cancel_reason":)");
    text_or_null(a.cancel_reason);
    raw(R"(,"cancel_requested":)");
    boolean(a.cancel_requested);
    raw(R"(,"cleanup_needed":)");
    boolean(a.cleanup_needed);
    raw(R"(,"client_token":)");
    client_token(j, a.number);
    raw(R"(,"created_at":)");
    time_or_null(j.created_at_ms);
    raw(R"(,"error":)");
    text_or_null(a.error);
    raw(R"(,"execution_handle":)");
    text_or_null(a.execution_handle);
    raw(R"(,"id":)");
    string(j.id);
    raw(R"(,"input":)");
    stored_json(j.input);
    raw(R"(,"kind":)");
    string(j.kind);
    raw(R"(,"last_completed_step":)");
    text_or_null(a.last_completed_step);
    raw(R"(,"lease":)");
    lease(a);
    raw(R"(,"max_attempts":)");
    integer(j.max_attempts);
    raw(R"(,"plan":)");
    strings(j.plan);
    raw(R"(,"priority":)");
    integer(j.priority);
    raw(R"(,"reuse_on_rerun":)");
    strings(j.reuse_on_rerun);
    raw(R"(,"state":)");
    string(to_string(a.state));
    raw(R"(,"steps":[)");
    for (size_t i = 0; i < a.steps.size(); ++i) {
      if (i > 0) raw(",");
      step(a.steps[i]);
    }
    raw(R"(],"target":)");
    string(j.target);
    raw(R"(,"updated_at":)");
    time_or_null(j.updated_at_ms);
    raw(R"(,"version":)");
    integer(j.version);
    raw("}");
  }
};

// Room for the whole view in one allocation: the variable parts plus a
// generous allowance for keys, times and numbers.
size_t size_hint(const Job& j) {
  const Attempt& a = j.latest();
  size_t n = 640 + j.id.size() * 2 + j.kind.size() + j.target.size() + j.input.size() +
             a.cancel_reason.size() + a.execution_handle.size() + a.error.size() + a.worker.size() +
             a.last_completed_step.size() + j.attempts.size() * 112;
  for (const std::string& p : j.plan) n += p.size() + 3;
  for (const std::string& p : j.reuse_on_rerun) n += p.size() + 3;
  for (const Attempt& each : j.attempts) n += each.error.size();
  for (const Step& st : a.steps) n += 128 + st.name.size() + st.output.size() + st.error.size();
  return n;
}

}  // namespace

std::optional<std::string> try_view_text(const State& s, const Job& j) {
  std::string out;
  out.reserve(size_hint(j));
  Writer w{out};
  w.job(s, j);
  if (!w.ok) return std::nullopt;
  return out;
}

std::string view_text(const State& s, const Job& j) {
  if (auto text = try_view_text(s, j)) return std::move(*text);
  return view(s, j).dump();
}

}  // namespace runledger::jobs
