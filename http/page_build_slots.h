// PageBuildSlot: held while a handler builds a page out of the log (a page
// of GET /v1/events, a stream's events). Such builds are CPU and memory
// alone: they run at most kPageBuildsPerCore per core at once (at least
// two), and the others wait for a slot on their pool thread.
//
// Why: with the pool's 128 threads all building 2.5 MB pages on two cores,
// each build held its page for as long as the cores were split 128 ways,
// and the event loop, the sequencer and the writer waited for the cores with
// them: 128 readers took the server to 480 MB and a health probe to seconds
// (docs/performance.md, "Big reads at once"). With the builds bounded, the
// same load is over as fast, under 100 MB, with probes answered in
// milliseconds.
// Reads that wait rather than compute (a read answered after the next group
// commit) take no slot, and keep the pool's threads to wait in.
// Thread-safe.
#pragma once

#include <cstddef>

namespace runledger::http {

inline constexpr size_t kPageBuildsPerCore = 2;

class PageBuildSlot {
 public:
  PageBuildSlot();  // waits for a slot
  ~PageBuildSlot();
  PageBuildSlot(const PageBuildSlot&) = delete;
  PageBuildSlot& operator=(const PageBuildSlot&) = delete;

  // How many builds run at once in this process.
  static size_t count();
};

}  // namespace runledger::http
