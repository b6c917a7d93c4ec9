// The log walk and the stream index check of verify_log(); see log_verifier.h
// for what is checked and which seq a finding names.
#include "events/log_verifier.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace runledger {
namespace {

// last_seq() and last_hash() are two calls; against a store being appended
// to, they are retried until they describe the same tail.
constexpr int kTailReadAttempts = 3;

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct StreamTip {
  uint32_t version = 0;
  // Set by the pass over the index when this stream's entries match the
  // walk: the slow check then leaves the stream out. (Sits in padding.)
  bool index_matches = false;
  uint64_t seq = 0;  // of the stream's latest event
  // The sum of mark(version, seq) over the stream's events: what its index
  // entries must add up to.
  uint64_t marks = 0;
};

// A 64-bit mix (SplitMix64's finalizer) of one (version, seq) pair. Summed
// over a stream, it tells with overwhelming probability whether the index
// maps the same versions to the same seqs as the log, in any order of
// reading, in 8 bytes per stream.
uint64_t mark(uint32_t version, uint64_t seq) {
  uint64_t z = seq * 0x9e3779b97f4a7c15ULL + version;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

using StreamTips = std::unordered_map<std::string, StreamTip, StringHash, std::equal_to<>>;

bool same_hash(const flatbuffers::Vector<uint8_t>* stored, const Hash& expected) {
  return stored != nullptr && stored->size() == expected.size() &&
         std::equal(expected.begin(), expected.end(), stored->data());
}

std::string seq_text(uint64_t seq) { return "seq " + std::to_string(seq); }

// Walks the log in seq order, one event at a time, keeping only what the
// next event is checked against.
class LogWalk {
 public:
  LogWalk(uint64_t until, const VerifyProgressFn& progress, const VerifyEventCheck& check)
      : until_(until), progress_(progress), check_(check) {}

  // The visitor body: false ends the walk (finding() then says why).
  bool visit(const fb::Event& e, std::string_view bytes);
  // What ended the walk, once read_range returned `read`.
  Status finish(Status read);
  const StreamTips& streams() const { return streams_; }
  StreamTips& streams() { return streams_; }
  uint64_t events() const { return events_; }
  const Hash& last_hash() const { return hash_; }

 private:
  Status check_event(const fb::Event& e, std::string_view bytes, StreamTip** tip);
  Status blame_broken_link(bool next_link_holds) const;

  const uint64_t until_;
  const VerifyProgressFn& progress_;
  const VerifyEventCheck& check_;
  StreamTips streams_;
  uint64_t events_ = 0;
  Hash hash_{};  // of the last event walked; zeros before seq 1
  // Set when the prev_hash of this seq is not the hash of the seq before it:
  // the next event tells which of the two was altered.
  std::optional<uint64_t> broken_link_;
  Status finding_;
};

bool LogWalk::visit(const fb::Event& e, std::string_view bytes) {
  if (broken_link_) {
    finding_ = blame_broken_link(same_hash(e.prev_hash(), hash_));
    return false;
  }
  StreamTip* tip = nullptr;
  finding_ = check_event(e, bytes, &tip);
  if (!finding_.ok()) return false;
  tip->version = e.stream_version();
  tip->seq = e.seq();
  tip->marks += mark(e.stream_version(), e.seq());
  hash_ = sha256(bytes);
  ++events_;
  if (progress_ && events_ % kVerifyProgressEvery == 0) progress_({"log", events_, until_});
  return true;
}

Status LogWalk::check_event(const fb::Event& e, std::string_view bytes, StreamTip** tip) {
  const uint64_t seq = events_ + 1;
  if (e.seq() != seq) {
    return Status::Corruption(
        seq_text(seq) + " is missing: the log goes on with " + seq_text(e.seq()), seq);
  }
  const std::string_view stream = e.stream()->string_view();
  auto it = streams_.find(stream);
  if (it == streams_.end()) it = streams_.emplace(std::string(stream), StreamTip{}).first;
  *tip = &it->second;
  if (e.stream_version() != (*tip)->version + 1) {
    return Status::Corruption(seq_text(seq) + ": stream " + std::string(stream) +
                                  " goes from version " + std::to_string((*tip)->version) + " to " +
                                  std::to_string(e.stream_version()),
                              seq);
  }
  if (!same_hash(e.prev_hash(), hash_)) {
    if (seq == 1) return Status::Corruption("seq 1: prev_hash is not 32 zero bytes", 1);
    broken_link_ = seq;
    return Status::Ok();  // which seq to name is decided by the next event
  }
  if (!check_) return Status::Ok();
  Status s = check_(e, bytes);
  if (s.code() == Status::Code::kCorruption && s.seq() == 0) {
    return Status::Corruption(s.message(), seq);
  }
  return s;
}

Status LogWalk::blame_broken_link(bool next_link_holds) const {
  const uint64_t k = *broken_link_;
  const std::string link = seq_text(k) + "'s prev_hash is not the hash of " + seq_text(k - 1);
  if (next_link_holds) {
    return Status::Corruption(link + ", and " + seq_text(k + 1) + " confirms " + seq_text(k) +
                                  ": " + seq_text(k - 1) + " was altered",
                              k - 1);
  }
  return Status::Corruption(link + ", and " + seq_text(k + 1) + "'s prev_hash is not the hash of " +
                                seq_text(k) + " either: " + seq_text(k) + " was altered",
                            k);
}

Status LogWalk::finish(Status read) {
  if (!finding_.ok()) return finding_;
  if (broken_link_) {
    // Nothing after seq K can tell whether K-1 or K changed.
    const uint64_t k = *broken_link_;
    return Status::Corruption(seq_text(k) + "'s prev_hash is not the hash of " + seq_text(k - 1) +
                                  " (one of the two was altered)",
                              k - 1);
  }
  if (!read.ok()) return read;
  if (events_ != until_) {
    return Status::Corruption("the log ends at " + seq_text(events_) +
                                  " but the store's last seq is " + std::to_string(until_),
                              events_ + 1);
  }
  return Status::Ok();
}

// Reads back through the stream index every stream whose entries the pass
// over the index did not find matching, and checks that it holds exactly the
// versions the walk saw. Keeps going past a finding so that the one with the
// smallest seq is reported. A read per event, at random places in the log:
// the slow check, which names what is wrong.
Status check_streams_one_by_one(const EventStore& store, const StreamTips& streams, uint64_t until,
                                const VerifyProgressFn& progress) {
  Status first;
  auto note = [&first](Status s) {
    if (first.ok() || (s.seq() != 0 && (first.seq() == 0 || s.seq() < first.seq()))) {
      first = std::move(s);
    }
  };
  uint64_t done = 0;
  for (const auto& [stream, tip] : streams) {
    if (tip.index_matches) {
      ++done;
      continue;
    }
    uint32_t seen = 0;
    Status s = store.read_stream(stream, until, [&](const fb::Event& e, std::string_view) {
      ++seen;
      return e.stream_version() == seen && e.seq() <= until;
    });
    if (!s.ok()) {
      note(std::move(s));
    } else if (seen != tip.version) {
      note(Status::Corruption("the stream index of " + stream + " reads " + std::to_string(seen) +
                                  " versions in order, the log holds " +
                                  std::to_string(tip.version),
                              tip.seq));
    }
    if (progress && ++done % kVerifyProgressEvery == 0) progress({"index", done, streams.size()});
  }
  if (progress) progress({"index", streams.size(), streams.size()});
  return first;
}

// One stream's run of entries in the index scan.
struct IndexRun {
  std::string stream;
  uint32_t versions = 0;  // entries with seq <= until, all in order from 1
  uint64_t marks = 0;
  bool in_order = true;
  uint64_t first_seq = 0;
};

// What the fast check found.
struct IndexScan {
  bool matches = true;
  uint64_t matched = 0;               // streams whose entries match the walk
  std::optional<Status> unexplained;  // a difference reading streams back cannot see
  // Entries after `until`: events appended since the walk began, unless the
  // log does not hold them.
  std::vector<std::pair<std::string, uint64_t>> after_until;
};

// The fast check: one pass over the stream index in key order, comparing each
// stream's entries with what the walk saw (how many, in order, and the sum of
// their marks). Entries after `until` were appended since the walk began and
// are left out.
Status scan_index(const EventStore& store, StreamTips& streams, uint64_t until,
                  const VerifyProgressFn& progress, IndexScan* out) {
  IndexRun run;
  bool in_run = false;
  auto close_run = [&] {
    if (!in_run || run.versions == 0) return;  // none, or only entries appended since
    in_run = false;
    auto tip = streams.find(run.stream);
    if (tip == streams.end()) {
      out->matches = false;
      if (!out->unexplained) {
        out->unexplained = Status::Corruption("the stream index has entries for " + run.stream +
                                                  ", a stream the log does not have (the first "
                                                  "points at " +
                                                  seq_text(run.first_seq) + ")",
                                              run.first_seq);
      }
      return;
    }
    if (!run.in_order || tip->second.version != run.versions || tip->second.marks != run.marks) {
      out->matches = false;
      // A stream whose entries a key of another stream splits into two runs
      // may have matched with the first: it must be read back all the same.
      tip->second.index_matches = false;
      return;
    }
    tip->second.index_matches = true;
    ++out->matched;
    if (progress && out->matched % kVerifyProgressEvery == 0) {
      progress({"index", out->matched, streams.size()});
    }
  };
  Status s = store.scan_stream_index([&](const StreamIndexEntry& e) {
    if (!e.well_formed) {
      out->matches = false;
      if (!out->unexplained) {
        out->unexplained = Status::Corruption("the stream index holds a malformed entry");
      }
      return true;
    }
    if (!in_run || e.stream != run.stream) {
      close_run();
      run = IndexRun{std::string(e.stream), 0, 0, true, 0};
      in_run = true;
    }
    if (e.seq > until) {
      out->after_until.emplace_back(e.stream, e.seq);
      return true;
    }
    if (e.version != run.versions + 1) run.in_order = false;
    if (run.versions == 0) run.first_seq = e.seq;
    ++run.versions;
    run.marks += mark(e.version, e.seq);
    return true;
  });
  close_run();
  if (out->matched != streams.size()) out->matches = false;
  if (!s.ok()) return s;
  // After the scan, whose lock a read may not take again. The store indexes
  // an event only once it is written, so an entry whose event the log does
  // not hold points past its end.
  std::string bytes;
  for (const auto& [stream, seq] : out->after_until) {
    Status r = store.read_event(seq, &bytes);
    if (r.code() == Status::Code::kNotFound) {
      out->matches = false;
      if (!out->unexplained) {
        out->unexplained = Status::Corruption("the stream index of " + stream + " points at " +
                                                  seq_text(seq) + ", past the end of the log",
                                              seq);
      }
      break;
    }
    if (!r.ok()) return r;
  }
  return Status::Ok();
}

// The fast check, and the slow one only when the fast one finds a difference
// (or cannot read the index), so that a finding names its seq as precisely
// as reading each stream back can. The slow one reads only the streams the
// fast one did not find whole: a stream whose entries match in count, order
// and marks holds no finding.
Status check_stream_index(const EventStore& store, StreamTips& streams, uint64_t until,
                          const VerifyProgressFn& progress) {
  IndexScan scan;
  Status read = scan_index(store, streams, until, progress, &scan);
  if (read.ok() && scan.matches) {
    if (progress) progress({"index", streams.size(), streams.size()});
    return Status::Ok();
  }
  if (Status exact = check_streams_one_by_one(store, streams, until, progress); !exact.ok()) {
    return exact;
  }
  if (scan.unexplained) return *scan.unexplained;
  if (!read.ok()) return read;
  return Status::Corruption(
      "the stream index differs from the log, yet every stream of the log reads back whole");
}

bool read_tail(const EventStore& store, uint64_t* seq, Hash* hash) {
  for (int i = 0; i < kTailReadAttempts; ++i) {
    *seq = store.last_seq();
    *hash = store.last_hash();
    if (store.last_seq() == *seq) return true;
  }
  return false;
}

}  // namespace

namespace {

// The store's open damage, once the walk found the events up to `last` whole:
// the damaged write-ahead log record lost what came after them.
Status damage_after(const EventStore& store, uint64_t last) {
  Status open = store.open_damage();
  if (open.ok()) return open;
  return Status::Corruption(
      "the write-ahead log has a damaged record after seq " + std::to_string(last) +
          ": the events from here on, if any were written, are lost (" + open.message() + ")",
      last + 1);
}

}  // namespace

Status verify_log(const EventStore& store, VerifyReport* report, const VerifyProgressFn& progress,
                  const VerifyEventCheck& check) {
  uint64_t until = 0;
  Hash tail_hash{};
  const bool tail_known = read_tail(store, &until, &tail_hash);
  *report = VerifyReport{};
  if (until == 0) return damage_after(store, 0);
  LogWalk walk(until, progress, check);
  Status read = store.read_range(0, until, [&walk](const fb::Event& e, std::string_view bytes) {
    return walk.visit(e, bytes);
  });
  Status s = walk.finish(std::move(read));
  report->events = walk.events();
  report->streams = walk.streams().size();
  report->last_seq = walk.events();
  report->last_hash = walk.last_hash();
  if (!s.ok()) return s;
  if (progress) progress({"log", walk.events(), until});
  if (tail_known && tail_hash != walk.last_hash()) {
    return Status::Corruption("the store's last hash is not the hash of its last event", until);
  }
  if (Status lost = damage_after(store, until); !lost.ok()) return lost;
  if (Status index = check_stream_index(store, walk.streams(), until, progress); !index.ok()) {
    return index;
  }
  // The index reads whole, yet a writable open would refuse its checkpoint
  // record: verify must not pass a store the server cannot start on.
  return store.index_damage();
}

}  // namespace runledger
