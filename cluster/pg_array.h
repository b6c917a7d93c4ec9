// BinaryArray: PostgreSQL's binary form of a one-dimensional array without
// nulls (the server's array_recv reads it), so that a statement takes a
// whole batch's column as one parameter:
//   INSERT INTO t (a, b) SELECT * FROM unnest($1::int8[], $2::text[])
// One such statement per batch costs the server far less than one INSERT
// per row, and leaves the client in one message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace runledger::pg {

// Element types by OID (PostgreSQL's pg_type.dat); each add() below writes
// its type's binary form (the server's *_recv).
enum class Element : uint32_t {
  kBytea = 17,
  kInt8 = 20,
  kInt4 = 23,
  kText = 25,
  kTimestamptz = 1184,
  kJsonb = 3802,
};

class BinaryArray {
 public:
  explicit BinaryArray(Element element);
  // Empty again; the buffer is kept.
  void clear();

  // bytea or text (UTF-8): the bytes as they are.
  void add(std::string_view bytes);
  void add_int8(int64_t v);
  void add_int4(int32_t v);
  // A Unix time in milliseconds, as timestamptz (microseconds since 2000-01-01 UTC).
  void add_timestamptz_ms(int64_t unix_ms);
  // JSON text, as jsonb (its format version, 1, then the text).
  void add_jsonb(std::string_view json);

  size_t size() const { return count_; }
  // The whole array, its length filled in: a binary parameter's value,
  // valid until the next add().
  std::string_view bytes();

 private:
  void put32(uint32_t v);
  void put64(uint64_t v);
  void element_length(size_t n);

  Element element_;
  std::string buf_;
  uint32_t count_ = 0;
};

}  // namespace runledger::pg
