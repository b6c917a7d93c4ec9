// libFuzzer target: arbitrary bytes as stored events. Whatever the bytes,
// decoding never crashes, and an event that decodes can be
//   - rendered as the API shows it (event_json),
//   - re-encoded: the copy decodes, has the same envelope and payload, and
//     encoding it again gives the same bytes (the encoding is canonical
//     after one round, which export/import and the hash chain rely on),
//   - judged by check_transition() and, when allowed, folded (evolve), as
//     `runledger verify` and replay do with every event of a log.
// The input is read twice: as one event, and as a log of events, each
// prefixed by its length (4 bytes, little-endian), folded in order into one
// State, so the fuzzer can reach the states deep in a lifecycle.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "engine/reply.h"
#include "events/event_codec.h"
#include "events/event_json.h"
#include "projections/state.h"
#include "projections/transition_check.h"

namespace runledger::fuzz {
namespace {

constexpr size_t kLengthPrefixBytes = 4;
constexpr size_t kLogEventsMax = 64;

[[noreturn]] void fail(const char* why, const fb::Event& e) {
  std::fprintf(stderr, "\n*** %s (seq %llu, %s)\n", why, static_cast<unsigned long long>(e.seq()),
               std::string(event_type_name(e.payload_type())).c_str());
  std::abort();
}

std::string str(const flatbuffers::String* s) { return s == nullptr ? "" : s->str(); }

fb::PayloadUnion unpack_payload(const fb::Event& e) {
  fb::PayloadUnion u;
  u.type = e.payload_type();
  u.value = fb::PayloadUnion::UnPack(e.payload(), e.payload_type(), nullptr);
  return u;
}

void encode_copy(const fb::Event& e, const fb::PayloadUnion& payload, std::string* out) {
  Hash prev{};
  for (size_t i = 0; i < prev.size(); ++i) prev[i] = e.prev_hash()->Get(static_cast<uint32_t>(i));
  std::string stream = str(e.stream()), actor = str(e.actor()), command_id = str(e.command_id());
  EventDraft d;
  d.seq = e.seq();
  d.stream = stream;
  d.stream_version = e.stream_version();
  d.recorded_at_ms = e.recorded_at_ms();
  d.actor = actor;
  d.command_id = command_id;
  d.prev_hash = prev;
  d.payload = &payload;
  encode_event(d, out);
}

bool same_envelope(const fb::Event& a, const fb::Event& b) {
  return a.seq() == b.seq() && str(a.stream()) == str(b.stream()) &&
         a.stream_version() == b.stream_version() && a.recorded_at_ms() == b.recorded_at_ms() &&
         str(a.actor()) == str(b.actor()) && str(a.command_id()) == str(b.command_id()) &&
         a.payload_type() == b.payload_type() &&
         std::string_view(reinterpret_cast<const char*>(a.prev_hash()->data()), 32) ==
             std::string_view(reinterpret_cast<const char*>(b.prev_hash()->data()), 32);
}

void check_round_trip(const fb::Event& e) {
  const fb::PayloadUnion payload = unpack_payload(e);
  std::string copy;
  encode_copy(e, payload, &copy);
  const fb::Event* decoded = nullptr;
  if (!decode_event(copy, &decoded).ok()) fail("a re-encoded event does not decode", e);
  if (!same_envelope(e, *decoded)) fail("re-encoding changed the envelope", e);
  const fb::PayloadUnion again = unpack_payload(*decoded);
  if (!(again == payload)) fail("re-encoding changed the payload", e);
  std::string copy2;
  encode_copy(*decoded, again, &copy2);
  if (copy2 != copy) fail("encoding is not canonical after one round", e);
}

// Everything done with one event that decoded; false when the fold refuses it.
bool exercise(const fb::Event& e, State* state) {
  // As GET /v1/events renders it (invalid UTF-8 is replaced, not thrown).
  Reply rendered = Reply::json(200, event_json(e));
  if (rendered.body.empty()) fail("an event rendered as nothing", e);
  check_round_trip(e);
  if (!check_transition(*state, e).ok()) return false;
  evolve(*state, e);
  return true;
}

void fuzz_as_log(std::string_view bytes) {
  State state;
  for (size_t n = 0; n < kLogEventsMax && bytes.size() >= kLengthPrefixBytes; ++n) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
    const size_t length = p[0] | p[1] << 8 | p[2] << 16 | static_cast<size_t>(p[3]) << 24;
    bytes.remove_prefix(kLengthPrefixBytes);
    if (length > bytes.size()) return;
    // A copy of exactly the record: reads past it are then caught by ASan.
    const std::string record(bytes.substr(0, length));
    bytes.remove_prefix(length);
    const fb::Event* e = nullptr;
    if (!decode_event(record, &e).ok() || !exercise(*e, &state)) return;
  }
}

}  // namespace
}  // namespace runledger::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace runledger;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const fb::Event* e = nullptr;
  if (decode_event(bytes, &e).ok()) {
    State state;
    fuzz::exercise(*e, &state);
  }
  fuzz::fuzz_as_log(bytes);
  return 0;
}
