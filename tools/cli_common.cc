// Shared pieces of the CLI: see cli_common.h.
#include "tools/cli_common.h"

#include <unistd.h>

#include <cstdio>

#include "base/time_text.h"
#include "cluster/pg_log_store.h"
#include "events/event_codec.h"
#include "projections/stream_name.h"

namespace runledger::cli {

namespace {

// Redraws of the progress line are at least this far apart: a terminal
// that is redrawn per event slows the work it reports.
constexpr auto kProgressRedrawInterval = std::chrono::milliseconds(200);
// The clock is read once per this many calls of update().
constexpr uint64_t kProgressClockEvery = 4096;

}  // namespace

int fail(std::string_view what, const Status& s) {
  std::fprintf(stderr, "runledger %.*s: %s\n", static_cast<int>(what.size()), what.data(),
               s.ToString().c_str());
  switch (s.code()) {
    case Status::Code::kOk:
      return kExitOk;
    case Status::Code::kNotFound:
      return kExitNoInput;
    case Status::Code::kCorruption:
      return kExitFindings;
    case Status::Code::kInvalid:
      return kExitUsage;
    case Status::Code::kIoError:
      return kExitIoErr;
    case Status::Code::kConflict:
    case Status::Code::kUnavailable:
    case Status::Code::kInDoubt:
      return kExitSoftware;
  }
  return kExitSoftware;
}

int fail(std::string_view message, int code) {
  std::fprintf(stderr, "runledger: %.*s\n", static_cast<int>(message.size()), message.data());
  return code;
}

Status ReadStore::open(const std::string& dir, std::unique_ptr<ReadStore>* out) {
  std::unique_ptr<ReadStore> rs(new ReadStore());
  StoreOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  Status s = open_rocksdb_store(dir, options, &rs->store_);
  if (!s.ok()) return s;
  *out = std::move(rs);
  return Status::Ok();
}

void add_log_source(CLI::App* app, LogSource* source) {
  app->add_option("--data", source->data, "data folder (or --pg-dsn)")->envname("RUNLEDGER_DATA");
  app->add_option("--pg-dsn", source->pg_dsn,
                  "read the log from a cluster's PostgreSQL database instead: a libpq connection "
                  "string")
      ->envname("RUNLEDGER_PG_DSN");
}

Status ReadStore::open(const LogSource& source, std::unique_ptr<ReadStore>* out) {
  if (source.data.empty() == source.pg_dsn.empty()) {
    // The variables count: a RUNLEDGER_DATA left in the shell would otherwise
    // decide quietly which log a --pg-dsn run reads.
    return Status::Invalid(
        source.data.empty()
            ? "which log? give --data DIR (a data folder) or --pg-dsn DSN (a cluster's "
              "PostgreSQL database)"
            : "give --data or --pg-dsn, not both (RUNLEDGER_DATA and RUNLEDGER_PG_DSN count as "
              "given)");
  }
  if (!source.postgres()) return open(source.data, out);
  std::unique_ptr<ReadStore> rs(new ReadStore());
  if (Status s = open_pg_log_store(source.pg_dsn, &rs->store_); !s.ok()) return s;
  *out = std::move(rs);
  return Status::Ok();
}

Progress::Progress(std::string label, uint64_t total)
    : label_(std::move(label)), total_(total), on_terminal_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void Progress::update(uint64_t done) {
  if (!on_terminal_ || ++calls_ % kProgressClockEvery != 0) return;
  auto now = std::chrono::steady_clock::now();
  if (now < next_draw_) return;
  next_draw_ = now + kProgressRedrawInterval;
  draw(done);
}

void Progress::draw(uint64_t done) {
  if (total_ > 0) {
    std::fprintf(stderr, "\r\033[K%s: %llu / %llu (%.0f%%)", label_.c_str(),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
                 100.0 * static_cast<double>(done) / static_cast<double>(total_));
  } else {
    std::fprintf(stderr, "\r\033[K%s: %llu", label_.c_str(), static_cast<unsigned long long>(done));
  }
  std::fflush(stderr);
  drawn_ = true;
}

bool entity_stream(std::string_view arg, std::string* stream) {
  if (stream_kind(arg)) {
    if (!names_an_entity(arg)) return false;
    *stream = std::string(arg);
    return true;
  }
  // Ids never hold '/': anything else with one names no entity.
  if (arg.empty() || arg.find('/') != std::string_view::npos) return false;
  *stream = job_stream(arg);
  return true;
}

bool parse_time_arg(std::string_view option, const std::string& value, int64_t* ms) {
  if (parse_time_ms(value, ms)) return true;
  std::fprintf(stderr,
               "runledger: %.*s must be an RFC 3339 time such as 2026-11-29T21:08:10Z, "
               "got '%s'\n",
               static_cast<int>(option.size()), option.data(), value.c_str());
  return false;
}

}  // namespace runledger::cli
