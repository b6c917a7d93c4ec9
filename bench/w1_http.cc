// W1 over HTTP: see w1_http.h.
#include "bench/w1_http.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

#include "base/ascii.h"
#include "bench/progress_wait.h"
#include "projections/job.h"

namespace runledger::bench {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

constexpr time_t kConnectTimeoutS = 10;
// Generous: a loaded shared machine must not turn into a failed run.
constexpr auto kReplyTimeout = std::chrono::seconds(60);
// A reply larger than this is not one of W1's: the run fails rather than
// buffering whatever a wrong server sends.
constexpr size_t kReplyBytesMax = size_t{1} << 20;
// enqueue, claim, start, then a start and a done per step of the plan an
// enqueue without one gets.
constexpr size_t kStepsBeforePlan = 3;

std::unique_ptr<httplib::Client> client_for(const std::string& url) {
  auto c = std::make_unique<httplib::Client>(url);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  c->set_connection_timeout(kConnectTimeoutS);
  c->set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(kReplyTimeout).count());
  return c;
}

// "http://HOST:PORT" (a trailing "/" allowed) into its host and port.
bool split_url(std::string_view url, std::string* host, std::string* port) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) return false;
  url.remove_prefix(kScheme.size());
  if (!url.empty() && url.back() == '/') url.remove_suffix(1);
  size_t colon = url.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == url.size()) return false;
  *host = std::string(url.substr(0, colon));
  *port = std::string(url.substr(colon + 1));
  return true;
}

// The status and Content-Length of a reply head (status line and fields,
// without the blank line); false when it is not a reply W1 can read.
bool parse_reply_head(std::string_view head, int* status, size_t* content_length) {
  constexpr std::string_view kVersion = "HTTP/1.1 ";
  if (head.size() < kVersion.size() + 3 || head.substr(0, kVersion.size()) != kVersion) {
    return false;
  }
  const char* code = head.data() + kVersion.size();
  if (std::from_chars(code, code + 3, *status).ec != std::errc()) return false;
  bool have_length = false;
  size_t at = head.find("\r\n");
  while (at != std::string_view::npos && at + 2 < head.size()) {
    size_t begin = at + 2;
    size_t end = head.find("\r\n", begin);
    std::string_view line = head.substr(begin, end == std::string_view::npos ? end : end - begin);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos && iequals(line.substr(0, colon), "content-length")) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), *content_length);
      if (ec != std::errc() || ptr != value.data() + value.size()) return false;
      have_length = true;
    }
    at = end;
  }
  return have_length;
}

// What the connections of one run share.
struct HttpRun {
  explicit HttpRun(const W1Plan& p) : plan(p) {}

  void fail(std::string what) {
    stop = true;  // a broken run is not worth timing further
    std::lock_guard lock(mu);
    if (failures.size() < kW1FailuresKeptMax) failures.push_back(std::move(what));
  }

  const W1Plan& plan;
  std::atomic<uint64_t> next_job{0};
  std::atomic<uint64_t> succeeded{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::string> failures;  // GUARDED_BY(mu)
};

// One client: a keep-alive connection running its jobs one command at a
// time. All its handlers run on the one thread of its io_context, so it
// needs no lock of its own.
class ClientConnection {
 public:
  ClientConnection(asio::io_context& io, HttpRun& run, size_t index, std::string host_field)
      : socket_(io), timer_(io), run_(run), index_(index), host_field_(std::move(host_field)) {}

  void start(const tcp::resolver::results_type& server) {
    arm_timer(std::chrono::seconds(kConnectTimeoutS), "no connection");
    asio::async_connect(
        socket_, server, [this](boost::system::error_code ec, const tcp::endpoint&) {
          if (ec) return fail("connecting: " + ec.message());
          socket_.set_option(tcp::no_delay(true), ec);  // no Nagle delay behind each request
          start_next_job();
        });
  }

  LatencyRecorder latency;
  uint64_t commands = 0;

 private:
  void start_next_job() {
    uint64_t n = run_.next_job.fetch_add(1);
    if (n >= run_.plan.jobs || run_.stop.load(std::memory_order_relaxed)) return close();
    id_ = w1_job_id(run_.plan, n);
    kind_ = fmt::format("{}-k{}", run_.plan.id_prefix, index_);
    job_path_ = "/v1/jobs/" + id_;
    target_ = w1_target(run_.plan, index_, k_++);
    step_ = 0;
    send_step();
  }

  // Sends command step_ of the current job.
  void send_step() {
    if (step_ == 0) {
      nlohmann::json enq = {{"id", id_},
                            {"kind", kind_},
                            {"target", target_},
                            {"input", {{"window", "2026-05-06T00:00Z/PT1H"}}}};
      return send("/v1/jobs", enq.dump());
    }
    if (step_ == 1) {
      nlohmann::json claim = {
          {"worker", "worker-" + kind_}, {"kinds", {kind_}}, {"lease_s", kW1LeaseS}};
      return send("/v1/jobs/claim", claim.dump());
    }
    if (step_ == 2) {
      nlohmann::json start = {{"lease_token", token_}, {"execution_handle", "handle-" + id_}};
      return send(job_path_ + "/start", start.dump());
    }
    const size_t plan_step = (step_ - kStepsBeforePlan) / 2;
    const bool done = (step_ - kStepsBeforePlan) % 2 == 1;
    std::string path =
        fmt::format("{}/steps/{}/{}", job_path_, plan_[plan_step], done ? "done" : "start");
    nlohmann::json body = {{"lease_token", token_}};
    if (done) body["output"] = {{"rows", 1}};
    send(path, body.dump());
  }

  std::string_view step_name() const {
    static constexpr std::array<std::string_view, 3> kFirst = {"enqueue", "claim", "start"};
    if (step_ < kStepsBeforePlan) return kFirst[step_];
    return (step_ - kStepsBeforePlan) % 2 == 0 ? "step start" : "step done";
  }

  void send(const std::string& path, const std::string& body) {
    out_.clear();
    fmt::format_to(std::back_inserter(out_),
                   "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n"
                   "Content-Length: {}\r\n\r\n{}",
                   path, host_field_, body.size(), body);
    sent_ = SteadyClock::now();
    arm_timer(kReplyTimeout, "no reply");
    asio::async_write(socket_, asio::buffer(out_), [this](boost::system::error_code ec, size_t) {
      if (ec) return fail("sending: " + ec.message());
      read_head();
    });
  }

  void read_head() {
    asio::async_read_until(
        socket_, asio::dynamic_buffer(in_, kReplyBytesMax), "\r\n\r\n",
        [this](boost::system::error_code ec, size_t head_bytes) {
          if (ec) return fail("reading the reply: " + ec.message());
          int status = 0;
          size_t length = 0;
          if (!parse_reply_head(std::string_view(in_).substr(0, head_bytes - 2), &status,
                                &length)) {
            return fail("a reply W1 cannot read: " + in_.substr(0, head_bytes));
          }
          const size_t whole = head_bytes + length;
          if (whole > kReplyBytesMax) return fail(fmt::format("a reply of {} bytes", whole));
          if (in_.size() >= whole) return on_reply(status, head_bytes, length);
          asio::async_read(socket_, asio::dynamic_buffer(in_, kReplyBytesMax),
                           asio::transfer_exactly(whole - in_.size()),
                           [this, status, head_bytes, length](boost::system::error_code e, size_t) {
                             if (e) return fail("reading the reply body: " + e.message());
                             on_reply(status, head_bytes, length);
                           });
        });
  }

  void on_reply(int status, size_t head_bytes, size_t length) {
    disarm_timer();
    if (run_.plan.record_latency) {
      latency.add(std::chrono::duration<double, std::milli>(SteadyClock::now() - sent_).count());
    }
    ++commands;
    std::string body = in_.substr(head_bytes, length);
    in_.erase(0, head_bytes + length);
    const int want = step_ == 0 ? 201 : 200;
    if (status != want) {
      return fail(fmt::format("{} {}: {} {} (wanted {})", step_name(), id_, status, body, want));
    }
    if (step_ == 1 && !take_claim(body)) {
      return fail("claim handed out something else than " + id_ + ": " + body);
    }
    if (++step_ < kStepsBeforePlan + 2 * plan_.size()) return send_step();
    auto last = nlohmann::json::parse(body, nullptr, false);
    if (!last.is_object() || last.value("state", "") != "SUCCEEDED") {
      return fail("job " + id_ + " did not end SUCCEEDED: " + body);
    }
    run_.succeeded.fetch_add(1, std::memory_order_relaxed);
    start_next_job();
  }

  // Keeps the lease token when the claim handed out this connection's job.
  bool take_claim(const std::string& body) {
    auto claimed = nlohmann::json::parse(body, nullptr, false);
    if (!claimed.is_object() || !claimed.contains("job") || !claimed["job"].is_object() ||
        claimed["job"].value("id", "") != id_ || !claimed.contains("lease_token") ||
        !claimed["lease_token"].is_string()) {
      return false;
    }
    token_ = claimed["lease_token"].get<std::string>();
    return true;
  }

  // Closes the connection when `limit` passes before the timer is armed again
  // or cancelled. Lazily, as the server does: arming moves a deadline, and
  // the wait, when it ends, fails the run if the deadline passed or waits
  // again until it; re-arming the asio timer for every command cost the load
  // tool a cancelled wait each time, on the cores of the server it measures.
  void arm_timer(std::chrono::steady_clock::duration limit, std::string_view what) {
    deadline_ = SteadyClock::now() + limit;
    limit_ = limit;
    what_ = what;
    // A pending wait is never replaced: each deadline here is later than the
    // one before it (the connect timeout is the shortest and comes first).
    if (!timer_waiting_) wait_for_deadline();
  }

  void disarm_timer() { deadline_ = SteadyClock::time_point::max(); }

  void wait_for_deadline() {
    timer_waiting_ = true;
    timer_.expires_at(deadline_);
    timer_.async_wait([this](boost::system::error_code ec) {
      timer_waiting_ = false;
      if (ec || closed_ || deadline_ == SteadyClock::time_point::max()) return;
      if (SteadyClock::now() < deadline_) return wait_for_deadline();
      fail(fmt::format("{} within {} s", what_,
                       std::chrono::duration_cast<std::chrono::seconds>(limit_).count()));
    });
  }

  void fail(const std::string& what) {
    if (closed_) return;
    run_.fail(fmt::format("client {}: {}", index_, what));
    close();
  }

  void close() {
    closed_ = true;
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  SteadyClock::time_point deadline_ = SteadyClock::time_point::max();
  std::chrono::steady_clock::duration limit_{};
  std::string_view what_;
  bool timer_waiting_ = false;
  HttpRun& run_;
  const size_t index_;
  const std::string host_field_;
  const std::vector<std::string> plan_ = jobs::Enqueue{}.plan;
  std::string out_;
  std::string in_;
  SteadyClock::time_point sent_ = SteadyClock::now();
  bool closed_ = false;
  // The current job.
  uint64_t k_ = 0;  // jobs this client started
  size_t step_ = 0;
  std::string id_, kind_, target_, job_path_, token_;
};

}  // namespace

bool http_get(const std::string& url, const std::string& path, int* status, std::string* body,
              std::string* error) {
  auto c = client_for(url);
  auto res = c->Get(path);
  if (!res) {
    *error = httplib::to_string(res.error());
    return false;
  }
  *status = res->status;
  *body = res->body;
  return true;
}

W1Outcome drive_w1_http(const std::string& url, const W1Plan& plan, size_t client_threads,
                        const ProgressFn& progress, std::string_view phase) {
  W1Outcome out;
  std::string host, port;
  if (!split_url(url, &host, &port)) {
    out.failures.push_back("not an http://HOST:PORT URL: " + url);
    return out;
  }
  client_threads = std::clamp<size_t>(client_threads, 1, std::max<size_t>(plan.callers, 1));
  std::vector<std::unique_ptr<asio::io_context>> loops;
  for (size_t t = 0; t < client_threads; ++t)
    loops.push_back(std::make_unique<asio::io_context>(1));
  tcp::resolver::results_type server;
  try {
    server = tcp::resolver(*loops.front()).resolve(host, port);
  } catch (const boost::system::system_error& e) {
    out.failures.push_back("resolving " + url + ": " + e.what());
    return out;
  }
  HttpRun run(plan);
  std::vector<std::unique_ptr<ClientConnection>> clients;
  const std::string host_field = host + ":" + port;
  for (size_t c = 0; c < plan.callers; ++c) {
    clients.push_back(
        std::make_unique<ClientConnection>(*loops[c % client_threads], run, c, host_field));
  }
  auto started = SteadyClock::now();
  for (auto& client : clients) client->start(server);
  std::vector<std::thread> threads;
  // When each loop ran out of work: the run ends with the last of them, not
  // when the progress wait next looks.
  std::vector<SteadyClock::time_point> ended(loops.size());
  for (size_t t = 0; t < loops.size(); ++t) {
    threads.emplace_back([&, t] {
      loops[t]->run();
      ended[t] = SteadyClock::now();
    });
  }
  wait_with_progress(threads, run.succeeded, plan.jobs, run.stop, progress, phase);
  out.seconds =
      std::chrono::duration<double>(*std::max_element(ended.begin(), ended.end()) - started)
          .count();
  out.jobs_succeeded = run.succeeded.load();
  add_caller_figures(clients, &out);
  out.failures = std::move(run.failures);
  return out;
}

}  // namespace runledger::bench
