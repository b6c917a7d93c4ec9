// The records the sequencer and the writer thread pass between them:
// private to the engine's own files (engine.cc, engine_commit.cc).
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace runledger {

// A request from the queue, with its reply once decided.
struct Engine::Pending {
  Request req;
  Completion done;
  std::chrono::steady_clock::time_point submitted;
  Reply reply;
  const char* type = "read";
  const char* outcome = "ok";
};

// A group commit: the requests decided while the batch before it was being
// written (the open batch, see Engine::run) and what deciding them produced.
// What the writer writes (WriteUnit::out) are their events, idempotency
// records and index entries.
struct Engine::Batch : WriteUnit {
  std::deque<Pending> requests;
  std::vector<std::string> touched;  // streams with events in it; sorted, unique once decided
  // Of those, the ones finished before it touched them, with the index
  // entries of their stored views (view_index::entries_of).
  std::map<std::string, std::vector<std::string>> reopened;
  std::vector<std::string> finished;  // of those, the ones finished after it
  std::vector<std::string> hydrated;  // streams it loaded from the log
  bool apply_failed = false;          // a command failed half-way: the State must be rebuilt
  // The stored finished jobs by state once it is durable, when it changes them.
  std::optional<view_index::FinishedCounts> finished_counts;
  // The State's live entities as of this batch's last event, stored by the
  // writer once the batch is durable (EventStore::put_snapshot).
  std::optional<std::string> snapshot;
};

}  // namespace runledger
