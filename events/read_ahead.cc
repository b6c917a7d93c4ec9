// read_range_ahead: see read_ahead.h.
#include "events/read_ahead.h"

#include "base/sha256.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace runledger {
namespace {

// A chunk is handed over once it holds this much; a few in the queue keep
// both threads busy without holding more than a few MiB.
constexpr size_t kChunkBytes = size_t{1} << 20;
constexpr size_t kChunksQueuedMax = 4;

// Events copied back to back, each starting on an 8-byte boundary.
struct Chunk {
  std::vector<uint64_t> words;
  std::vector<std::pair<size_t, size_t>> spans;  // byte offset, length
  std::vector<Hash> hashes;                      // SHA-256 of each event's bytes
  size_t used_bytes = 0;

  void clear() {
    spans.clear();
    hashes.clear();
    used_bytes = 0;
  }
  void add(std::string_view bytes) {
    const size_t padded = (bytes.size() + 7) / 8 * 8;
    if (used_bytes + padded > words.size() * 8) {
      words.resize(std::max(words.size() * 2, (used_bytes + padded) / 8 + kChunkBytes / 8));
    }
    std::memcpy(reinterpret_cast<char*>(words.data()) + used_bytes, bytes.data(), bytes.size());
    spans.emplace_back(used_bytes, bytes.size());
    hashes.push_back(sha256(bytes));
    used_bytes += padded;
  }
  std::string_view at(size_t i) const {
    return {reinterpret_cast<const char*>(words.data()) + spans[i].first, spans[i].second};
  }
};

// The queue between the reader and the caller, and the reader's outcome.
class Handover {
 public:
  // Reader: waits for room (or a stop); false when the caller stopped.
  bool put(Chunk chunk) {
    std::unique_lock lock(mu_);
    room_.wait(lock, [&] { return stopped_ || full_.size() < kChunksQueuedMax; });
    if (stopped_) return false;
    full_.push_back(std::move(chunk));
    ready_.notify_one();
    return true;
  }
  void finish(Status status) {
    std::lock_guard lock(mu_);
    status_ = std::move(status);
    finished_ = true;
    ready_.notify_one();
  }
  // A used chunk back to the reader, or a new one.
  Chunk spare() {
    std::lock_guard lock(mu_);
    if (spare_.empty()) return Chunk{};
    Chunk c = std::move(spare_.back());
    spare_.pop_back();
    c.clear();
    return c;
  }

  // Caller: the next chunk, or false once the reader finished and all were taken.
  bool take(Chunk* out) {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [&] { return finished_ || !full_.empty(); });
    if (full_.empty()) return false;
    *out = std::move(full_.front());
    full_.pop_front();
    room_.notify_one();
    return true;
  }
  void recycle(Chunk c) {
    std::lock_guard lock(mu_);
    spare_.push_back(std::move(c));
  }
  void stop() {
    std::lock_guard lock(mu_);
    stopped_ = true;
    room_.notify_one();
  }
  Status status() {
    std::lock_guard lock(mu_);
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable room_;
  std::condition_variable ready_;
  std::deque<Chunk> full_;
  std::vector<Chunk> spare_;
  bool stopped_ = false;
  bool finished_ = false;
  Status status_;
};

void read_into(const EventStore& store, uint64_t after, uint64_t until, Handover& handover) {
  Chunk chunk = handover.spare();
  bool stopped = false;
  Status st = store.read_range(after, until, [&](const fb::Event&, std::string_view bytes) {
    chunk.add(bytes);
    if (chunk.used_bytes < kChunkBytes) return true;
    stopped = !handover.put(std::move(chunk));
    chunk = handover.spare();
    return !stopped;
  });
  if (!stopped && !chunk.spans.empty()) handover.put(std::move(chunk));
  handover.finish(std::move(st));
}

}  // namespace

Status read_range_ahead(const EventStore& store, uint64_t after, uint64_t until,
                        const HashedEventVisitor& visit) {
  Handover handover;
  std::thread reader([&] { read_into(store, after, until, handover); });
  // However the caller's loop ends (done, stopped, or an exception from
  // `visit`), the reader is told to stop and joined before `handover` goes.
  struct Joiner {
    Handover& handover;
    std::thread& reader;
    ~Joiner() {
      handover.stop();
      reader.join();
    }
  } joiner{handover, reader};
  Chunk chunk;
  while (handover.take(&chunk)) {
    for (size_t i = 0; i < chunk.spans.size(); ++i) {
      std::string_view bytes = chunk.at(i);
      // Verified by the store as it read them; the copy is byte for byte.
      if (!visit(*fb::GetEvent(bytes.data()), bytes, chunk.hashes[i])) return Status::Ok();
    }
    handover.recycle(std::move(chunk));
  }
  return handover.status();
}

}  // namespace runledger
