#include "cluster/cluster_node.h"

#include <algorithm>
#include <cstring>

#include "base/sha256.h"
#include "base/thread_name.h"
#include "cluster/pg_schema.h"
#include "engine/log.h"

namespace runledger {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The local deadline ends this long before the lease the database granted
// (from when the renewal was sent): clocks of two machines drift apart a
// little, and a reply released at the very end still travels.
constexpr auto kDeadlineMargin = std::chrono::milliseconds(250);
constexpr int kRetryMs = 500;

Hash hash_of(std::string_view bytes) {
  Hash h{};
  if (bytes.size() == h.size()) std::memcpy(h.data(), bytes.data(), h.size());
  return h;
}

}  // namespace

Reply not_leader_reply(const std::string& leader_url) {
  Reply r = Reply::error(
      503, "not_leader",
      leader_url.empty() ? "this node is a standby and no leader is known now: retry soon"
                         : "this node is a standby: send writes to the leader at " + leader_url,
      {{"leader", leader_url.empty() ? nlohmann::json(nullptr) : nlohmann::json(leader_url)}});
  r.headers = "Retry-After: 1\r\n";
  return r;
}

ClusterNode::ClusterNode(Engine& engine, PgStore& store, ClusterOptions options)
    : engine_(engine), store_(store), options_(std::move(options)) {
  store_.on_step_down([this](const std::string&) {
    // From the writer thread: no command may be decided on top of a batch
    // the database refused, before the node thread notices.
    engine_.refuse_writes(not_leader_reply(""));
    cv_.notify_all();
  });
  engine_.refuse_writes(not_leader_reply(""));
}

ClusterNode::~ClusterNode() { stop(); }

void ClusterNode::start() {
  thread_ = std::thread([this] {
    name_this_thread("rl-cluster");
    run();
  });
}

void ClusterNode::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ClusterNode::resign() {
  auto epoch = store_.epoch_led();
  store_.step_down();
  engine_.refuse_writes(not_leader_reply(""));
  if (!epoch || conn_ == nullptr || conn_->broken()) return;
  const std::string e = std::to_string(*epoch);
  if (Status st = conn_->query_prepared(pg::kResign, {pg::Param::text(e)}); !st.ok()) {
    log::warn("could not give up the leadership of epoch {}: {}", *epoch, st.ToString());
    return;
  }
  log::info("gave up the leadership of epoch {}", *epoch);
}

ClusterHealth ClusterNode::health() const {
  std::lock_guard<std::mutex> lk(mu_);
  return health_;
}

void ClusterNode::set_problem(const std::string& problem) {
  std::lock_guard<std::mutex> lk(mu_);
  if (health_.problem != problem && !problem.empty()) log::warn("cluster: {}", problem);
  health_.problem = problem;
  if (!problem.empty()) health_.following = false;
}

void ClusterNode::wait_ms(int ms) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait_for(lk, std::chrono::milliseconds(ms), [&] { return stopping_; });
}

void ClusterNode::run() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (stopping_) break;
    }
    if (conn_ == nullptr || conn_->broken()) {
      if (!connect()) {
        if (leading_ && SteadyClock::now() >= deadline_) {
          become_standby("the database could not be reached to renew the leadership");
        }
        wait_ms(kRetryMs);
        continue;
      }
    }
    if (leading_) {
      lead_step();
    } else {
      standby_step();
    }
  }
  settle_in_flight();  // the engine stops next: nothing may be left half-handed over
  if (leading_) {
    // The engine stops next; until resign() the row stays ours.
    store_.extend(epoch_, deadline_);
  }
}

bool ClusterNode::connect() {
  conn_.reset();
  Status st = pg::Connection::open(options_.dsn, options_.timeout_ms(), &conn_);
  if (st.ok()) st = pg::ensure_schema(*conn_);
  if (st.ok()) st = pg::prepare_statements(*conn_);
  if (!st.ok()) {
    conn_.reset();
    set_problem("the database cannot be reached: " + st.message());
    return false;
  }
  if (!local_checked_ && !check_local_folder()) {
    conn_.reset();
    return false;
  }
  if (!cursor_known_) {
    const std::string last = std::to_string(store_.inner().last_seq());
    pg::Result r;
    if (Status q = conn_->query_prepared(pg::kIdempotencyCursor, {pg::Param::text(last)}, &r);
        !q.ok() || r.rows() != 1) {
      conn_.reset();
      return false;
    }
    idempotency_cursor_ = static_cast<uint64_t>(r.int64(0, 0));
    cursor_known_ = true;
  }
  set_problem("");
  return true;
}

// A folder that holds events the database does not (another database's,
// or one restored from an older backup) must not be followed on top of.
bool ClusterNode::check_local_folder() {
  const uint64_t last = store_.inner().last_seq();
  if (last == 0) {
    local_checked_ = true;
    return true;
  }
  const std::string seq = std::to_string(last);
  pg::Result r;
  if (Status st = conn_->query_prepared(pg::kEventHash, {pg::Param::text(seq)}, &r); !st.ok()) {
    set_problem("the database cannot be read: " + st.message());
    return false;
  }
  if (r.rows() != 1 || hash_of(r.bytes(0, 0)) != store_.inner().last_hash()) {
    set_problem("the local folder holds seq " + seq +
                (r.rows() == 1 ? " with another hash than the database's"
                               : ", which the database does not") +
                ": it belongs to another log; move it away and the node rebuilds it");
    return false;
  }
  local_checked_ = true;
  return true;
}

void ClusterNode::become_standby(const std::string& why) {
  if (leading_) log::warn("no longer leading epoch {}: {}", epoch_, why);
  leading_ = false;
  store_.step_down();
  refusal_url_ = "";
  engine_.refuse_writes(not_leader_reply(""));
  std::lock_guard<std::mutex> lk(mu_);
  health_.leader = false;
  health_.leader_url.clear();
}

void ClusterNode::lead_step() {
  if (!store_.epoch_led()) {
    become_standby("a write to the database failed");
    return;
  }
  if (SteadyClock::now() >= deadline_) {
    become_standby("the leadership was not renewed in time");
    return;
  }
  if (SteadyClock::now() >= next_renew_ && !renew()) return;
  auto until = std::min(next_renew_, deadline_);
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait_until(lk, until, [&] { return stopping_ || !store_.epoch_led(); });
}

bool ClusterNode::renew() {
  const auto sent = SteadyClock::now();
  const std::string epoch = std::to_string(epoch_);
  const std::string lease = std::to_string(options_.leader_lease_s);
  pg::Result r;
  Status st =
      conn_->query_prepared(pg::kRenew, {pg::Param::text(epoch), pg::Param::text(lease)}, &r);
  if (!st.ok()) {
    // Tried again until the deadline; the loop steps down then.
    next_renew_ = SteadyClock::now() + std::chrono::milliseconds(kRetryMs);
    set_problem("renewing the leadership failed: " + st.message());
    return false;
  }
  if (r.rows() != 1) {
    become_standby("another node took the leadership");
    return false;
  }
  deadline_ = sent + std::chrono::seconds(options_.leader_lease_s) - kDeadlineMargin;
  next_renew_ = sent + std::chrono::milliseconds(options_.leader_lease_s * 1000 / 3);
  store_.extend(epoch_, deadline_);
  std::lock_guard<std::mutex> lk(mu_);
  health_.head_seen = static_cast<uint64_t>(r.int64(0, 0));
  health_.problem.clear();
  return true;
}

bool ClusterNode::read_leader_row() {
  pg::Result r;
  if (Status st = conn_->query_prepared(pg::kLeaderRow, {}, &r); !st.ok() || r.rows() != 1) {
    set_problem("the leader row cannot be read: " + st.message());
    return false;
  }
  const uint64_t epoch = static_cast<uint64_t>(r.int64(0, 0));
  const std::string holder(r.bytes(0, 1));
  const std::string url(r.bytes(0, 2));
  const bool expired = r.boolean(0, 3);
  const uint64_t head = static_cast<uint64_t>(r.int64(0, 4));
  const std::string leader_url = expired || holder == options_.node_name ? "" : url;
  if (leader_url != refusal_url_) {
    engine_.refuse_writes(not_leader_reply(leader_url));
    refusal_url_ = leader_url;
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    health_.epoch = epoch;
    health_.head_seen = head;
    health_.leader_url = leader_url;
    health_.following = true;
  }
  return expired || holder == options_.node_name;
}

void ClusterNode::standby_step() {
  const bool free = read_leader_row();
  if (conn_ == nullptr || conn_->broken()) return;
  int64_t n = follow_once(0);
  if (n < 0) {
    wait_ms(kRetryMs);
    return;
  }
  if (free) {
    end_stale_holders();
    if (!conn_->broken() && try_acquire()) return;
  }
  if (n < static_cast<int64_t>(options_.fetch_events)) wait_ms(options_.poll_ms);
}

uint64_t ClusterNode::followed_seq() const {
  return in_flight_ ? in_flight_->last_seq : store_.inner().last_seq();
}

bool ClusterNode::settle_in_flight() {
  if (!in_flight_) return true;
  Reply reply = in_flight_->reply.get();
  store_.release_replica(in_flight_->replica);
  const bool folded = reply.status == 200;
  if (folded) {
    idempotency_cursor_ = in_flight_->cursor_after;
  } else {
    set_problem("folding the log's events failed: " + reply.body);
  }
  in_flight_.reset();
  return folded;
}

int64_t ClusterNode::follow_once(uint64_t until) {
  const uint64_t local = followed_seq();
  Hash prev = in_flight_ ? in_flight_->last_hash : store_.inner().last_hash();
  const uint64_t cursor_before = in_flight_ ? in_flight_->cursor_after : idempotency_cursor_;
  const std::string after = std::to_string(local);
  const std::string upto = std::to_string(until == 0 ? INT64_MAX : until);
  const std::string limit = std::to_string(options_.fetch_events);
  pg::Result rows;
  Status st = conn_->query_prepared(
      pg::kReadEvents, {pg::Param::text(after), pg::Param::text(upto), pg::Param::text(limit)},
      &rows);
  if (!st.ok()) {
    set_problem("reading the log failed: " + st.message());
    return -1;
  }
  auto replica = std::make_shared<Replica>();
  replica->events.reserve(rows.rows());
  uint64_t seq = local;
  for (int i = 0; i < rows.rows(); ++i) {
    EncodedEvent ev;
    ev.seq = static_cast<uint64_t>(rows.int64(i, 0));
    ev.stream = std::string(rows.bytes(i, 1));
    ev.stream_version = static_cast<uint32_t>(rows.int32(i, 2));
    ev.bytes = std::string(rows.bytes(i, 3));
    // Nothing is folded that does not decode, continue the chain, and hash
    // to what the leader wrote beside it.
    const fb::Event* e = nullptr;
    Status v = decode_event(ev.bytes, &e);
    const Hash h = sha256(ev.bytes);
    if (v.ok() && (ev.seq != seq + 1 || e->seq() != ev.seq || h != hash_of(rows.bytes(i, 4)) ||
                   e->prev_hash() == nullptr || e->prev_hash()->size() != prev.size() ||
                   !std::equal(prev.begin(), prev.end(), e->prev_hash()->begin()))) {
      v = Status::Corruption("does not continue the log at seq " + std::to_string(seq), ev.seq);
    }
    if (!v.ok()) {
      set_problem("the database's event at seq " + std::to_string(ev.seq) +
                  " failed verification: " + v.ToString());
      return -1;
    }
    seq = ev.seq;
    prev = h;
    replica->events.push_back(std::move(ev));
  }
  const std::string cursor = std::to_string(cursor_before);
  pg::Result records;
  st = conn_->query_prepared(pg::kReadIdempotency,
                             {pg::Param::text(cursor), pg::Param::text(limit)}, &records);
  if (!st.ok()) {
    set_problem("reading the idempotency records failed: " + st.message());
    return -1;
  }
  uint64_t next_cursor = cursor_before;
  for (int i = 0; i < records.rows(); ++i) {
    next_cursor = static_cast<uint64_t>(records.int64(i, 0));
    replica->idempotency.emplace_back(std::string(records.bytes(i, 1)),
                                      std::string(records.bytes(i, 2)));
  }
  // This page continues the one in flight: only once that is folded.
  if (!settle_in_flight()) return -1;
  if (replica->events.empty() && replica->idempotency.empty()) return 0;
  const int64_t n = static_cast<int64_t>(replica->events.size());
  store_.admit_replica(replica);
  auto done = std::make_shared<std::promise<Reply>>();
  InFlight f;
  f.replica = replica;
  f.reply = done->get_future();
  f.last_seq = seq;
  f.last_hash = prev;
  f.cursor_after = next_cursor;
  in_flight_ = std::move(f);
  Request req;
  req.replica = replica;
  req.actor = "system";
  engine_.submit(std::move(req), [done](Reply r) { done->set_value(std::move(r)); });
  // More records than one fetch: the next call takes them.
  if (records.rows() == static_cast<int>(options_.fetch_events) && n == 0) return 1;
  return n;
}

void ClusterNode::end_stale_holders() {
  const std::string wait_ms = std::to_string(options_.timeout_ms() / 2);
  pg::Result r;
  if (Status st = conn_->query_prepared(pg::kEndStaleHolder, {pg::Param::text(wait_ms)}, &r);
      !st.ok()) {
    // Without the right to end it (another role's session), the acquire
    // waits on it as before.
    set_problem("ending a session that holds the leader row past its lease failed: " +
                st.message());
    return;
  }
  for (int i = 0; i < r.rows(); ++i) {
    log::warn(
        "ended database session {}: it held the leader row past the lease (a leader frozen "
        "in the middle of a batch); its open transaction is rolled back",
        r.int32(i, 0));
  }
}

bool ClusterNode::try_acquire() {
  const auto sent = SteadyClock::now();
  const std::string lease = std::to_string(options_.leader_lease_s);
  pg::Result r;
  Status st =
      conn_->query_prepared(pg::kAcquire,
                            {pg::Param::text(options_.node_name),
                             pg::Param::text(options_.advertise_url), pg::Param::text(lease)},
                            &r);
  if (!st.ok() || r.rows() != 1) return false;
  epoch_ = static_cast<uint64_t>(r.int64(0, 0));
  const uint64_t head = static_cast<uint64_t>(r.int64(0, 1));
  const Hash head_hash = hash_of(r.bytes(0, 2));
  deadline_ = sent + std::chrono::seconds(options_.leader_lease_s) - kDeadlineMargin;
  next_renew_ = sent + std::chrono::milliseconds(options_.leader_lease_s * 1000 / 3);
  log::info("took the leadership: epoch {}, the log's head at seq {}", epoch_, head);
  // The epoch is ours: nothing more can be appended by another node, so the
  // head is final. Fold up to it (renewing meanwhile) before any write.
  for (;;) {
    if (followed_seq() >= head) break;
    if (SteadyClock::now() >= next_renew_) {
      leading_ = true;  // renew() works on the epoch held
      bool renewed = renew();
      leading_ = false;
      if (!renewed) return false;
    }
    if (follow_once(head) < 0) {
      become_standby("the log could not be folded up to its head");
      return false;
    }
  }
  // Every kept reply too: a retry must find it on the new leader.
  for (;;) {
    if (!settle_in_flight()) return false;
    const uint64_t before = idempotency_cursor_;
    if (follow_once(head) < 0 || !settle_in_flight()) return false;
    if (idempotency_cursor_ == before) break;
  }
  if (store_.inner().last_seq() != head || store_.inner().last_hash() != head_hash) {
    set_problem("the local folder does not end at the database's head (seq " +
                std::to_string(head) + ")");
    return false;
  }
  if (Status l = store_.lead(epoch_, head, head_hash, deadline_); !l.ok()) {
    set_problem("could not open the writing connection: " + l.message());
    return false;
  }
  leading_ = true;
  refusal_url_ = "?";
  engine_.accept_writes();
  {
    std::lock_guard<std::mutex> lk(mu_);
    health_.leader = true;
    health_.epoch = epoch_;
    health_.head_seen = head;
    health_.leader_url = options_.advertise_url;
    health_.following = false;
    health_.problem.clear();
  }
  log::info("leading epoch {} from seq {}", epoch_, head);
  return true;
}

}  // namespace runledger
