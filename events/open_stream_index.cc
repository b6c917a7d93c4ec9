// The in-memory runs of the stream index; see open_stream_index.h.
#include "events/open_stream_index.h"

#include <algorithm>

namespace runledger {
namespace {

// Most streams get a handful of events between two checkpoints (a W1 job
// gets 12): room for them in the first allocation.
constexpr size_t kRunSeqsReserved = 4;
// A run that grew beyond this gives its memory back when it starts over; a
// smaller one keeps it for the next interval.
constexpr size_t kRunSeqsKeptMax = 64;

}  // namespace

const StreamRun* OpenStreamIndex::find(std::string_view stream) const {
  auto it = streams_.find(stream);
  return it == streams_.end() ? nullptr : &it->second.run;
}

OpenStream* OpenStreamIndex::find_open(std::string_view stream) {
  auto it = streams_.find(stream);
  return it == streams_.end() ? nullptr : &it->second;
}

OpenStream* OpenStreamIndex::insert(std::string_view stream, uint32_t stored_version) {
  OpenStream& open = streams_[std::string(stream)];
  open.run.first_version = stored_version + 1;
  open.run.seqs.clear();
  open.run.seqs.reserve(kRunSeqsReserved);
  open.staged_version = stored_version;
  return &open;
}

void OpenStreamIndex::publish(OpenStream* stream, uint64_t seq) {
  stream->run.seqs.push_back(seq);
  ++events_;
}

bool OpenStreamIndex::add(std::string_view stream, uint32_t version, uint64_t seq) {
  OpenStream* open = find_open(stream);
  if (open == nullptr) {
    if (version == 0) return false;
    open = insert(stream, version - 1);
  } else if (version != open->run.last_version() + 1) {
    return false;
  }
  publish(open, seq);
  open->staged_version = version;
  return true;
}

std::vector<std::pair<std::string_view, const StreamRun*>> OpenStreamIndex::sorted_runs() const {
  std::vector<std::pair<std::string_view, const StreamRun*>> out;
  out.reserve(streams_.size());
  for_each_run(
      [&](std::string_view stream, const StreamRun& run) { out.emplace_back(stream, &run); });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

OpenStreamIndex OpenStreamIndex::copy_runs() const {
  OpenStreamIndex copy;
  for_each_run([&](std::string_view stream, const StreamRun& run) {
    copy.streams_.emplace(std::string(stream), OpenStream{run, run.last_version()});
    copy.events_ += run.seqs.size();
  });
  return copy;
}

void OpenStreamIndex::checkpointed() {
  for (auto& [stream, open] : streams_) {
    StreamRun& run = open.run;
    run.first_version += static_cast<uint32_t>(run.seqs.size());
    if (run.seqs.capacity() > kRunSeqsKeptMax) {
      std::vector<uint64_t>().swap(run.seqs);
    } else {
      run.seqs.clear();
    }
  }
  events_ = 0;
}

void OpenStreamIndex::evict_idle() {
  std::erase_if(streams_, [](const auto& entry) { return entry.second.run.seqs.empty(); });
}

void OpenStreamIndex::clear() {
  streams_.clear();
  events_ = 0;
}

}  // namespace runledger
