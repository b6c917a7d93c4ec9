#include "tests/events/store_test_support.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "events/keys.h"

namespace runledger::testing {
namespace {

const fb::PayloadUnion& sample_payload() {
  static const fb::PayloadUnion payload = [] {
    fb::JobEnqueuedT job;
    job.kind = "export";
    job.target = "warehouse/orders";
    job.input = R"({"day":"2024-05-01"})";
    job.plan = {"extract", "transform", "load"};
    fb::PayloadUnion u;
    u.Set(std::move(job));
    return u;
  }();
  return payload;
}

void check(const rocksdb::Status& s, const std::string& what) {
  if (!s.ok()) throw std::runtime_error(what + ": " + s.ToString());
}

}  // namespace

std::string LogBuilder::encode(uint64_t seq, const std::string& stream, uint32_t version,
                               const Hash& prev_hash) {
  EventDraft d;
  d.seq = seq;
  d.stream = stream;
  d.stream_version = version;
  d.recorded_at_ms = 1'700'000'000'000 + static_cast<int64_t>(seq);
  d.actor = "tester";
  const std::string command_id = "cmd-" + std::to_string(seq);  // outlives the view
  d.command_id = command_id;
  d.prev_hash = prev_hash;
  d.payload = &sample_payload();
  std::string bytes;
  encode_event(d, &bytes);
  return bytes;
}

EncodedEvent LogBuilder::next(const std::string& stream) {
  EncodedEvent e;
  e.seq = ++seq_;
  e.stream = stream;
  e.stream_version = ++versions_[stream];
  e.bytes = encode(e.seq, stream, e.stream_version, hash_);
  hash_ = sha256(e.bytes);
  return e;
}

AppendBatch LogBuilder::batch(const std::vector<std::string>& streams, size_t count) {
  AppendBatch b;
  for (size_t i = 0; i < count; ++i) b.events.push_back(next(streams[i % streams.size()]));
  return b;
}

StoreOptions read_only_mode() {
  StoreOptions o;
  o.read_only = true;
  return o;
}

StoreOptions secondary_mode(const std::string& scratch_dir) {
  StoreOptions o;
  o.secondary = true;
  o.secondary_path = scratch_dir;
  return o;
}

std::unique_ptr<EventStore> open_store(const std::string& dir, StoreOptions options) {
  std::unique_ptr<EventStore> store;
  Status s = open_rocksdb_store(dir, options, &store);
  if (!s.ok()) throw std::runtime_error("open " + dir + ": " + s.ToString());
  return store;
}

std::vector<std::string> all_events(const EventStore& store) {
  std::vector<std::string> out;
  Status s = store.read_range(0, 0, [&](const fb::Event&, std::string_view bytes) {
    out.emplace_back(bytes);
    return true;
  });
  if (!s.ok()) throw std::runtime_error("read_range: " + s.ToString());
  return out;
}

std::string idempotency_value(int64_t recorded_at_ms, std::string_view reply) {
  std::string v(keys::kRecordedAtBytes, '\0');
  keys::put_be64(static_cast<uint64_t>(recorded_at_ms), v.data());
  v.append(reply);
  return v;
}

RawDb::RawDb(const std::string& dir) {
  rocksdb::DBOptions o;
  std::vector<std::string> names;
  check(rocksdb::DB::ListColumnFamilies(o, dir, &names), "list column families");
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const auto& n : names) families.emplace_back(n, rocksdb::ColumnFamilyOptions());
  check(rocksdb::DB::Open(o, dir, families, &handles_, &db_), "raw open " + dir);
}

RawDb::~RawDb() {
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  db_->Close().PermitUncheckedError();
  delete db_;
}

rocksdb::ColumnFamilyHandle* RawDb::family(const std::string& name) {
  for (auto* h : handles_) {
    if (h->GetName() == name) return h;
  }
  throw std::runtime_error("no column family " + name);
}

void RawDb::put(const std::string& fam, std::string_view key, std::string_view value) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  check(db_->Put(wo, family(fam), rocksdb::Slice(key.data(), key.size()),
                 rocksdb::Slice(value.data(), value.size())),
        "raw put");
}

void RawDb::remove(const std::string& fam, std::string_view key) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  check(db_->Delete(wo, family(fam), rocksdb::Slice(key.data(), key.size())), "raw delete");
}

std::string RawDb::get(const std::string& fam, std::string_view key) {
  std::string value;
  check(
      db_->Get(rocksdb::ReadOptions(), family(fam), rocksdb::Slice(key.data(), key.size()), &value),
      "raw get");
  return value;
}

void RawDb::flush() { check(db_->Flush(rocksdb::FlushOptions(), handles_), "raw flush"); }

std::vector<std::string> RawDb::table_files(const std::string& fam) {
  std::vector<rocksdb::LiveFileMetaData> files;
  db_->GetLiveFilesMetaData(&files);
  std::vector<std::string> out;
  for (const auto& f : files) {
    if (f.column_family_name == fam) out.push_back(f.directory + "/" + f.relative_filename);
  }
  return out;
}

std::string RawDb::log_key(uint64_t seq) {
  std::string k(keys::kSeqBytes, '\0');
  keys::put_be64(seq, k.data());
  return k;
}

void flip_byte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(~c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
  if (!f) throw std::runtime_error("cannot flip a byte of " + path);
}

std::string newest_wal(const std::string& dir) {
  std::string best;
  uint64_t best_number = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (entry.path().extension() != ".log" ||
        name.find_first_not_of("0123456789.log") != std::string::npos) {
      continue;
    }
    const uint64_t number = std::stoull(name);
    if (best.empty() || number > best_number) {
      best = entry.path().string();
      best_number = number;
    }
  }
  if (best.empty()) throw std::runtime_error("no WAL file in " + dir);
  return best;
}

uint64_t file_size(const std::string& path) { return std::filesystem::file_size(path); }

}  // namespace runledger::testing
