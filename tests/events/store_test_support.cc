#include "tests/events/store_test_support.h"

#include <stdexcept>

#include "events/keys.h"

namespace runledger::testing {
namespace {

const fb::PayloadUnion& sample_payload() {
  static const fb::PayloadUnion payload = [] {
    fb::JobEnqueuedT job;
    job.kind = "export";
    job.target = "warehouse/orders";
    job.input = R"({"day":"2024-05-01"})";
    job.plan = {"extract", "transform", "load"};
    fb::PayloadUnion u;
    u.Set(std::move(job));
    return u;
  }();
  return payload;
}

}  // namespace

std::string LogBuilder::encode(uint64_t seq, const std::string& stream, uint32_t version,
                               const Hash& prev_hash) {
  EventDraft d;
  d.seq = seq;
  d.stream = stream;
  d.stream_version = version;
  d.recorded_at_ms = 1'700'000'000'000 + static_cast<int64_t>(seq);
  d.actor = "tester";
  const std::string command_id = "cmd-" + std::to_string(seq);  // outlives the view
  d.command_id = command_id;
  d.prev_hash = prev_hash;
  d.payload = &sample_payload();
  std::string bytes;
  encode_event(d, &bytes);
  return bytes;
}

EncodedEvent LogBuilder::next(const std::string& stream) {
  EncodedEvent e;
  e.seq = ++seq_;
  e.stream = stream;
  e.stream_version = ++versions_[stream];
  e.bytes = encode(e.seq, stream, e.stream_version, hash_);
  hash_ = sha256(e.bytes);
  return e;
}

AppendBatch LogBuilder::batch(const std::vector<std::string>& streams, size_t count) {
  AppendBatch b;
  for (size_t i = 0; i < count; ++i) b.events.push_back(next(streams[i % streams.size()]));
  return b;
}

StoreOptions read_only_mode() {
  StoreOptions o;
  o.read_only = true;
  return o;
}

StoreOptions secondary_mode(const std::string& scratch_dir) {
  StoreOptions o;
  o.secondary = true;
  o.secondary_path = scratch_dir;
  return o;
}

std::unique_ptr<EventStore> open_store(const std::string& dir, StoreOptions options) {
  std::unique_ptr<EventStore> store;
  Status s = open_rocksdb_store(dir, options, &store);
  if (!s.ok()) throw std::runtime_error("open " + dir + ": " + s.ToString());
  return store;
}

std::vector<std::string> all_events(const EventStore& store) {
  std::vector<std::string> out;
  Status s = store.read_range(0, 0, [&](const fb::Event&, std::string_view bytes) {
    out.emplace_back(bytes);
    return true;
  });
  if (!s.ok()) throw std::runtime_error("read_range: " + s.ToString());
  return out;
}

std::string idempotency_value(int64_t recorded_at_ms, std::string_view reply) {
  std::string v(keys::kRecordedAtBytes, '\0');
  keys::put_be64(static_cast<uint64_t>(recorded_at_ms), v.data());
  v.append(reply);
  return v;
}

}  // namespace runledger::testing
