// The connector scheduler's decisions (docs/domain.md 2.4, 2.5): what happens at a
// due schedule slot, and the gap recorded for slots missed while the engine
// was down. Every event names the slot it serves (slot_at_ms), so the fold
// moves the schedule on without reading a clock and a replay lands on the
// same next slot.
#include "projections/connector.h"
#include "projections/connector_internal.h"
#include "projections/state.h"

namespace runledger::connectors {

namespace {

using internal::kMsPerS;

struct DueSlots {
  int64_t count = 0;      // slots with time <= now
  int64_t latest_ms = 0;  // the last of them
};

DueSlots due_slots(const Connector& c, int64_t now_ms) {
  int64_t interval_ms = c.sync_schedule_s * kMsPerS;
  DueSlots due;
  due.count = (now_ms - c.next_slot_ms) / interval_ms + 1;
  due.latest_ms = c.next_slot_ms + (due.count - 1) * interval_ms;
  return due;
}

void emit_gap(Decision& d, const Connector& c, int64_t slots_missed) {
  fb::ScheduleGapT gap;
  gap.slots_missed = slots_missed;
  gap.from_ms = c.next_slot_ms;
  gap.to_ms = c.next_slot_ms + (slots_missed - 1) * c.sync_schedule_s * kMsPerS;
  d.emit(connector_stream(c.id), gap);
}

void emit_skip(Decision& d, const Connector& c, const char* reason, int64_t slot_ms) {
  fb::SyncSkippedT skipped;
  skipped.reason = reason;
  skipped.slot_at_ms = slot_ms;
  if (c.running()) skipped.running_sync_id = c.sync_id;
  d.emit(connector_stream(c.id), std::move(skipped));
}

void emit_start(Decision& d, const Connector& c, const char* trigger, int64_t slot_ms,
                const Context& ctx) {
  fb::SyncStartedT started;
  started.sync_id = ctx.ids->next_id("sync");
  started.trigger = trigger;
  started.slot_at_ms = slot_ms;
  d.emit(connector_stream(c.id), std::move(started));
}

void emit_lock_broken(Decision& d, const Connector& c, int64_t slot_ms, const Context& ctx) {
  fb::SyncLockBrokenT broken;
  broken.sync_id = c.sync_id;
  broken.started_at_ms = c.sync_started_at_ms;
  broken.age_s = (ctx.now_ms - c.sync_started_at_ms) / kMsPerS;
  broken.slot_at_ms = slot_ms;
  d.emit(connector_stream(c.id), std::move(broken));
}

// A sync running for stale_lock_s or longer is taken as dead: its run left
// `running` behind (docs/domain.md 2.4, 2.5).
bool lock_is_stale(const Connector& c, const Context& ctx) {
  int64_t stale_lock_s = ctx.policy != nullptr ? ctx.policy->stale_lock_s : Policy{}.stale_lock_s;
  return ctx.now_ms - c.sync_started_at_ms >= stale_lock_s * kMsPerS;
}

// One due connector. Only the latest due slot is served; earlier ones the
// engine fell behind on are recorded as one gap, never caught up.
void handle_due(Decision& d, const Connector& c, const Context& ctx) {
  DueSlots due = due_slots(c, ctx.now_ms);
  if (due.count > 1) emit_gap(d, c, due.count - 1);
  switch (c.status) {
    case Status::kPaused:
      return emit_skip(d, c, "paused", due.latest_ms);
    case Status::kDeleting:
      return emit_skip(d, c, "deleting", due.latest_ms);
    case Status::kActive:
    case Status::kError:  // an earlier failure never blocks the next attempt
      break;
  }
  if (!c.running()) return emit_start(d, c, "schedule", due.latest_ms, ctx);
  if (!lock_is_stale(c, ctx)) return emit_skip(d, c, "sync_running", due.latest_ms);
  emit_lock_broken(d, c, due.latest_ms, ctx);
  emit_start(d, c, "stale_lock", due.latest_ms, ctx);
}

}  // namespace

// Bounded by the number of live connectors; one to three events each.
Decision decide(const State& s, const RunSchedule&, const Context& ctx) {
  Decision d;
  for (const auto& [slot_ms, id] : s.connectors.slots) {
    if (slot_ms > ctx.now_ms) break;
    handle_due(d, s.connectors.by_id.at(id), ctx);
  }
  return d;
}

Decision decide(const State& s, const RecordScheduleGaps&, const Context& ctx) {
  Decision d;
  for (const auto& [slot_ms, id] : s.connectors.slots) {
    if (slot_ms > ctx.now_ms) break;
    const Connector& c = s.connectors.by_id.at(id);
    emit_gap(d, c, due_slots(c, ctx.now_ms).count);
  }
  return d;
}

int64_t next_due_ms(const State& s) {
  return s.connectors.slots.empty() ? 0 : s.connectors.slots.begin()->first;
}

}  // namespace runledger::connectors
