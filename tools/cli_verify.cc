// runledger verify: the whole log checked in one walk: every event decodes,
// seqs have no gap, each stream's versions are contiguous, the hash chain
// holds (events/log_verifier.h), and every event is an allowed transition
// from the state folded before it (projections/transition_check.h).
//
// Memory grows with live entities only, as in the engine: a finished entity
// leaves the fold and is loaded back from its stream when a later event
// names it (a rerun, a hold placed for a finished job).
//
// On a cluster's PostgreSQL log (--pg-dsn) the checks are the same: the
// stream index is the rows' (stream, version, seq) columns, which followers
// trust as they fold, and there is no snapshot to note.
#include <cstdio>
#include <memory>

#include "engine/entities.h"
#include "engine/state_loader.h"
#include "events/log_verifier.h"
#include "projections/stream_name.h"
#include "projections/transition_check.h"
#include "tools/cli_commands.h"

namespace runledger::cli {

namespace {

struct VerifyOptions {
  LogSource source;
};

// Folds each event after checking it against the state before it.
class TransitionWalk {
 public:
  explicit TransitionWalk(const EventStore& store) : store_(store) {}
  Status check(const fb::Event& e, std::string_view bytes);

 private:
  Status load(const std::string& stream, uint64_t before_seq);
  const EventStore& store_;
  State state_;
};

Status TransitionWalk::load(const std::string& stream, uint64_t before_seq) {
  if (in_memory(state_, stream)) return Status::Ok();
  return hydrate(store_, state_, stream, before_seq);
}

Status TransitionWalk::check(const fb::Event& e, std::string_view bytes) {
  const std::string stream = e.stream()->str();
  std::string job_stream;
  if (e.stream_version() > 1) {
    if (Status s = load(stream, e.seq() - 1); !s.ok()) return s;
  }
  if (const auto* placed = e.payload_as_HoldPlaced();
      placed && placed->job() && placed->job()->size() > 0) {
    job_stream = runledger::job_stream(placed->job()->str());
    if (Status s = load(job_stream, e.seq() - 1); !s.ok()) return s;
  }
  if (Status s = check_transition(state_, e); !s.ok()) return s;
  evolve(state_, e);
  state_.last_hash = sha256(bytes);
  evict_if_finished(state_, stream);
  if (!job_stream.empty()) evict_if_finished(state_, job_stream);
  return Status::Ok();
}

int run(const VerifyOptions& o) {
  std::unique_ptr<ReadStore> rs;
  if (Status s = ReadStore::open(o.source, &rs); !s.ok()) {
    if (s.code() == Status::Code::kCorruption) {
      std::printf("the data folder does not open: %s\n", s.ToString().c_str());
      return kExitFindings;
    }
    return fail("verify", s);
  }
  const EventStore& store = rs->store();
  TransitionWalk walk(store);
  VerifyReport report;
  Status s;
  {
    Progress progress("verify", store.last_seq());
    s = verify_log(store, &report, {}, [&](const fb::Event& e, std::string_view bytes) {
      progress.update(e.seq());
      return walk.check(e, bytes);
    });
  }
  if (s.code() == Status::Code::kCorruption) {
    std::printf("first bad seq %llu: %s\n", static_cast<unsigned long long>(s.seq()),
                s.message().c_str());
    return kExitFindings;
  }
  if (!s.ok()) return fail("verify", s);
  // The snapshot is a cache, not the log, so it does not change the verdict;
  // that the next start will set it aside is still worth knowing.
  State snapshot;
  uint64_t snapshot_seq = 0;
  if (Status snap = restore_snapshot(store, 0, &snapshot, &snapshot_seq); !snap.ok()) {
    std::fprintf(stderr,
                 "note: the projection snapshot does not agree with the log and a start will set "
                 "it aside (%s)\n",
                 snap.ToString().c_str());
  }
  std::printf("ok: %llu events, %llu streams, last seq %llu, last hash %s\n",
              static_cast<unsigned long long>(report.events),
              static_cast<unsigned long long>(report.streams),
              static_cast<unsigned long long>(report.last_seq), to_hex(report.last_hash).c_str());
  return kExitOk;
}

}  // namespace

Subcommand add_verify(CLI::App& root) {
  auto o = std::make_shared<VerifyOptions>();
  CLI::App* app = root.add_subcommand(
      "verify",
      "Check the whole log: every event decodes, seqs have no gap, each stream's versions are "
      "contiguous, the hash chain holds, and every event is an allowed transition. Exit 0 with a "
      "summary when clean; exit 1 with 'first bad seq N: why' otherwise.");
  add_log_source(app, &o->source);
  return {app, [o] { return run(*o); }};
}

}  // namespace runledger::cli
