// ForwardingStore: an EventStore that passes every call to another one.
// Decorators (fault injection, recording, crash simulation) derive from it
// and override only the calls they change.
// Thread-safe as the store it wraps.
#pragma once

#include <memory>
#include <utility>

#include "events/event_store.h"

namespace runledger {

class ForwardingStore : public EventStore {
 public:
  // Shares (or, given a unique_ptr, takes) ownership of `inner`.
  explicit ForwardingStore(std::shared_ptr<EventStore> inner) : inner_(std::move(inner)) {}
  // Borrows `inner`, which must outlive this store.
  explicit ForwardingStore(EventStore* inner) : inner_(inner, [](EventStore*) {}) {}

  Status append(const AppendBatch& batch) override { return inner_->append(batch); }
  uint64_t last_seq() const override { return inner_->last_seq(); }
  Hash last_hash() const override { return inner_->last_hash(); }
  Status read_range(uint64_t after, uint64_t until, const EventVisitor& visit) const override {
    return inner_->read_range(after, until, visit);
  }
  Status read_event(uint64_t seq, std::string* bytes) const override {
    return inner_->read_event(seq, bytes);
  }
  Status read_stream(std::string_view stream, uint64_t until_seq,
                     const EventVisitor& visit) const override {
    return inner_->read_stream(stream, until_seq, visit);
  }
  Status read_stream_from(std::string_view stream, uint32_t after_version, uint64_t after_seq,
                          const EventVisitor& visit) const override {
    return inner_->read_stream_from(stream, after_version, after_seq, visit);
  }
  Status stream_version(std::string_view stream, uint32_t* version) const override {
    return inner_->stream_version(stream, version);
  }
  Status scan_stream_index(const StreamIndexVisitor& visit) const override {
    return inner_->scan_stream_index(visit);
  }
  Status get_idempotency(std::string_view key, std::string* value) const override {
    return inner_->get_idempotency(key, value);
  }
  Status purge_idempotency(int64_t before_ms) override {
    return inner_->purge_idempotency(before_ms);
  }
  Status get_view(std::string_view key, std::string* value) const override {
    return inner_->get_view(key, value);
  }
  Status scan_views(std::string_view prefix, std::string_view after_key,
                    const std::function<bool(std::string_view key, std::string_view value)>& visit)
      const override {
    return inner_->scan_views(prefix, after_key, visit);
  }
  Status get_snapshot(std::string* value) const override { return inner_->get_snapshot(value); }
  Status refresh() override { return inner_->refresh(); }
  Status verify_log_checksums() const override { return inner_->verify_log_checksums(); }
  Status flush_to_tables() override { return inner_->flush_to_tables(); }
  Status open_damage() const override { return inner_->open_damage(); }
  Status index_damage() const override { return inner_->index_damage(); }
  std::vector<MemoryPart> memory_parts() const override { return inner_->memory_parts(); }

  EventStore& inner() { return *inner_; }

 private:
  std::shared_ptr<EventStore> inner_;
};

}  // namespace runledger
