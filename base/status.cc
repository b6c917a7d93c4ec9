#include "base/status.h"

namespace runledger {

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      return "not found: " + message_;
    case Code::kCorruption:
      return seq_ ? "corruption at seq " + std::to_string(seq_) + ": " + message_
                  : "corruption: " + message_;
    case Code::kConflict:
      return "conflict: " + message_;
    case Code::kIoError:
      return "I/O error: " + message_;
    case Code::kInvalid:
      return "invalid: " + message_;
    case Code::kUnavailable:
      return "unavailable: " + message_;
    case Code::kInDoubt:
      return "in doubt: " + message_;
  }
  return message_;
}

}  // namespace runledger
