// The counts of finished jobs by state whose views are stored
// (engine/view_index.h), as three stages of the group commit: as of every
// batch decided, as of the batch with the writer, and as of what is durable.
// The decided counts move as each batch closes; the writer's batch carries
// its own when it changed them; only once that batch is durable do they
// become what `/metrics` and the listings tell (stored()). A failed write
// drops its batch's counts, and a rebuild starts every stage over from the
// store.
//
// Thread-compatible: the engine's sequencer keeps it, under its state lock.
#pragma once

#include <optional>

#include "engine/view_index.h"

namespace runledger {

class FinishedCountStages {
 public:
  using Counts = view_index::FinishedCounts;

  // Every stage as the store holds it (at the start, after a rebuild).
  void reset(const Counts& stored);
  // As of the batches decided so far: the batch being closed adds to them.
  Counts& decided() { return decided_; }
  const Counts& decided() const { return decided_; }
  // A batch went to the writer, with its counts when it changed them.
  void hand_over(const std::optional<Counts>& batch_counts) { writing_ = batch_counts; }
  // The writer's batch is durable: its counts, if any, are the stored ones.
  void writer_succeeded();
  // Its write failed: its counts are not the store's.
  void writer_failed() { writing_.reset(); }
  // What is durable.
  const Counts& stored() const { return stored_; }

 private:
  Counts decided_{};
  std::optional<Counts> writing_;
  Counts stored_{};
};

}  // namespace runledger
