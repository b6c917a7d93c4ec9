// SseReader: a client of GET /v1/events/live over a raw socket. It undoes
// the chunked transfer coding and splits the Server-Sent Events stream into
// events (`id:`, `event:`, `data:` lines; comments skipped). Every read has a
// deadline, so a stream that stalls fails the test instead of hanging it.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/http/raw_connection.h"

namespace runledger::testing {

struct SseEvent {
  std::string id;
  std::string event;  // "" for the default "message"
  std::string data;
};

// The ids of the data events (not `event: end` and the like), as numbers.
std::vector<uint64_t> data_ids(const std::vector<SseEvent>& events);
// from, from + 1, ..., to.
std::vector<uint64_t> seq_range(uint64_t from, uint64_t to);

class SseReader {
 public:
  // Opens `path` (e.g. "/v1/events/live?after=3"), sending Last-Event-ID
  // when `last_event_id` is not empty, and reads the response head. A
  // `receive_buffer_bytes` above 0 makes the socket's receive buffer that
  // small, so the server's bytes pile up on its side while none are read.
  SseReader(int port, const std::string& path, const std::string& last_event_id, Deadline deadline,
            int receive_buffer_bytes = 0);

  // The response status (0 when no head arrived) and its head.
  int status() const { return status_; }
  const std::string& head() const { return head_; }
  // Reads until `count` events arrived in all (counting earlier reads) or
  // the deadline passed or the stream ended; every event so far.
  const std::vector<SseEvent>& read(size_t count, Deadline deadline);

 private:
  void decode();  // raw_ -> text_ (chunked) -> events_

  RawConnection conn_;
  int status_ = 0;
  bool chunked_ = false;
  bool ended_ = false;
  std::string head_;
  std::string raw_;   // undecoded bytes after the head
  std::string text_;  // decoded stream text not yet split into events
  std::vector<SseEvent> events_;
};

}  // namespace runledger::testing
