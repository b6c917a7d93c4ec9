// ConnectorFleet: see sim_connectors.h.
#include "tests/engine/sim_connectors.h"

#include <vector>

namespace runledger::testing {
namespace {

constexpr size_t kConnectorsMin = 2;
constexpr size_t kConnectorsMax = 5;
const std::vector<int64_t> kSchedulesS = {0, 0, 60, 300, 900};
constexpr int kDocumentIds = 24;
constexpr int kDocumentsPerReportMax = 4;
constexpr int kAdoptPercent = 60;
// A failure text longer than last_error keeps: 520 two-byte characters.
constexpr size_t kLongErrorCodePoints = 520;
constexpr size_t kLastErrorCodePoints = 500;

void expect(SimBus& bus, const Sent& r, int status, const std::string& message,
            const std::string& what) {
  if (r.status == kInjectedWriteFailure) return;  // an injected write failure, checked by send()
  if (r.status != status || (!message.empty() && r.message != message)) {
    bus.fail(what + ": expected " + std::to_string(status) + " '" + message + "', got " +
             std::to_string(r.status) + " '" + r.message + "'");
  }
}

connectors::DocumentReport documents(SimRandom& rnd) {
  connectors::DocumentReport d;
  for (size_t n = rnd.below(kDocumentsPerReportMax + 1); n > 0; --n) {
    std::string id = "doc" + std::to_string(rnd.below(kDocumentIds));
    switch (rnd.below(4)) {
      case 0:
        d.pending.push_back(id);
        break;
      case 1:
        d.running.push_back(id);
        break;
      case 2:
        d.indexed.push_back(id);
        break;
      default:
        d.failed.emplace_back(id, "could not parse the page");
        break;
    }
  }
  return d;
}

// The first `n` code points of UTF-8 `text`.
std::string first_code_points(const std::string& text, size_t n) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    bool starts_character = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_character && seen++ == n) return text.substr(0, i);
  }
  return text;
}

std::string repeat(const std::string& piece, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += piece;
  return out;
}

}  // namespace

ConnectorFleet::Info ConnectorFleet::look(SimBus& bus, const std::string& id) const {
  return bus.host().read([&](const State& s) {
    Info info;
    auto it = s.connectors.by_id.find(id);
    if (it == s.connectors.by_id.end()) return info;
    const connectors::Connector& c = it->second;
    info.found = true;
    info.status = connectors::to_string(c.status);
    info.last_error = c.last_error;
    info.running = c.running();
    info.sync_id = c.sync_id;
    info.last_synced_at_ms = c.last_synced_at_ms;
    info.pending_or_running_docs =
        c.document_counts[static_cast<size_t>(connectors::DocStatus::kPending)] +
        c.document_counts[static_cast<size_t>(connectors::DocStatus::kRunning)];
    return info;
  });
}

void ConnectorFleet::act(SimBus& bus) {
  SimRandom& rnd = bus.random();
  if (loops_.size() < kConnectorsMin) return create(bus);
  auto it = loops_.begin();
  std::advance(it, rnd.below(loops_.size()));
  std::string id = it->first;
  int roll = static_cast<int>(rnd.below(100));
  if (roll < 72) return sync_loop(bus, id);
  if (roll < 82) return set_status(bus, id);
  if (roll < 86) return set_schedule(bus, id);
  if (roll < 94) return abort(bus, id);
  if (roll < 96) return remove(bus, id);
  if (loops_.size() < kConnectorsMax) create(bus);
}

void ConnectorFleet::create(SimBus& bus) {
  connectors::Create c{"k" + std::to_string(next_connector_++), "shop feed",
                       bus.random().one_of(kSchedulesS)};
  Sent r = bus.send(c, "operator");
  expect(bus, r, 200, "", "create of connector " + c.id);
  if (r.ok()) loops_[c.id] = Loop{};
}

void ConnectorFleet::set_status(SimBus& bus, const std::string& id) {
  std::string status = bus.random().chance(50) ? "active" : "paused";
  Sent r = bus.send(connectors::Update{id, status, std::nullopt, std::nullopt}, "operator");
  std::string what = "status update of " + id + " to " + status;
  expect(bus, r, 200, "", what);
  Info after = look(bus, id);
  if (r.ok() && (after.status != status || !after.last_error.empty())) {
    bus.fail(what + ": now " + after.status + " with last_error '" + after.last_error + "'");
  }
}

void ConnectorFleet::set_schedule(SimBus& bus, const std::string& id) {
  int64_t every_s = bus.random().one_of(kSchedulesS);
  Sent r = bus.send(connectors::Update{id, std::nullopt, std::nullopt, every_s}, "operator");
  expect(bus, r, 200, "", "schedule update of " + id);
}

void ConnectorFleet::abort(SimBus& bus, const std::string& id) {
  Info before = look(bus, id);
  Sent r = bus.send(connectors::AbortSync{id}, "operator");
  std::string what = "abort of " + id + (before.running ? " while running" : " while idle");
  if (!before.running) return expect(bus, r, 409, "No sync in progress", what);
  expect(bus, r, 200, "", what);
  Info after = look(bus, id);
  if (r.ok() &&
      (after.running || after.status != before.status || after.pending_or_running_docs != 0)) {
    bus.fail(what + ": expected idle, status " + before.status +
             " kept and no pending or running documents; got status " + after.status);
  }
}

void ConnectorFleet::remove(SimBus& bus, const std::string& id) {
  Info before = look(bus, id);
  Sent r = bus.send(connectors::Delete{id}, "operator");
  std::string what = "delete of " + id + (before.running ? " while running" : " while idle");
  if (before.running) {
    return expect(bus, r, 409, "Cannot delete connector while sync is running", what);
  }
  expect(bus, r, 200, "", what);
  if (r.ok()) {
    if (look(bus, id).found) bus.fail(what + ": still readable");
    loops_.erase(id);
  }
}

void ConnectorFleet::sync_loop(SimBus& bus, const std::string& id) {
  SimRandom& rnd = bus.random();
  Loop& loop = loops_[id];
  Info before = look(bus, id);
  // A sync the schedule started (or a lock it broke) is run by this loop too.
  if (before.running && loop.sync_id.empty() && rnd.chance(kAdoptPercent)) {
    loop.sync_id = before.sync_id;
  }
  if (loop.sync_id.empty()) return start_sync(bus, id, before);
  report(bus, id, loop, before);
}

void ConnectorFleet::start_sync(SimBus& bus, const std::string& id, const Info& before) {
  Loop& loop = loops_[id];
  std::string sync_id = id + "-m" + std::to_string(++loop.syncs_started);
  Sent r = bus.send(connectors::StartSync{id, sync_id}, id + "-loop");
  std::string what = "manual sync of " + id + " (" + before.status + ", " +
                     (before.running ? "running" : "idle") + ")";
  if (before.status == "paused") return expect(bus, r, 409, "Connector is paused", what);
  if (before.running) return expect(bus, r, 409, "Sync already in progress", what);
  expect(bus, r, 200, "", what);
  if (r.ok()) loop.sync_id = sync_id;
}

void ConnectorFleet::report(SimBus& bus, const std::string& id, Loop& loop, const Info& before) {
  SimRandom& rnd = bus.random();
  bool current = before.running && before.sync_id == loop.sync_id;
  std::string what =
      "report of sync " + loop.sync_id + " on " + id + (current ? "" : " (no longer current)");
  int roll = static_cast<int>(rnd.below(100));
  Sent r;
  std::string error;
  if (roll < 75) {
    r = bus.send(connectors::ReportProgress{id, loop.sync_id, documents(rnd)}, id + "-loop");
  } else if (roll < 90) {
    r = bus.send(connectors::ReportSucceeded{id, loop.sync_id, documents(rnd)}, id + "-loop");
  } else {
    error = rnd.chance(50) ? "source unreachable" : repeat("\xC3\xA9", kLongErrorCodePoints);
    r = bus.send(connectors::ReportFailed{id, loop.sync_id, error}, id + "-loop");
  }
  if (!current) {
    // Fenced by sync_id: refused, recorded as ignored, and the loop stops.
    expect(bus, r, 409, "", what);
    bool recorded = r.events.size() == 1 && r.events[0] == "SyncReportIgnored";
    if (r.status == 409 && !recorded) bus.fail(what + ": not recorded as SyncReportIgnored");
    loop.sync_id.clear();
    return;
  }
  expect(bus, r, 200, "", what);
  if (roll < 75) return;
  loop.sync_id.clear();
  Info after = look(bus, id);
  bool ok =
      !after.running &&
      (error.empty() ? after.status == "active" && after.last_error.empty() &&
                           after.last_synced_at_ms == bus.now_ms()
                     : after.status == "error" &&
                           after.last_error == first_code_points(error, kLastErrorCodePoints));
  if (r.ok() && !ok) {
    bus.fail(what +
             (error.empty() ? ": expected active, idle, last_error cleared"
                            : ": expected error, idle, last_error cut to 500") +
             "; got " + after.status + " '" + after.last_error.substr(0, 40) + "'");
  }
}

}  // namespace runledger::testing
