// The in-memory runs of the stream index; see open_stream_index.h.
#include "events/open_stream_index.h"

#include <algorithm>

namespace runledger {
namespace {

// Most streams get a handful of events between two checkpoints (a W1 job
// gets 12): room for them in the first allocation.
constexpr size_t kRunSeqsReserved = 4;

}  // namespace

bool OpenStreamIndex::add(std::string_view stream, uint32_t version, uint64_t seq) {
  auto it = runs_.find(stream);
  if (it == runs_.end()) {
    it = runs_.emplace(std::string(stream), StreamRun{version, {}}).first;
    it->second.seqs.reserve(kRunSeqsReserved);
  } else if (version != it->second.last_version() + 1) {
    return false;
  }
  it->second.seqs.push_back(seq);
  ++events_;
  return true;
}

const StreamRun* OpenStreamIndex::find(std::string_view stream) const {
  auto it = runs_.find(stream);
  return it == runs_.end() ? nullptr : &it->second;
}

std::vector<std::pair<std::string_view, const StreamRun*>> OpenStreamIndex::sorted() const {
  std::vector<std::pair<std::string_view, const StreamRun*>> out;
  out.reserve(runs_.size());
  for (const auto& [stream, run] : runs_) out.emplace_back(stream, &run);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

void OpenStreamIndex::clear() {
  runs_.clear();
  events_ = 0;
}

}  // namespace runledger
