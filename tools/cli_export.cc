// runledger export: the log to a portable JSON Lines file (the format is in
// cli_export_format.h), checking the hash chain as it goes so that a damaged
// log is never exported as if it were whole. A file is written under a
// temporary name and renamed once complete.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "events/event_codec.h"
#include "events/event_json.h"
#include "events/keys.h"
#include "tools/cli_base64.h"
#include "tools/cli_commands.h"
#include "tools/cli_export_format.h"

namespace runledger::cli {

namespace {

struct ExportOptions {
  LogSource source;
  std::string out;
};

bool write_line(std::FILE* f, const nlohmann::json& j) {
  std::string line = j.dump();
  line.push_back('\n');
  return std::fwrite(line.data(), 1, line.size(), f) == line.size();
}

// Writes the header and every event up to the tail seen at the start.
Status write_log(const EventStore& store, std::FILE* f) {
  const uint64_t last_seq = store.last_seq();
  const Hash last_hash = store.last_hash();
  nlohmann::json header = {{"format", kExportFormat},
                           {"version", kExportVersion},
                           {"log_format", keys::kLogFormat},
                           {"events", last_seq},
                           {"last_hash", to_hex(last_hash)}};
  if (!write_line(f, header)) return Status::IoError("writing the export failed");
  Hash hash{};
  uint64_t seq = 0;
  Status problem;
  Progress progress("export", last_seq);
  Status s = store.read_range(0, last_seq, [&](const fb::Event& e, std::string_view bytes) {
    const auto* prev = e.prev_hash();
    if (e.seq() != seq + 1 || !std::equal(prev->begin(), prev->end(), hash.begin())) {
      problem = Status::Corruption("the log does not continue at seq " + std::to_string(seq + 1) +
                                       "; run `runledger verify`",
                                   seq + 1);
      return false;
    }
    nlohmann::json line = event_json(e);
    line[std::string(kExportBytesField)] = base64_encode(bytes);
    if (!write_line(f, line)) {
      problem = Status::IoError("writing the export failed");
      return false;
    }
    hash = sha256(bytes);
    seq = e.seq();
    progress.update(seq);
    return true;
  });
  if (!s.ok()) return s;
  if (!problem.ok()) return problem;
  if (seq != last_seq || hash != last_hash) {
    return Status::Corruption("the log ends at seq " + std::to_string(seq) +
                              ", not at the store's last seq " + std::to_string(last_seq));
  }
  return Status::Ok();
}

int run(const ExportOptions& o) {
  std::unique_ptr<ReadStore> rs;
  if (Status s = ReadStore::open(o.source, &rs); !s.ok()) return fail("export", s);
  if (o.out == "-") {
    Status s = write_log(rs->store(), stdout);
    if (s.ok() && std::fflush(stdout) != 0) s = Status::IoError("writing to stdout failed");
    return s.ok() ? kExitOk : fail("export", s);
  }
  const std::string partial = o.out + ".partial";
  std::FILE* f = std::fopen(partial.c_str(), "wb");
  if (f == nullptr) return fail("cannot write " + partial, kExitCantCreate);
  Status s = write_log(rs->store(), f);
  if (std::fflush(f) != 0 && s.ok()) s = Status::IoError("writing " + partial + " failed");
  std::fclose(f);
  std::error_code ec;
  if (s.ok()) std::filesystem::rename(partial, o.out, ec);
  if (!s.ok() || ec) {
    std::filesystem::remove(partial, ec);
    return s.ok() ? fail("cannot rename " + partial + " to " + o.out, kExitCantCreate)
                  : fail("export", s);
  }
  return kExitOk;
}

}  // namespace

Subcommand add_export(CLI::App& root) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* app = root.add_subcommand(
      "export",
      "Write the log to a portable JSON Lines file: a header line, then one line per event with "
      "its API JSON and its exact stored bytes (base64), so that `import` rebuilds the same log "
      "with the same hashes.");
  add_log_source(app, &o->source);
  app->add_option("--out", o->out, "file to write, or - for stdout")->required();
  return {app, [o] { return run(*o); }};
}

}  // namespace runledger::cli
