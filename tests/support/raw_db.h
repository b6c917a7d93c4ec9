// Reaching under the store into RocksDB and its files, as a disk fault or a
// careless hand could: the RocksDB database of a data folder opened with no
// store on top, and bytes of its files flipped. For the tests that check
// that such damage is found and named.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rocksdb/db.h>

namespace runledger::testing {

// Only while no store has the folder open for writing. Writes are synced;
// closing flushes every memtable, so what was written is in table files.
class RawDb {
 public:
  explicit RawDb(const std::string& dir);
  ~RawDb();
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  std::string get(const std::string& family, std::string_view key);
  void put(const std::string& family, std::string_view key, std::string_view value);
  void remove(const std::string& family, std::string_view key);
  // Every entry of a column family, in key order.
  std::vector<std::pair<std::string, std::string>> entries(const std::string& family);
  // The log column family by seq.
  std::string event(uint64_t seq);
  void put_event(uint64_t seq, std::string_view bytes);
  void remove_event(uint64_t seq);
  // Writes every memtable to table files, so damage can be done to them.
  void flush();
  // The table files of a column family (full paths).
  std::vector<std::string> table_files(const std::string& family);

  static std::string log_key(uint64_t seq);

 private:
  rocksdb::ColumnFamilyHandle* family(const std::string& name);

  rocksdb::DB* db_ = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

// Flushes the memtables of the folder `dir` (no store may have it open) and
// returns the largest table file of the log: where its events are.
std::string flushed_log_table(const std::string& dir);

// Flips the bits of one byte of a file at `offset`.
void flip_byte(const std::string& path, uint64_t offset);
// The write-ahead log files of `dir`, oldest (lowest number) first.
std::vector<std::string> wal_files(const std::string& dir);
// The write-ahead log file with the highest number in `dir`.
std::string newest_wal(const std::string& dir);
uint64_t file_size(const std::string& path);

}  // namespace runledger::testing
