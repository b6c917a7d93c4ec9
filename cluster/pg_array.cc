#include "cluster/pg_array.h"

namespace runledger::pg {
namespace {

// The header: ndim, has-nulls flag, element OID, then per dimension its
// length and lower bound; the length is filled in by bytes().
constexpr size_t kHeaderBytes = 20;
constexpr size_t kLengthAt = 12;
// 2000-01-01T00:00:00Z, PostgreSQL's epoch, in Unix milliseconds.
constexpr int64_t kPostgresEpochUnixMs = 946'684'800'000;
constexpr char kJsonbVersion = 1;

void store32(char* p, uint32_t v) {
  p[0] = static_cast<char>(v >> 24);
  p[1] = static_cast<char>(v >> 16);
  p[2] = static_cast<char>(v >> 8);
  p[3] = static_cast<char>(v);
}

}  // namespace

BinaryArray::BinaryArray(Element element) : element_(element) {
  buf_.reserve(256);
  put32(1);  // one dimension
  put32(0);  // no nulls
  put32(static_cast<uint32_t>(element_));
  put32(0);  // its length, filled in by bytes()
  put32(1);  // its lower bound
}

void BinaryArray::clear() {
  buf_.resize(kHeaderBytes);
  count_ = 0;
}

void BinaryArray::put32(uint32_t v) {
  char b[4];
  store32(b, v);
  buf_.append(b, 4);
}

void BinaryArray::put64(uint64_t v) {
  put32(static_cast<uint32_t>(v >> 32));
  put32(static_cast<uint32_t>(v));
}

void BinaryArray::element_length(size_t n) {
  put32(static_cast<uint32_t>(n));
  ++count_;
}

void BinaryArray::add(std::string_view bytes) {
  element_length(bytes.size());
  buf_.append(bytes);
}

void BinaryArray::add_int8(int64_t v) {
  element_length(8);
  put64(static_cast<uint64_t>(v));
}

void BinaryArray::add_int4(int32_t v) {
  element_length(4);
  put32(static_cast<uint32_t>(v));
}

void BinaryArray::add_timestamptz_ms(int64_t unix_ms) {
  add_int8((unix_ms - kPostgresEpochUnixMs) * 1000);
}

void BinaryArray::add_jsonb(std::string_view json) {
  element_length(json.size() + 1);
  buf_.push_back(kJsonbVersion);
  buf_.append(json);
}

std::string_view BinaryArray::bytes() {
  store32(buf_.data() + kLengthAt, count_);
  return buf_;
}

}  // namespace runledger::pg
