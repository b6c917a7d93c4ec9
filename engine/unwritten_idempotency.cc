#include "engine/unwritten_idempotency.h"

#include <utility>

namespace runledger {

void UnwrittenIdempotency::keep(std::string record_key, std::string record) {
  deciding_.insert_or_assign(std::move(record_key), std::move(record));
}

const std::string* UnwrittenIdempotency::find(const std::string& record_key) const {
  for (const Records* records : {&deciding_, &writing_}) {
    auto it = records->find(record_key);
    if (it != records->end()) return &it->second;
  }
  return nullptr;
}

void UnwrittenIdempotency::hand_over() {
  writing_ = std::move(deciding_);
  deciding_.clear();
}

}  // namespace runledger
