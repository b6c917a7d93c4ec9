#include "projections/snapshot.h"

#include <nlohmann/json.hpp>

namespace runledger {

std::string encode_snapshot(const State& s) {
  nlohmann::json j;
  j["format"] = kSnapshotFormat;
  j["seq"] = s.last_seq;
  j["last_hash"] = to_hex(s.last_hash);
  auto& jobs_out = j["jobs"] = nlohmann::json::array();
  for (const auto& [id, job] : s.jobs.by_id) jobs_out.push_back(jobs::to_json(job));
  auto& conns_out = j["connectors"] = nlohmann::json::array();
  for (const auto& [id, c] : s.connectors.by_id) conns_out.push_back(connectors::to_json(c));
  auto& holds_out = j["holds"] = nlohmann::json::array();
  for (const auto& [id, h] : s.holds.by_id) holds_out.push_back(holds::to_json(h));
  return j.dump();
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
