// OpenStreamIndex: the part of the stream index that is not in RocksDB yet.
//
// An index entry per appended event was one more random insert into a
// memtable per event, about a fifth of the appending thread's time. So the
// store indexes appended events here, in memory, per stream: the seqs of the
// versions appended since the last index checkpoint. A checkpoint (every
// kIndexCheckpointEvents events, inside an append's WriteBatch) writes each
// stream's run as one entry of the stream_index family (keys.h) and empties
// this. The log holds every event, so nothing here needs to be durable: on
// open, the store rebuilds it from the events after "index_covers".
//
// Memory: bounded by the checkpoint interval (at most that many seqs, and
// a stream name per stream they belong to), not by the log.
//
// Not thread-safe: the store guards it with its index mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace runledger {

// The seqs of consecutive versions of one stream.
struct StreamRun {
  uint32_t first_version = 0;
  std::vector<uint64_t> seqs;  // of first_version, first_version + 1, ...
  uint32_t last_version() const { return first_version + static_cast<uint32_t>(seqs.size()) - 1; }
};

class OpenStreamIndex {
 public:
  // Adds the seq of a stream's next version. False, and nothing added,
  // when `version` does not continue the stream's run here.
  bool add(std::string_view stream, uint32_t version, uint64_t seq);
  // The stream's run, or nullptr when none of its versions is held.
  const StreamRun* find(std::string_view stream) const;
  // Seqs held over every stream: what tells when to checkpoint.
  size_t events() const { return events_; }
  bool empty() const { return runs_.empty(); }
  // Every stream's run, in no particular order.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const auto& [stream, run] : runs_) fn(std::string_view(stream), run);
  }
  // The streams in the byte order of their names, which is the order of
  // their keys in the stream_index family.
  std::vector<std::pair<std::string_view, const StreamRun*>> sorted() const;
  void clear();

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, StreamRun, NameHash, std::equal_to<>> runs_;
  size_t events_ = 0;
};

}  // namespace runledger
