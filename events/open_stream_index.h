// OpenStreamIndex: the part of the stream index that is not in RocksDB yet,
// and the appender's knowledge of each active stream's latest version.
//
// An index entry per appended event was one more random insert into a
// memtable per event, about a fifth of the appending thread's time. So the
// store indexes appended events here, in memory, per stream: the seqs of the
// versions made durable since the last index checkpoint. A checkpoint
// (every kIndexCheckpointEvents events, inside an append's WriteBatch)
// writes each stream's run as one entry of the stream_index family
// (keys.h); once it is durable, the runs here start over after the versions
// it wrote. The log holds every event, so nothing here needs to be durable:
// on open, the store rebuilds it from the events after "index_covers".
//
// Each stream appended to recently has an entry, with or without versions
// since the checkpoint: the appender checks each event's version against it
// with one lookup. An entry without versions through a whole checkpoint
// interval is dropped (evict_idle), so memory is bounded by what two
// intervals touch, not by the log.
//
// Not thread-safe: the store guards it with its index mutex. Readers use
// find() and copy what they need under that mutex. The appender, the only
// thread that changes it, reads it without the mutex and takes the mutex
// for what it changes that readers see (insert, publish, checkpointed,
// evict_idle, clear); an entry's `staged_version` is the appender's alone.
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

// The durable versions of one stream after those in the family: the family
// holds versions 1 to first_version - 1, seqs[i] is the seq of version
// first_version + i.
struct StreamRun {
  uint32_t first_version = 1;
  std::vector<uint64_t> seqs;
  uint32_t last_version() const { return first_version + static_cast<uint32_t>(seqs.size()) - 1; }
};

struct OpenStream {
  StreamRun run;
  // Appender only: the latest version, counting the batch being written.
  uint32_t staged_version = 0;
};

class OpenStreamIndex {
 public:
  // The stream's entry, or nullptr.
  const StreamRun* find(std::string_view stream) const;
  OpenStream* find_open(std::string_view stream);
  // A new entry for a stream whose versions 1 to `stored_version` are all
  // in the family. Entry addresses stay valid until evict_idle() or clear().
  OpenStream* insert(std::string_view stream, uint32_t stored_version);
  // Makes `version` (the next one of the entry's run) durable at `seq`.
  void publish(OpenStream* stream, uint64_t seq);
  // Adds the seq of a stream's next version, making an entry when there is
  // none (whose run then starts at `version`): how the index is rebuilt from
  // the log. False, and nothing added, when `version` does not continue the
  // stream's run.
  bool add(std::string_view stream, uint32_t version, uint64_t seq);

  // Seqs held over every stream: what tells when to checkpoint.
  size_t events() const { return events_; }
  bool empty() const { return events_ == 0; }
  // Every run with versions, in no particular order.
  template <typename Fn>
  void for_each_run(Fn&& fn) const {
    for (const auto& [stream, open] : streams_) {
      if (!open.run.seqs.empty()) fn(std::string_view(stream), open.run);
    }
  }
  // The runs with versions in the byte order of their streams' names, which
  // is the order of their keys in the stream_index family.
  std::vector<std::pair<std::string_view, const StreamRun*>> sorted_runs() const;
  // Copies of every run with versions, for a reader.
  OpenStreamIndex copy_runs() const;

  // After a checkpoint of every run is durable: each run starts over after
  // its versions, which the family now holds.
  void checkpointed();
  // Drops the entries without versions since the last checkpoint.
  void evict_idle();
  void clear();

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, OpenStream, NameHash, std::equal_to<>> streams_;
  size_t events_ = 0;
};

}  // namespace runledger
