#include "tests/support/raw_db.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "events/keys.h"

namespace runledger::testing {
namespace {

void check(const rocksdb::Status& s, const std::string& what) {
  if (!s.ok()) throw std::runtime_error(what + ": " + s.ToString());
}

}  // namespace

RawDb::RawDb(const std::string& dir) {
  rocksdb::DBOptions o;
  std::vector<std::string> names;
  check(rocksdb::DB::ListColumnFamilies(o, dir, &names), "list column families");
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  families.reserve(names.size());
  for (const auto& n : names) families.emplace_back(n, rocksdb::ColumnFamilyOptions());
  check(rocksdb::DB::Open(o, dir, families, &handles_, &db_), "raw open " + dir);
}

RawDb::~RawDb() {
  for (auto* h : handles_) {
    db_->Flush(rocksdb::FlushOptions(), h).PermitUncheckedError();
    db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
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

std::vector<std::pair<std::string, std::string>> RawDb::entries(const std::string& fam) {
  std::vector<std::pair<std::string, std::string>> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), family(fam)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    out.emplace_back(it->key().ToString(), it->value().ToString());
  }
  check(it->status(), "raw scan");
  return out;
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

std::string RawDb::event(uint64_t seq) { return get(keys::kLogFamily, log_key(seq)); }

void RawDb::put_event(uint64_t seq, std::string_view bytes) {
  put(keys::kLogFamily, log_key(seq), bytes);
}

void RawDb::remove_event(uint64_t seq) { remove(keys::kLogFamily, log_key(seq)); }

std::string RawDb::log_key(uint64_t seq) {
  std::string k(keys::kSeqBytes, '\0');
  keys::put_be64(seq, k.data());
  return k;
}

std::string flushed_log_table(const std::string& dir) {
  RawDb raw(dir);
  raw.flush();
  std::string table;
  for (const auto& f : raw.table_files(keys::kLogFamily)) {
    if (table.empty() || file_size(f) > file_size(table)) table = f;
  }
  if (table.empty()) throw std::runtime_error("the log of " + dir + " has no table file");
  return table;
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

std::vector<std::string> wal_files(const std::string& dir) {
  std::vector<std::pair<uint64_t, std::string>> numbered;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (entry.path().extension() != ".log" ||
        name.find_first_not_of("0123456789.log") != std::string::npos) {
      continue;
    }
    numbered.emplace_back(std::stoull(name), entry.path().string());
  }
  std::sort(numbered.begin(), numbered.end());
  std::vector<std::string> files;
  files.reserve(numbered.size());
  for (auto& [number, path] : numbered) files.push_back(std::move(path));
  return files;
}

std::string newest_wal(const std::string& dir) {
  std::vector<std::string> files = wal_files(dir);
  if (files.empty()) throw std::runtime_error("no WAL file in " + dir);
  return files.back();
}

uint64_t file_size(const std::string& path) { return std::filesystem::file_size(path); }

}  // namespace runledger::testing
