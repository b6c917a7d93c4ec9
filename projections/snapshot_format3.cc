// Snapshot format 3: see snapshot_format3.h.
#include "projections/snapshot_format3.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "projections/snapshot_tables.h"

namespace runledger::snapshot_format3 {

namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr std::string_view kMagic = "RLSNAP3\n";
constexpr size_t kAlign = 8;
constexpr size_t kLengthBytes = 8;
constexpr size_t kRecordHeadBytes = kLengthBytes + sizeof(Hash);
// A chunk is closed once its buffer passes this size: big enough that the
// per-record costs vanish, small enough that one entity's bytes and a chunk's
// stay far from FlatBuffers' 2 GiB limit.
constexpr size_t kChunkBytesTarget = size_t{4} << 20;

size_t padded(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

void append_record(std::string& out, const FlatBufferBuilder& b) {
  const size_t n = b.GetSize();
  std::string_view payload(reinterpret_cast<const char*>(b.GetBufferPointer()), n);
  char length[kLengthBytes];
  for (size_t i = 0; i < kLengthBytes; ++i) length[i] = static_cast<char>(uint64_t{n} >> (8 * i));
  const Hash hash = sha256(payload);
  out.append(length, kLengthBytes);
  out.append(reinterpret_cast<const char*>(hash.data()), hash.size());
  out.append(payload);
  out.append(padded(n) - n, '\0');
}

// Collects entity tables and writes them out as chunks of about
// kChunkBytesTarget.
class ChunkWriter {
 public:
  explicit ChunkWriter(std::string& out) : out_(out), b_(kChunkBytesTarget + (1 << 16)) {}

  template <typename Entity>
  void add(const Entity& e) {
    auto table = snapshot_tables::write(b_, e);
    if constexpr (std::is_same_v<Entity, jobs::Job>) {
      jobs_.push_back(table);
    } else if constexpr (std::is_same_v<Entity, connectors::Connector>) {
      connectors_.push_back(table);
    } else {
      holds_.push_back(table);
    }
    if (b_.GetSize() >= kChunkBytesTarget) flush();
  }

  void flush() {
    if (jobs_.empty() && connectors_.empty() && holds_.empty()) return;
    b_.Finish(snap::CreateChunk(b_, b_.CreateVector(jobs_), b_.CreateVector(connectors_),
                                b_.CreateVector(holds_)));
    append_record(out_, b_);
    b_.Clear();
    jobs_.clear();
    connectors_.clear();
    holds_.clear();
  }

 private:
  std::string& out_;
  FlatBufferBuilder b_;
  std::vector<Offset<snap::Job>> jobs_;
  std::vector<Offset<snap::Connector>> connectors_;
  std::vector<Offset<snap::Hold>> holds_;
};

// Reads the records one by one, each hashed, verified and 8-byte aligned
// (FlatBuffers reads its scalars in place).
class RecordReader {
 public:
  explicit RecordReader(std::string_view records) : rest_(records) {}

  bool done() const { return rest_.empty(); }

  // The next record as a verified T, or nullptr with *error set.
  template <typename T>
  const T* next(std::string* error) {
    if (rest_.size() < kRecordHeadBytes) return fail(error, "a record is cut short");
    uint64_t n = 0;
    for (size_t i = 0; i < kLengthBytes; ++i) {
      n |= uint64_t{static_cast<uint8_t>(rest_[i])} << (8 * i);
    }
    if (n > rest_.size() - kRecordHeadBytes || n >= FLATBUFFERS_MAX_BUFFER_SIZE) {
      return fail(error, "a record is longer than what is left");
    }
    std::string_view payload = rest_.substr(kRecordHeadBytes, n);
    Hash want;
    std::memcpy(want.data(), rest_.data() + kLengthBytes, want.size());
    if (sha256(payload) != want) return fail(error, "a record does not match its hash");
    rest_.remove_prefix(std::min(rest_.size(), kRecordHeadBytes + padded(n)));

    const auto* data = reinterpret_cast<const uint8_t*>(payload.data());
    if (reinterpret_cast<uintptr_t>(data) % kAlign != 0) {
      aligned_.assign(padded(n) / kAlign, 0);
      std::memcpy(aligned_.data(), data, n);
      data = reinterpret_cast<const uint8_t*>(aligned_.data());
    }
    flatbuffers::Verifier::Options options;
    // Every table takes at least 4 bytes; the default cap (1 M) is below
    // what a chunk of a connector with many documents holds.
    options.max_tables = static_cast<flatbuffers::uoffset_t>(n);
    flatbuffers::Verifier verifier(data, n, options);
    if (!verifier.VerifyBuffer<T>(nullptr)) return fail(error, "a record does not verify");
    return flatbuffers::GetRoot<T>(data);
  }

 private:
  static std::nullptr_t fail(std::string* error, const char* why) {
    *error = why;
    return nullptr;
  }

  std::string_view rest_;
  std::vector<uint64_t> aligned_;
};

template <typename Table, typename Adopt>
size_t adopt_all(const flatbuffers::Vector<Offset<Table>>* list, Adopt adopt) {
  if (!list) return 0;
  for (const Table* t : *list) adopt(snapshot_tables::read(*t));
  return list->size();
}

}  // namespace

void encode(const State& s, std::string* out_bytes) {
  // Finished entities still in memory (their batch is not yet durable) are
  // left out: they are read from the log, like every finished one.
  auto live = [](const auto& e) {
    using E = std::decay_t<decltype(e)>;
    if constexpr (std::is_same_v<E, jobs::Job>) {
      return !jobs::finished(e);
    } else if constexpr (std::is_same_v<E, connectors::Connector>) {
      return !connectors::finished(e);
    } else {
      return !holds::finished(e);
    }
  };
  auto count = [&](const auto& by_id) {
    return static_cast<uint64_t>(
        std::count_if(by_id.begin(), by_id.end(), [&](const auto& kv) { return live(kv.second); }));
  };
  std::string& out = *out_bytes;
  out.assign(kMagic);
  {
    FlatBufferBuilder b(256);
    b.Finish(snap::CreateHead(b, s.last_seq, b.CreateVector(s.last_hash.data(), s.last_hash.size()),
                              count(s.jobs.by_id), count(s.connectors.by_id),
                              count(s.holds.by_id)));
    append_record(out, b);
  }
  ChunkWriter chunks(out);
  auto add_live = [&](const auto& by_id) {
    for (const auto& [id, e] : by_id) {
      if (live(e)) chunks.add(e);
    }
  };
  add_live(s.jobs.by_id);
  add_live(s.connectors.by_id);
  add_live(s.holds.by_id);
  chunks.flush();
}

bool is_format3(std::string_view bytes) { return bytes.substr(0, kMagic.size()) == kMagic; }

namespace {

// Reads and verifies the head record: the covered seq and hash into *out.
Status read_head(RecordReader& records, State* out, const snap::Head** head) {
  std::string error;
  *head = records.next<snap::Head>(&error);
  if (!*head) return Status::Corruption("snapshot head: " + error);
  const auto* hash = (*head)->last_hash();
  if (!hash || hash->size() != out->last_hash.size()) {
    return Status::Corruption("snapshot hash is malformed");
  }
  out->last_seq = (*head)->seq();
  std::memcpy(out->last_hash.data(), hash->data(), out->last_hash.size());
  return Status::Ok();
}

}  // namespace

Status decode_head(std::string_view bytes, State* out) {
  if (!is_format3(bytes)) return Status::Corruption("snapshot is not of format 3");
  RecordReader records(bytes.substr(kMagic.size()));
  const snap::Head* head = nullptr;
  return read_head(records, out, &head);
}

Status decode(std::string_view bytes, State* out) {
  if (!is_format3(bytes)) return Status::Corruption("snapshot is not of format 3");
  RecordReader records(bytes.substr(kMagic.size()));
  std::string error;
  const snap::Head* head = nullptr;
  if (Status st = read_head(records, out, &head); !st.ok()) return st;
  const uint64_t want_jobs = head->jobs(), want_connectors = head->connectors(),
                 want_holds = head->holds();
  uint64_t jobs_n = 0, connectors_n = 0, holds_n = 0;
  while (!records.done()) {
    const snap::Chunk* chunk = records.next<snap::Chunk>(&error);
    if (!chunk) return Status::Corruption("snapshot chunk: " + error);
    jobs_n += adopt_all(chunk->jobs(), [&](jobs::Job j) { jobs::adopt(*out, std::move(j)); });
    connectors_n += adopt_all(chunk->connectors(), [&](connectors::Connector c) {
      connectors::adopt(*out, std::move(c));
    });
    holds_n += adopt_all(chunk->holds(), [&](holds::Hold h) { holds::adopt(*out, std::move(h)); });
  }
  if (jobs_n != want_jobs || connectors_n != want_connectors || holds_n != want_holds ||
      out->jobs.by_id.size() != jobs_n || out->connectors.by_id.size() != connectors_n ||
      out->holds.by_id.size() != holds_n) {
    return Status::Corruption("snapshot holds other entities than its head says");
  }
  return Status::Ok();
}

}  // namespace runledger::snapshot_format3
