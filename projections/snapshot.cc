#include "projections/snapshot.h"

#include <nlohmann/json.hpp>

#include "projections/snapshot_format3.h"

namespace runledger {

using nlohmann::json;

namespace {

constexpr int kSnapshotFormatOneDocument = 1;
constexpr int kSnapshotFormatLines = 2;
constexpr std::string_view kJobKey = "job";
constexpr std::string_view kConnectorKey = "connector";
constexpr std::string_view kHoldKey = "hold";

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

// seq and last_hash, common to both formats.
Status read_position(const json& head, State* s) {
  s->last_seq = head.at("seq").get<uint64_t>();
  if (!parse_hex_hash(head.at("last_hash").get<std::string>(), &s->last_hash)) {
    return Status::Corruption("snapshot hash is malformed");
  }
  return Status::Ok();
}

// Format 1 (written before format 2; still read): one JSON document.
Status decode_one_document(const json& j, State* s) {
  if (Status st = read_position(j, s); !st.ok()) return st;
  for (const auto& job : j.at("jobs")) jobs::adopt(*s, jobs::from_json(job));
  for (const auto& c : j.at("connectors")) connectors::adopt(*s, connectors::from_json(c));
  for (const auto& h : j.at("holds")) holds::adopt(*s, holds::from_json(h));
  return Status::Ok();
}

// Format 2 (written before format 3; still read): the head line, then one line per entity, each
// parsed on its own.
Status decode_lines(const json& head, std::string_view rest, State* s) {
  if (Status st = read_position(head, s); !st.ok()) return st;
  size_t jobs_n = 0, connectors_n = 0, holds_n = 0;
  while (!rest.empty()) {
    size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    json entry = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (entry.is_discarded() || !entry.is_object() || entry.size() != 1) {
      return Status::Corruption("snapshot has a line that is not one entity");
    }
    auto it = entry.begin();
    const std::string& key = it.key();
    const json& value = it.value();
    if (key == kJobKey) {
      jobs::adopt(*s, jobs::from_json(value));
      ++jobs_n;
    } else if (key == kConnectorKey) {
      connectors::adopt(*s, connectors::from_json(value));
      ++connectors_n;
    } else if (key == kHoldKey) {
      holds::adopt(*s, holds::from_json(value));
      ++holds_n;
    } else {
      return Status::Corruption("snapshot has an entity of unknown kind '" + key + "'");
    }
  }
  if (jobs_n != head.at("jobs").get<size_t>() ||
      connectors_n != head.at("connectors").get<size_t>() ||
      holds_n != head.at("holds").get<size_t>()) {
    return Status::Corruption("snapshot holds other entity counts than its head line says");
  }
  return Status::Ok();
}

// The head of a JSON snapshot: its first line (format 2), or the whole
// document (format 1, one line); *one_document says which.
Status parse_json_head(std::string_view bytes, json* head, bool* one_document) {
  size_t eol = bytes.find('\n');
  *head = json::parse(bytes.substr(0, eol), nullptr, /*allow_exceptions=*/false);
  const int format = head->is_object() ? head->value("format", 0) : 0;
  *one_document = format == kSnapshotFormatOneDocument && eol == std::string_view::npos;
  if (head->is_discarded() || (format != kSnapshotFormatLines && !*one_document)) {
    return Status::Corruption("snapshot is neither of format 3 nor JSON of format 2 or 1");
  }
  return Status::Ok();
}

// Formats 2 and 1 (JSON), told apart by the head line.
Status decode_json(std::string_view bytes, State* s) {
  json head;
  bool one_document = false;
  if (Status st = parse_json_head(bytes, &head, &one_document); !st.ok()) return st;
  return one_document ? decode_one_document(head, s)
                      : decode_lines(head, bytes.substr(bytes.find('\n') + 1), s);
}

// Only the position of a JSON snapshot: the entities of format 2 are left
// unparsed, since the caller decodes them once, after checking the position.
Status decode_json_head(std::string_view bytes, State* s) {
  json head;
  bool one_document = false;
  if (Status st = parse_json_head(bytes, &head, &one_document); !st.ok()) return st;
  return read_position(head, s);
}

}  // namespace

std::string encode_snapshot(const State& s) {
  std::string out;
  snapshot_format3::encode(s, &out);
  return out;
}

void encode_snapshot(const State& s, std::string* out) { snapshot_format3::encode(s, out); }

Status decode_snapshot(std::string_view bytes, State* out) {
  try {
    State s;
    Status st = snapshot_format3::is_format3(bytes) ? snapshot_format3::decode(bytes, &s)
                                                    : decode_json(bytes, &s);
    if (!st.ok()) return st;
    *out = std::move(s);
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("snapshot does not decode: ") + e.what());
  }
  return Status::Ok();
}

Status decode_snapshot_head(std::string_view bytes, uint64_t* seq, Hash* last_hash) {
  State s;
  try {
    Status st = snapshot_format3::is_format3(bytes) ? snapshot_format3::decode_head(bytes, &s)
                                                    : decode_json_head(bytes, &s);
    if (!st.ok()) return st;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("snapshot head does not decode: ") + e.what());
  }
  *seq = s.last_seq;
  *last_hash = s.last_hash;
  return Status::Ok();
}

}  // namespace runledger
