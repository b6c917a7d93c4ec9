// runledger import: an export file (cli_export_format.h) into an empty data
// folder. Each line's bytes must decode to the line's JSON; the events are
// appended in batches through the store (which checks seqs, versions and the
// hash chain), and folded as the engine folds them, so the folder ends up
// holding what a server that had written the log would hold: the views of
// finished jobs and released holds (written with the batch that finished
// them) and a snapshot of the live state. A failed import removes what it
// wrote: the folder was empty before.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "base/json_depth.h"
#include "engine/entities.h"
#include "engine/view_index.h"
#include "events/event_json.h"
#include "events/keys.h"
#include "events/rocksdb_store.h"
#include "projections/snapshot.h"
#include "tools/cli_base64.h"
#include "tools/cli_commands.h"
#include "tools/cli_export_format.h"

namespace runledger::cli {

namespace {

// Events per append: bounds the memory of a batch and of its WriteBatch.
constexpr size_t kImportBatchEventsDefault = 10'000;
constexpr size_t kImportBatchEventsMax = kAppendBatchEventsMax;

struct ImportOptions {
  std::string data;
  std::string in;
  size_t batch_events = kImportBatchEventsDefault;
};

struct Header {
  int version = 0;
  uint64_t events = 0;
  std::string last_hash;
};

Status parse_header(const std::string& line, Header* h) {
  auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != kExportFormat) {
    return Status::Invalid("line 1 is not a runledger export header");
  }
  const int version = j.value("version", 0);
  if (version < kExportVersionOldestRead || version > kExportVersion ||
      j.value("log_format", "") != keys::kLogFormat) {
    return Status::Invalid("the export is of another version: " + line);
  }
  h->version = version;
  if (!j.contains("events") || !j["events"].is_number_unsigned() || !j.contains("last_hash") ||
      !j["last_hash"].is_string()) {
    return Status::Invalid("line 1 lacks events or last_hash");
  }
  h->events = j["events"].get<uint64_t>();
  h->last_hash = j["last_hash"].get<std::string>();
  return Status::Ok();
}

// One line into the event it carries, checking that its bytes are its JSON.
Status parse_event(const std::string& line, uint64_t line_no, DataRendering rendering,
                   EncodedEvent* out) {
  const std::string where = "line " + std::to_string(line_no) + ": ";
  // The comparison below recurses once per level. The server stores nothing
  // deeper than a body may nest, which an event's line wraps in two or
  // three levels more; a line far deeper was not written by an export.
  if (json_too_deep(line, kExportLineDepthMax)) {
    return Status::Invalid(where + "nests arrays and objects deeper than " +
                           std::to_string(kExportLineDepthMax) + " levels");
  }
  auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  const std::string field(kExportBytesField);
  if (j.is_discarded() || !j.is_object() || !j.contains(field) || !j[field].is_string()) {
    return Status::Invalid(where + "not an exported event");
  }
  std::string bytes;
  if (!base64_decode(j[field].get<std::string>(), &bytes)) {
    return Status::Invalid(where + "bytes are not base64");
  }
  const fb::Event* e = nullptr;
  if (Status s = decode_event(bytes, &e); !s.ok()) return Status::Invalid(where + s.message());
  j.erase(field);
  if (j != event_json(*e, rendering)) {
    return Status::Invalid(where + "the bytes do not decode to the line's JSON");
  }
  out->seq = e->seq();
  out->stream = e->stream()->str();
  out->stream_version = e->stream_version();
  out->bytes = std::move(bytes);
  return Status::Ok();
}

// Appends batches and folds them, writing side records as the engine does
// (engine/engine.cc finish_batch).
class Importer {
 public:
  Importer(EventStore& store, size_t batch_events) : store_(store), batch_events_(batch_events) {}
  Status add(EncodedEvent event);
  // Appends what is pending with the snapshot of the live state.
  Status finish();
  const State& state() const { return state_; }

 private:
  Status flush(bool with_snapshot);
  EventStore& store_;
  const size_t batch_events_;
  State state_;
  AppendBatch batch_;
  std::set<std::string> touched_;
  // Streams loaded from the store (finished in an earlier batch), with the
  // index entries of their stored views.
  std::map<std::string, std::vector<std::string>> hydrated_;
  view_index::FinishedCounts finished_counts_{};  // of every view written
};

Status Importer::add(EncodedEvent event) {
  const fb::Event* e = nullptr;
  if (Status s = decode_event(event.bytes, &e); !s.ok()) return s;
  // The store checks this too, but only when a batch is appended: checked
  // here, a break in the chain is named by its line.
  const uint64_t previous = state_.last_seq;
  if (e->seq() != previous + 1) {
    return Status::Invalid("seq " + std::to_string(e->seq()) + " does not follow seq " +
                           std::to_string(previous));
  }
  const auto* prev = e->prev_hash();
  if (!std::equal(prev->begin(), prev->end(), state_.last_hash.begin())) {
    return Status::Invalid("prev_hash of seq " + std::to_string(e->seq()) +
                           " is not the hash of seq " + std::to_string(previous));
  }
  if (event.stream_version > 1 && !in_memory(state_, event.stream)) {
    // Finished in an earlier batch: its history is in the store already.
    if (Status s = hydrate(store_, state_, event.stream, 0); !s.ok()) return s;
    if (in_memory(state_, event.stream)) {
      hydrated_.emplace(event.stream, view_index::entries_of(state_, event.stream));
    }
  }
  evolve(state_, *e);
  state_.last_hash = sha256(event.bytes);
  touched_.insert(event.stream);
  batch_.events.push_back(std::move(event));
  return batch_.events.size() < batch_events_ ? Status::Ok() : flush(false);
}

Status Importer::flush(bool with_snapshot) {
  for (const auto& stream : touched_) {
    auto stored = hydrated_.find(stream);
    view_index::add_view_writes(state_, stream,
                                stored == hydrated_.end() ? nullptr : &stored->second,
                                &batch_.views, &finished_counts_);
  }
  for (const auto& stream : touched_) evict_if_finished(state_, stream);
  if (with_snapshot) batch_.snapshot = encode_snapshot(state_);
  Status s = batch_.empty() ? Status::Ok() : store_.append(batch_);
  batch_ = AppendBatch{};
  touched_.clear();
  hydrated_.clear();
  return s;
}

// The store was empty, so every view in it is this import's, and indexed.
Status Importer::finish() {
  if (Status s = flush(/*with_snapshot=*/state_.last_seq != 0); !s.ok()) return s;
  AppendBatch mark;
  view_index::add_count_writes(finished_counts_, nullptr, &mark.views);
  mark.views.emplace_back(std::string(view_index::kReadyKey), "1");
  return store_.append(mark);
}

Status import_file(std::istream& in, EventStore& store, size_t batch_events) {
  std::string line;
  if (!std::getline(in, line)) return Status::Invalid("the file is empty");
  Header header;
  if (Status s = parse_header(line, &header); !s.ok()) return s;
  const DataRendering rendering = header.version == 1   ? DataRendering::kExportVersion1
                                  : header.version == 2 ? DataRendering::kExportVersion2
                                                        : DataRendering::kReaders;
  Importer importer(store, batch_events);
  Progress progress("import", header.events);
  uint64_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    EncodedEvent event;
    if (Status s = parse_event(line, line_no, rendering, &event); !s.ok()) return s;
    if (Status s = importer.add(std::move(event)); !s.ok()) {
      return Status::Invalid("line " + std::to_string(line_no) + ": " + s.ToString());
    }
    progress.update(line_no);
  }
  if (in.bad()) return Status::IoError("reading the file failed");
  const State& s = importer.state();
  if (s.last_seq != header.events || to_hex(s.last_hash) != header.last_hash) {
    return Status::Invalid("the file holds " + std::to_string(s.last_seq) +
                           " events ending in hash " + to_hex(s.last_hash) + ", its header says " +
                           std::to_string(header.events) + " ending in " + header.last_hash +
                           ": it is cut short or altered");
  }
  return importer.finish();
}

// The target must not exist or be an empty folder; *created says whether
// this import made it.
int prepare_target(const std::string& dir, bool* created) {
  namespace fs = std::filesystem;
  std::error_code ec;
  *created = !fs::exists(dir, ec);
  if (*created) {
    if (!fs::create_directories(dir, ec)) return fail("cannot create " + dir, kExitCantCreate);
    return kExitOk;
  }
  if (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec)) {
    return fail(dir + " is not an empty folder: import only into an empty or new folder",
                kExitCantCreate);
  }
  return kExitOk;
}

void remove_written(const std::string& dir, bool created) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (created) {
    fs::remove_all(dir, ec);
    return;
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) fs::remove_all(entry.path(), ec);
}

int run(const ImportOptions& o) {
  std::ifstream file;
  if (o.in != "-") {
    file.open(o.in, std::ios::binary);
    if (!file) return fail("cannot read " + o.in, kExitNoInput);
  }
  std::istream& in = o.in == "-" ? std::cin : file;
  bool created = false;
  if (int code = prepare_target(o.data, &created); code != kExitOk) return code;
  Status s;
  {
    std::unique_ptr<EventStore> store;
    s = open_rocksdb_store(o.data, StoreOptions{}, &store);
    if (s.ok()) s = import_file(in, *store, o.batch_events);
  }
  if (s.ok()) return kExitOk;
  remove_written(o.data, created);
  std::fprintf(stderr, "runledger import: %s\nnothing was imported: %s is %s\n",
               s.ToString().c_str(), o.data.c_str(), created ? "removed" : "empty again");
  const bool bad_file = s.code() == Status::Code::kInvalid || s.code() == Status::Code::kConflict;
  return bad_file ? kExitDataErr : kExitIoErr;
}

}  // namespace

Subcommand add_import(CLI::App& root) {
  auto o = std::make_shared<ImportOptions>();
  CLI::App* app = root.add_subcommand(
      "import",
      "Load an export file into an empty (or new) data folder: the same events, bytes and "
      "hashes, plus the views and snapshot a server needs to serve them. Refuses a folder that "
      "is not empty; on any error removes what it wrote.");
  app->add_option("--data", o->data, "empty or new data folder")->required();
  app->add_option("--in", o->in, "export file, or - for stdin")->required();
  app->add_option("--batch-events", o->batch_events, "events per append (memory per batch)")
      ->check(CLI::Range(size_t{1}, kImportBatchEventsMax))
      ->capture_default_str();
  return {app, [o] { return run(*o); }};
}

}  // namespace runledger::cli
