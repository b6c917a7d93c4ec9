#include "http/live_stream.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string>

#include <boost/asio/post.hpp>

#include "events/event_json.h"
#include "http/blocking_pool.h"
#include "http/handler_support.h"
#include "http/server_context.h"

namespace runledger::http {
namespace {

namespace asio = boost::asio;

bool parse_seq(const std::string& s, uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The last message of a stream, which a reader can tell from a dropped socket.
std::string end_message(const std::string& reason) {
  return "event: end\ndata: " + nlohmann::json{{"reason", reason}}.dump() + "\n\n";
}

const auto kKeepAliveText = std::make_shared<const std::string>(": keep-alive\n\n");

}  // namespace

LiveStreams::LiveStreams(asio::io_context& io, Engine& engine, BlockingPool& pool,
                         InFlight& in_flight, size_t max_streams)
    : io_(io),
      engine_(engine),
      pool_(pool),
      in_flight_(in_flight),
      max_streams_(max_streams),
      timer_(io) {}

LiveStreams::~LiveStreams() = default;

std::optional<Reply> LiveStreams::open(const ApiRequest& a, uint64_t* after) {
  *after = 0;
  if (!a.last_event_id.empty()) {
    if (!parse_seq(a.last_event_id, after)) {
      return Reply::error(422, "invalid_field", "header Last-Event-ID must be a sequence number",
                          {{"field", "Last-Event-ID"}});
    }
  } else if (const auto* v = a.query_value("after")) {
    if (!parse_seq(*v, after)) {
      return Reply::error(422, "invalid_query", "query parameter 'after' must be a sequence number",
                          {{"field", "after"}});
    }
  }
  if (active_.fetch_add(1) >= max_streams_) {
    active_.fetch_sub(1);
    return Reply::error(503, "too_many_streams", "too many live streams are open; retry later");
  }
  return std::nullopt;
}

std::string LiveStreams::metrics_text() const {
  return "# HELP runledger_live_streams Live event streams (GET /v1/events/live) open now.\n"
         "# TYPE runledger_live_streams gauge\n"
         "runledger_live_streams " +
         std::to_string(open_now()) +
         "\n# HELP runledger_live_stream_events_total Events sent to live streams.\n"
         "# TYPE runledger_live_stream_events_total counter\n"
         "runledger_live_stream_events_total " +
         std::to_string(events_sent()) + "\n";
}

void LiveStreams::add(std::shared_ptr<Sink> sink, uint64_t after) {
  if (!head_known_) {
    head_ = engine_.store().last_seq();
    head_known_ = true;
  }
  auto r = std::make_shared<Reader>();
  r->sink = std::move(sink);
  r->cursor = after;
  r->last_sent = std::chrono::steady_clock::now();
  readers_.push_back(r);
  if (stopping_) return end(*r, "server shutting down");
  tick();
}

void LiveStreams::stop() {
  asio::post(io_, [this] {
    stopping_ = true;
    for (auto& r : readers_) end(*r, "server shutting down");
  });
}

void LiveStreams::schedule_tick() {
  if (ticking_ || readers_.empty()) return;
  ticking_ = true;
  timer_.expires_after(std::chrono::milliseconds(kPollMs));
  timer_.async_wait([this](boost::system::error_code ec) {
    ticking_ = false;
    if (!ec) tick();
  });
}

void LiveStreams::tick() {
  const auto now = std::chrono::steady_clock::now();
  // Readers whose connection closed free their slot.
  std::erase_if(readers_, [this](const std::shared_ptr<Reader>& r) {
    if (!r->sink->gone()) return false;
    active_.fetch_sub(1);
    return true;
  });
  if (readers_.empty()) return;
  const uint64_t last = engine_.store().last_seq();
  bool anyone_at_head = false;
  for (const auto& shared : readers_) {
    Reader& r = *shared;
    if (r.ended) continue;
    if (last > r.cursor + kLagEventsMax) {
      end(r, "reader fell too far behind; resume from the last id");
      continue;
    }
    if (r.cursor >= head_) {
      anyone_at_head = true;
    } else if (!r.reading && !stopping_ && r.sink->queued_bytes() < kBufferBytesMax / 2) {
      catch_up(shared);
    }
    if (r.sink->queued_bytes() == 0 &&
        now - r.last_sent >= std::chrono::milliseconds(kKeepAliveMs)) {
      r.sink->push(kKeepAliveText, *kKeepAliveText);
      r.last_sent = now;
    }
  }
  if (last > head_ && !head_reading_ && !stopping_) {
    if (!anyone_at_head) {
      head_ = last;  // no one to send it to: readers behind read it themselves
    } else {
      head_reading_ = true;
      read(head_, last, [this](std::shared_ptr<const Batch> batch, const std::string& error) {
        on_head(std::move(batch), error);
      });
    }
  }
  schedule_tick();
}

void LiveStreams::catch_up(const std::shared_ptr<Reader>& shared) {
  shared->reading = true;
  read(shared->cursor, head_,
       [this, shared](std::shared_ptr<const Batch> batch, const std::string& error) {
         Reader& r = *shared;
         r.reading = false;
         if (r.ended || r.sink->gone()) return;
         if (!batch) return end(r, error);
         deliver(r, batch);
         // Further behind and room for more: read on without waiting a tick.
         if (!r.ended && r.cursor < head_ && r.sink->queued_bytes() < kBufferBytesMax / 2 &&
             batch->last > batch->first_after) {
           catch_up(shared);
         }
       });
}

void LiveStreams::on_head(std::shared_ptr<const Batch> batch, const std::string& error) {
  head_reading_ = false;
  if (!batch) {
    for (auto& r : readers_) {
      if (r->cursor >= head_) end(*r, error);
    }
    return;
  }
  for (auto& r : readers_) {
    if (!r->ended && r->cursor >= head_) deliver(*r, batch);
  }
  head_ = std::max(head_, batch->last);
}

void LiveStreams::read(uint64_t after, uint64_t up_to,
                       std::function<void(std::shared_ptr<const Batch>, std::string)> done) {
  auto give = [this, done](std::shared_ptr<const Batch> batch, std::string error) {
    asio::post(io_,
               [done, batch = std::move(batch), error = std::move(error)] { done(batch, error); });
  };
  if (!in_flight_.try_add()) return give(nullptr, "server shutting down");
  bool queued = pool_.post([this, after, up_to, give] {
    auto batch = std::make_shared<Batch>();
    batch->first_after = after;
    batch->last = after;
    Status st = engine_.store().read_range(after, 0, [&](const fb::Event& e, std::string_view) {
      if (e.seq() > up_to) return false;
      batch->starts.emplace_back(e.seq(), batch->text.size());
      batch->text += "id: ";
      batch->text += std::to_string(e.seq());
      batch->text += "\ndata: ";
      batch->text += event_json(e).dump();
      batch->text += "\n\n";
      batch->last = e.seq();
      return batch->starts.size() < kEventsPerReadMax && batch->text.size() < kBufferBytesMax / 2;
    });
    if (st.ok()) {
      give(std::move(batch), "");
    } else {
      give(nullptr, "reading the log failed: " + st.ToString());
    }
    // Last: a stop waits for this, and nothing here may touch the server after it.
    in_flight_.done();
  });
  if (!queued) {
    in_flight_.done();
    give(nullptr, "the server is too busy; resume from the last id");
  }
}

void LiveStreams::deliver(Reader& r, const std::shared_ptr<const Batch>& batch) {
  if (r.ended || batch->last <= r.cursor) return;
  auto first = std::upper_bound(
      batch->starts.begin(), batch->starts.end(), r.cursor,
      [](uint64_t seq, const std::pair<uint64_t, size_t>& start) { return seq < start.first; });
  if (first == batch->starts.end()) return;
  // Still holding more than its bound of what came before: too slow.
  if (r.sink->queued_bytes() > kBufferBytesMax) {
    return end(r, "reader too slow to keep up; resume from the last id");
  }
  const size_t count = static_cast<size_t>(batch->starts.end() - first);
  // Owned by the batch, shared by every reader it goes to.
  r.sink->push(std::shared_ptr<const std::string>(batch, &batch->text),
               std::string_view(batch->text).substr(first->second));
  r.cursor = batch->last;
  r.last_sent = std::chrono::steady_clock::now();
  events_sent_.fetch_add(count, std::memory_order_relaxed);
}

void LiveStreams::end(Reader& r, const std::string& reason) {
  if (r.ended) return;
  r.ended = true;
  r.sink->finish(end_message(reason));
}

}  // namespace runledger::http
