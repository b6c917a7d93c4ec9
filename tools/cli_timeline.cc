// runledger timeline ENTITY: one entity's history for a person, one line per
// event: time, delta since the line before, actor, the transition and the
// key fields. For a job the lines also show who held its target (the other
// jobs' leases on it) and the holds placed and released on it, and a list of
// its lease windows closes the output.
//
// A job's timeline reads its stream first (to learn its target and whether
// it finished), then the log up to its last event (to the end while it is
// live), folding only the jobs and holds of its target.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <set>
#include <vector>

#include "base/time_text.h"
#include "engine/entities.h"
#include "events/event_codec.h"
#include "projections/stream_name.h"
#include "tools/cli_commands.h"
#include "tools/cli_timeline_format.h"

namespace runledger::cli {

namespace {

using timeline::attempt_of;
using timeline::attempt_state;
using timeline::key_fields;
using timeline::transition;

// Column widths of a line: time (RFC 3339 with ms), delta, actor, then the
// event. A note lines up under the event.
constexpr int kTimeWidth = 24;
constexpr int kDeltaWidth = 10;
constexpr int kActorWidth = 10;
constexpr int kColumnGap = 2;
constexpr int kNoteIndent = kTimeWidth + kDeltaWidth + kActorWidth + 3 * kColumnGap;

// The id in a stream name ("job/j1" -> "j1").
std::string id_of(std::string_view stream) {
  auto name = parse_stream(stream);
  return name ? std::string(name->id) : std::string(stream);
}

struct TimelineOptions {
  LogSource source;
  std::string entity;
};

// Writes the lines, each with its delta from the line before.
class Printer {
 public:
  void line(int64_t at_ms, std::string_view actor, const std::string& text) {
    std::string delta = timeline::format_delta(printed_ ? at_ms - previous_ms_ : 0);
    const std::string shown_actor = timeline::for_terminal(actor);
    std::printf("%s  %*s  %-*s  %s\n", format_time_ms(at_ms).c_str(), kDeltaWidth, delta.c_str(),
                kActorWidth, shown_actor.c_str(), timeline::for_terminal(text).c_str());
    previous_ms_ = at_ms;
    printed_ = true;
  }
  // A line that adds to the one above it (no time of its own).
  void note(const std::string& text) {
    std::printf("%*s%s\n", kNoteIndent, "", timeline::for_terminal(text).c_str());
  }

 private:
  bool printed_ = false;
  int64_t previous_ms_ = 0;
};

std::string with_fields(std::string head, const fb::Event& e) {
  std::string fields = key_fields(e);
  return fields.empty() ? head : head + "  " + fields;
}

std::string_view actor_of(const fb::Event& e) {
  return e.actor() == nullptr ? std::string_view() : e.actor()->string_view();
}

// A time a worker held the job's lease: from the claim (or reattach) until
// the release, expiry, staleness or end of the attempt.
struct LeaseWindow {
  int attempt = 0;
  std::string worker;
  int64_t from_ms = 0;
  int64_t until_ms = 0;  // 0: still open
  int64_t expires_ms = 0;
  std::string ended_by;
};

// The walk of a job's timeline over the log.
class JobTimeline {
 public:
  JobTimeline(std::string id, std::string target, uint64_t first_seq)
      : id_(std::move(id)),
        stream_(job_stream(id_)),
        target_(std::move(target)),
        first_seq_(first_seq) {}
  bool visit(const fb::Event& e);
  void print_lease_windows() const;

 private:
  enum class Kind { kNone, kOwn, kOtherJob, kHold };
  Kind classify(const fb::Event& e);
  void own_line(const fb::Event& e, const std::string& before, const std::string& after);
  void other_job_line(const fb::Event& e, const std::string& holder_before);
  void hold_line(const fb::Event& e, const std::string& before);
  void track_lease(const fb::Event& e);
  std::string holder() const;
  bool own_finished() const;

  const std::string id_, stream_, target_;
  const uint64_t first_seq_;
  State world_;  // the jobs and holds of the target
  std::set<std::string> jobs_on_target_;
  std::set<std::string> holds_on_target_;
  std::vector<LeaseWindow> windows_;
  Printer out_;
};

JobTimeline::Kind JobTimeline::classify(const fb::Event& e) {
  const std::string_view stream = e.stream()->string_view();
  if (stream == stream_) return Kind::kOwn;
  auto name = parse_stream(stream);
  if (!name) return Kind::kNone;
  const std::string id(name->id);
  switch (name->kind) {
    case StreamKind::kJob:
      if (const auto* enq = e.payload_as_JobEnqueued();
          enq && enq->target() && enq->target()->string_view() == target_) {
        jobs_on_target_.insert(id);
      }
      return jobs_on_target_.count(id) ? Kind::kOtherJob : Kind::kNone;
    case StreamKind::kHold:
      if (const auto* placed = e.payload_as_HoldPlaced();
          placed && placed->target() && placed->target()->string_view() == target_) {
        holds_on_target_.insert(id);
      }
      return holds_on_target_.count(id) ? Kind::kHold : Kind::kNone;
    case StreamKind::kConnector:
      return Kind::kNone;
  }
  return Kind::kNone;
}

std::string JobTimeline::holder() const {
  auto it = world_.jobs.holder.find(target_);
  return it == world_.jobs.holder.end() ? std::string() : it->second;
}

bool JobTimeline::own_finished() const {
  auto it = world_.jobs.by_id.find(id_);
  return it != world_.jobs.by_id.end() && jobs::finished(it->second);
}

bool JobTimeline::visit(const fb::Event& e) {
  const Kind kind = classify(e);
  if (kind == Kind::kNone) return true;
  const int attempt = kind == Kind::kOwn ? attempt_of(e) : 0;
  const std::string before = attempt_state(world_, id_, attempt);
  const std::string holder_before = holder();
  const std::string hold_id = kind == Kind::kHold ? id_of(e.stream()->string_view()) : "";
  const std::string hold_before = timeline::hold_state(world_, hold_id);
  const bool was_finished = own_finished();
  evolve(world_, e);
  if (e.seq() < first_seq_) return true;  // context only: who held the target before
  switch (kind) {
    case Kind::kOwn:
      own_line(e, before, attempt_state(world_, id_, attempt));
      break;
    case Kind::kOtherJob:
      if (!was_finished) other_job_line(e, holder_before);
      break;
    case Kind::kHold:
      hold_line(e, hold_before);
      break;
    case Kind::kNone:
      break;
  }
  return true;
}

void JobTimeline::own_line(const fb::Event& e, const std::string& before,
                           const std::string& after) {
  const std::string type(event_type_name(e.payload_type()));
  const int attempt = attempt_of(e);
  out_.line(
      e.recorded_at_ms(), actor_of(e),
      with_fields(fmt::format("{} attempt {}: {}", type, attempt, transition(before, after)), e));
  track_lease(e);
  if (e.payload_type() != fb::Payload::JobEnqueued) return;
  if (std::string h = holder(); !h.empty() && h != id_) {
    out_.note(fmt::format("target {} is held by job {}", target_, h));
  }
  auto blocking = world_.holds.blocking_by_target.find(target_);
  if (blocking == world_.holds.blocking_by_target.end()) return;
  for (const auto& hold : blocking->second) {
    out_.note(fmt::format("target {} is blocked by hold {}", target_, hold));
  }
}

void JobTimeline::other_job_line(const fb::Event& e, const std::string& holder_before) {
  const std::string other = id_of(e.stream()->string_view());
  const std::string now = holder();
  std::string what;
  if (now == other && holder_before != other) {
    what = fmt::format("target {} now held by job {}", target_, other);
  } else if (holder_before == other && now != other) {
    what = fmt::format("target {} freed by job {}", target_, other);
  } else {
    return;  // the other job's event did not change who holds the target
  }
  out_.line(
      e.recorded_at_ms(), actor_of(e),
      with_fields(fmt::format("job/{} {}: {}", other, event_type_name(e.payload_type()), what), e));
}

void JobTimeline::hold_line(const fb::Event& e, const std::string& before) {
  const std::string hold = id_of(e.stream()->string_view());
  out_.line(e.recorded_at_ms(), actor_of(e),
            with_fields(fmt::format("hold/{} {}: {}", hold, event_type_name(e.payload_type()),
                                    transition(before, timeline::hold_state(world_, hold))),
                        e));
}

bool opens_lease(fb::Payload t) {
  return t == fb::Payload::JobLeased || t == fb::Payload::ExecutionReattached;
}

// The lease stops admitting the worker: given back, run out, or the attempt
// ended or went STALE (LeaseExpired leaves a RUNNING attempt RUNNING until the
// AttemptStale of the same command, but the lease is over already).
bool ends_lease(fb::Payload t) {
  using P = fb::Payload;
  return t == P::LeaseReleased || t == P::LeaseExpired || t == P::AttemptStale ||
         t == P::AttemptSucceeded || t == P::AttemptFailed || t == P::AttemptCancelled ||
         t == P::AttemptResolved || t == P::AttemptYielded;
}

void JobTimeline::track_lease(const fb::Event& e) {
  const fb::Payload t = e.payload_type();
  const bool open = !windows_.empty() && windows_.back().until_ms == 0;
  if (open && (opens_lease(t) || ends_lease(t))) {
    windows_.back().until_ms = e.recorded_at_ms();
    windows_.back().ended_by = event_type_name(t);
  }
  const jobs::Attempt* a = world_.jobs.by_id.at(id_).attempt(attempt_of(e));
  if (a == nullptr) return;
  if (opens_lease(t)) {
    windows_.push_back(LeaseWindow{a->number, a->worker, e.recorded_at_ms(), 0, 0, ""});
  }
  if (!windows_.empty() && windows_.back().until_ms == 0) {
    windows_.back().expires_ms = a->lease_expires_at_ms;
  }
}

void JobTimeline::print_lease_windows() const {
  if (windows_.empty()) {
    std::printf("lease windows: none\n");
    return;
  }
  std::printf("lease windows:\n");
  for (const auto& w : windows_) {
    std::string end =
        w.until_ms == 0
            ? fmt::format("open, expires {}", format_time_ms(w.expires_ms))
            : fmt::format("{} ({}) ended by {}", format_time_ms(w.until_ms),
                          timeline::format_delta(w.until_ms - w.from_ms).substr(1), w.ended_by);
    std::printf("  attempt %d  worker %s  %s -> %s\n", w.attempt,
                timeline::for_terminal(w.worker).c_str(), format_time_ms(w.from_ms).c_str(),
                end.c_str());
  }
}

int job_timeline(const EventStore& store, const std::string& stream) {
  const std::string id = id_of(stream);
  State own;
  std::string target;
  uint64_t first_seq = 0;
  Status s = store.read_stream(stream, 0, [&](const fb::Event& e, std::string_view) {
    if (first_seq == 0) first_seq = e.seq();
    if (const auto* enq = e.payload_as_JobEnqueued(); enq && enq->target()) {
      target = enq->target()->str();
    }
    evolve(own, e);
    return true;
  });
  if (!s.ok()) return fail("timeline", s);
  if (first_seq == 0) return fail(stream + " does not exist", kExitFindings);
  // A finished job's timeline ends with it; a live one runs to the end of the log.
  const bool finished = jobs::finished(own.jobs.by_id.at(id));
  JobTimeline walk(id, target, first_seq);
  Progress progress("timeline", store.last_seq());
  s = store.read_range(0, finished ? own.last_seq : 0, [&](const fb::Event& e, std::string_view) {
    progress.update(e.seq());
    return walk.visit(e);
  });
  if (!s.ok()) return fail("timeline", s);
  walk.print_lease_windows();
  return kExitOk;
}

// Connectors and holds: their own stream, with the state each event left.
int stream_timeline(const EventStore& store, const std::string& stream) {
  auto name = parse_stream(stream);
  const std::string id(name->id);
  auto state_of = [&](const State& s) {
    return name->kind == StreamKind::kHold ? timeline::hold_state(s, id)
                                           : timeline::connector_state(s, id);
  };
  State world;
  Printer out;
  bool any = false;
  Status s = store.read_stream(stream, 0, [&](const fb::Event& e, std::string_view) {
    const std::string before = state_of(world);
    evolve(world, e);
    out.line(e.recorded_at_ms(), actor_of(e),
             with_fields(fmt::format("{}: {}", event_type_name(e.payload_type()),
                                     transition(before, state_of(world))),
                         e));
    any = true;
    return true;
  });
  if (!s.ok()) return fail("timeline", s);
  if (!any) return fail(stream + " does not exist", kExitFindings);
  return kExitOk;
}

int run(const TimelineOptions& o) {
  std::string stream;
  if (!entity_stream(o.entity, &stream)) {
    return fail("ENTITY must be job/ID, connector/ID, hold/ID or a job id, got '" + o.entity + "'",
                kExitUsage);
  }
  std::unique_ptr<ReadStore> rs;
  if (Status s = ReadStore::open(o.source, &rs); !s.ok()) return fail("timeline", s);
  if (parse_stream(stream)->kind == StreamKind::kJob) return job_timeline(rs->store(), stream);
  return stream_timeline(rs->store(), stream);
}

}  // namespace

Subcommand add_timeline(CLI::App& root) {
  auto o = std::make_shared<TimelineOptions>();
  CLI::App* app = root.add_subcommand(
      "timeline",
      "Print an entity's history for a person: one line per event with its time, the delta "
      "since the line before, the actor, the transition and the key fields. For a job also who "
      "held its target, the holds placed and released on it, and its lease windows.");
  app->add_option("ENTITY", o->entity, "job/ID, connector/ID, hold/ID, or a bare job id")
      ->required();
  add_log_source(app, &o->source);
  return {app, [o] { return run(*o); }};
}

}  // namespace runledger::cli
