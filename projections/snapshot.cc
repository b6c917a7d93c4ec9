#include "projections/snapshot.h"

#include "projections/snapshot_format3.h"

namespace runledger {

namespace {

// Formats 1 and 2 were JSON; a store written by an older binary may still
// hold one. It is not read: like any snapshot that cannot be used, it is set
// aside and the log folded instead (engine/state_loader.h).
Status not_format3() {
  return Status::Corruption("snapshot is not of format " + std::to_string(kSnapshotFormat));
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
    Status st =
        snapshot_format3::is_format3(bytes) ? snapshot_format3::decode(bytes, &s) : not_format3();
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
                                                    : not_format3();
    if (!st.ok()) return st;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("snapshot head does not decode: ") + e.what());
  }
  *seq = s.last_seq;
  *last_hash = s.last_hash;
  return Status::Ok();
}

}  // namespace runledger
