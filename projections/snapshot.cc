#include "projections/snapshot.h"

#include <nlohmann/json.hpp>

namespace runledger {

namespace {

// Appends each entity's JSON, comma-separated.
template <typename Map, typename ToJson>
void append_each(std::string& out, const Map& entities, ToJson to_json) {
  bool first = true;
  for (const auto& [id, entity] : entities) {
    if (!first) out.push_back(',');
    first = false;
    out += to_json(entity).dump();
  }
}

}  // namespace

// The envelope is written by hand and each entity dumped on its own, so the
// whole state never exists as one JSON tree: for 100,000 live jobs that tree
// took about a second of the sequencer and over a GiB. The keys come in the
// order a JSON object of the same fields dumps them (sorted).
std::string encode_snapshot(const State& s) {
  std::string out = "{\"connectors\":[";
  append_each(out, s.connectors.by_id, connectors::to_json);
  out += "],\"format\":" + std::to_string(kSnapshotFormat) + ",\"holds\":[";
  append_each(out, s.holds.by_id, holds::to_json);
  out += "],\"jobs\":[";
  append_each(out, s.jobs.by_id, jobs::to_json);
  out +=
      "],\"last_hash\":\"" + to_hex(s.last_hash) + "\",\"seq\":" + std::to_string(s.last_seq) + "}";
  return out;
}

namespace {

bool parse_hex_hash(const std::string& hex, Hash* out) {
  if (hex.size() != 64) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < 32; ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace

Status decode_snapshot(std::string_view bytes, State* out) {
  auto j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("format", 0) != kSnapshotFormat) {
    return Status::Corruption("snapshot is not valid JSON of format " +
                              std::to_string(kSnapshotFormat));
  }
  try {
    State s;
    s.last_seq = j.at("seq").get<uint64_t>();
    if (!parse_hex_hash(j.at("last_hash").get<std::string>(), &s.last_hash)) {
      return Status::Corruption("snapshot hash is malformed");
    }
    for (const auto& job : j.at("jobs")) jobs::adopt(s, jobs::from_json(job));
    for (const auto& c : j.at("connectors")) connectors::adopt(s, connectors::from_json(c));
    for (const auto& h : j.at("holds")) holds::adopt(s, holds::from_json(h));
    *out = std::move(s);
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("snapshot does not decode: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace runledger
