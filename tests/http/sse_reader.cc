// SseReader: see sse_reader.h.
#include "tests/http/sse_reader.h"

#include <cstdlib>
#include <sstream>

namespace runledger::testing {
namespace {

// One event block ("id: 3\ndata: {...}") as an event; comments (": ...")
// and unknown fields are skipped, as the SSE format says.
SseEvent parse_block(const std::string& block) {
  SseEvent e;
  std::istringstream in(block);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == ':') continue;
    auto colon = line.find(':');
    std::string field = line.substr(0, colon);
    std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    if (field == "id") e.id = value;
    if (field == "event") e.event = value;
    if (field == "data") e.data += (e.data.empty() ? "" : "\n") + value;
  }
  return e;
}

}  // namespace

std::vector<uint64_t> data_ids(const std::vector<SseEvent>& events) {
  std::vector<uint64_t> out;
  for (const auto& e : events) {
    if (e.event.empty()) out.push_back(std::stoull(e.id));
  }
  return out;
}

std::vector<uint64_t> seq_range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> out;
  for (uint64_t s = from; s <= to; ++s) out.push_back(s);
  return out;
}

SseReader::SseReader(int port, const std::string& path, const std::string& last_event_id,
                     Deadline deadline, int receive_buffer_bytes)
    : conn_(port, deadline, receive_buffer_bytes) {
  if (!conn_.connected()) return;
  std::string extra = "Accept: text/event-stream\r\n";
  if (!last_event_id.empty()) extra += "Last-Event-ID: " + last_event_id + "\r\n";
  if (!conn_.send_all(request_head("GET", path, extra), deadline)) return;
  std::string bytes;
  conn_.read_until(&bytes, deadline,
                   [](const std::string& b) { return b.find("\r\n\r\n") != std::string::npos; });
  auto head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string::npos) return;
  head_ = bytes.substr(0, head_end + 2);
  raw_ = bytes.substr(head_end + 4);
  status_ = status_of(head_);
  chunked_ = lowercase(head_).find("transfer-encoding: chunked") != std::string::npos;
  decode();
}

const std::vector<SseEvent>& SseReader::read(size_t count, Deadline deadline) {
  while (events_.size() < count && !ended_ && status_ == 200) {
    const size_t before = raw_.size();
    auto end = conn_.read_until(&raw_, deadline,
                                [before](const std::string& b) { return b.size() > before; });
    decode();
    if (end != RawConnection::ReadEnd::kDone) {
      ended_ = true;  // closed, reset or out of time: no more events will come
    }
  }
  return events_;
}

void SseReader::decode() {
  if (!chunked_) {
    text_ += raw_;
    raw_.clear();
  }
  // Each chunk is "<hex size>\r\n<data>\r\n"; a zero size ends the body.
  while (chunked_) {
    auto line_end = raw_.find("\r\n");
    if (line_end == std::string::npos) break;
    const size_t size = std::strtoul(raw_.substr(0, line_end).c_str(), nullptr, 16);
    if (size == 0) {
      ended_ = true;
      raw_.clear();
      break;
    }
    if (raw_.size() < line_end + 2 + size + 2) break;
    text_ += raw_.substr(line_end + 2, size);
    raw_.erase(0, line_end + 2 + size + 2);
  }
  for (auto at = text_.find("\n\n"); at != std::string::npos; at = text_.find("\n\n")) {
    SseEvent e = parse_block(text_.substr(0, at));
    text_.erase(0, at + 2);
    if (!e.id.empty() || !e.data.empty() || !e.event.empty()) events_.push_back(std::move(e));
  }
}

}  // namespace runledger::testing
