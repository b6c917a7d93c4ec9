// What every `runledger` subcommand shares: exit codes, opening the log (a
// data folder or a cluster's PostgreSQL database) for reading while a server
// may be writing it, the progress line, and the parsing of entity and time
// arguments.
#pragma once

#include <charconv>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "base/status.h"
#include "events/event_store.h"

namespace runledger::cli {

// Exit codes: 0 and 1 are answers, the rest follow sysexits.h. Stable: scripts
// test them. 76 is the gate's "no" (docs/domain.md section 3).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;      // damage found, differences found, no such entity
inline constexpr int kExitUsage = 64;        // bad arguments
inline constexpr int kExitDataErr = 65;      // an input file that is not what it must be
inline constexpr int kExitNoInput = 66;      // the data folder holds no store
inline constexpr int kExitUnavailable = 69;  // the server cannot be reached
inline constexpr int kExitSoftware = 70;     // any other error
inline constexpr int kExitCantCreate = 73;   // import target not empty
inline constexpr int kExitIoErr = 74;
inline constexpr int kExitGateClosed = 76;

// A subcommand: its CLI11 app, and what runs it once the arguments parsed.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// A seq given on the command line: seqs start at 1.
inline const CLI::Validator kSeqAtLeastOne(
    [](std::string& text) -> std::string {
      uint64_t seq = 0;
      const bool digits =
          !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
      // from_chars refuses what does not fit in 64 bits, where a lexical
      // cast would quietly take the largest seq instead.
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seq);
      if (!digits || error != std::errc() || end != text.data() + text.size() || seq == 0) {
        return "a seq is a whole number from 1 to 2^64-1 (the first event has seq 1), got '" +
               text + "'";
      }
      return "";
    },
    "SEQ");

// A value that must say something: `--since ""` is a mistake, not "no filter".
inline const CLI::Validator kNotEmpty(
    [](std::string& text) -> std::string { return text.empty() ? "must not be empty" : ""; },
    "TEXT");

// Prints "runledger <what>: <status>" on stderr and returns the exit code
// that fits the status.
int fail(std::string_view what, const Status& s);
// Prints "runledger: <message>" on stderr and returns `code`.
int fail(std::string_view message, int code);

// Where the reading subcommands (replay, verify, timeline, events, export)
// find the log: a data folder, or the PostgreSQL database of a cluster.
// Exactly one of the two.
struct LogSource {
  std::string data;    // --data DIR (RUNLEDGER_DATA)
  std::string pg_dsn;  // --pg-dsn DSN (RUNLEDGER_PG_DSN)
  bool postgres() const { return !pg_dsn.empty(); }
};

// Adds --data and --pg-dsn to a reading subcommand.
void add_log_source(CLI::App* app, LogSource* source);

// A log opened for reading, beside a running server.
//
// A data folder is opened read-only (RocksDB OpenForReadOnly): a frozen view
// of the folder as it was at open, which takes no lock and never writes.
// Every table file is held open from the start (RocksDB's default
// max_open_files), so compactions of the running server do not pull files
// from under a long read. Not a secondary instance: the store's stream reads
// take a RocksDB snapshot, which secondary instances refuse ("snapshot not
// supported in secondary mode").
//
// The PostgreSQL log is read through a read-only session, up to the last
// row seen at open (cluster/pg_log_store.h): the same frozen view.
class ReadStore {
 public:
  static Status open(const std::string& dir, std::unique_ptr<ReadStore>* out);
  // The one place that picks the store of a LogSource. kInvalid (a usage
  // error) unless exactly one of the two is given.
  static Status open(const LogSource& source, std::unique_ptr<ReadStore>* out);
  ReadStore(const ReadStore&) = delete;
  ReadStore& operator=(const ReadStore&) = delete;
  EventStore& store() { return *store_; }

 private:
  ReadStore() = default;
  std::unique_ptr<EventStore> store_;
};

// A progress line on stderr, redrawn in place, only when stderr is a
// terminal (quiet when piped). Cheap to call per event.
class Progress {
 public:
  // `total` 0: unknown.
  Progress(std::string label, uint64_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(uint64_t done);

 private:
  void draw(uint64_t done);
  const std::string label_;
  const uint64_t total_;
  const bool on_terminal_;
  bool drawn_ = false;
  uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point next_draw_;
};

// "job/ID", "connector/ID", "hold/ID", or a bare job id -> the stream name.
// false when the argument names no entity.
bool entity_stream(std::string_view arg, std::string* stream);

// Parses an RFC 3339 time argument; false (and a message on stderr naming
// the option) when malformed.
bool parse_time_arg(std::string_view option, const std::string& value, int64_t* ms);

}  // namespace runledger::cli
