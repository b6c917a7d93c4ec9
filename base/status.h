// Status: the result of an operation that can fail for operating reasons
// (I/O, corruption, conflicts). Programmer errors are assertions, not Statuses.
// An unchecked Status is a bug: callers either act on it or ignore it with
// an explicit, searchable `.IgnoreError()`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace runledger {

class [[nodiscard]] Status {
 public:
  // Stable codes: never renumber, never reuse.
  enum class Code : uint8_t {
    kOk = 0,
    kNotFound = 1,
    kCorruption = 2,   // bytes on disk are not what was written
    kConflict = 3,     // expected seq/version did not match
    kIoError = 4,      // the disk refused (full, failing, read-only)
    kInvalid = 5,      // bad argument
    kUnavailable = 6,  // the store is closed or read-only
    // A write whose commit was sent but never confirmed (a timeout, a lost
    // connection): it may or may not have happened.
    kInDoubt = 7,
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status Corruption(std::string m, uint64_t seq = 0) {
    Status s(Code::kCorruption, std::move(m));
    s.seq_ = seq;
    return s;
  }
  static Status Conflict(std::string m) { return Status(Code::kConflict, std::move(m)); }
  static Status IoError(std::string m) { return Status(Code::kIoError, std::move(m)); }
  static Status Invalid(std::string m) { return Status(Code::kInvalid, std::move(m)); }
  static Status Unavailable(std::string m) { return Status(Code::kUnavailable, std::move(m)); }
  static Status InDoubt(std::string m) { return Status(Code::kInDoubt, std::move(m)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // For corruption: the first bad sequence number, 0 when unknown.
  uint64_t seq() const { return seq_; }
  void IgnoreError() const {}
  std::string ToString() const;

 private:
  Status(Code c, std::string m) : code_(c), message_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string message_;
  uint64_t seq_ = 0;
};

}  // namespace runledger
