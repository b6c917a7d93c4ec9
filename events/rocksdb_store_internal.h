// Helpers shared by the files of RocksDbStore (not part of any public API):
// turning RocksDB statuses into ours, and the check every stored event gets
// when it is read back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include "events/event_codec.h"
#include "events/status.h"

namespace runledger::rocksdb_store {

inline std::string_view view(const rocksdb::Slice& s) { return {s.data(), s.size()}; }
inline rocksdb::Slice slice(std::string_view s) { return {s.data(), s.size()}; }

// `what` says what was being done ("reading seq 12"); `seq` names the seq
// concerned when the status is a corruption.
Status from_rocksdb(const rocksdb::Status& s, std::string_view what, uint64_t seq = 0);

// Verifies the bytes stored under log key `key_seq`: they decode, and the
// envelope's seq is the key's. Corruption names `key_seq`.
Status check_stored_event(uint64_t key_seq, std::string_view bytes, const fb::Event** event);

}  // namespace runledger::rocksdb_store
