// ClusterNode: one runledgerd of a cluster (docs/cluster.md): its own thread
// holds or seeks the leadership and, while it does not lead, follows the log
// in PostgreSQL into the engine.
//
// Standby: every poll it reads the leader row (who leads, where the head
//   is), folds the events after its own last seq through the engine (as a
//   Replica: verified, written to its folder, views and all) and answers
//   commands 503 `not_leader` with the leader's URL. When the row has
//   expired by the database's clock (or names this node, which restarted or
//   stepped down) it takes it with the next epoch, folds the log up to the
//   head it found, and only then takes writes.
// Leader: renews every third of the lease; the local deadline is the time
//   the renewal was sent plus the lease (minus a margin), so that it stops
//   answering writes before the database could let another node take over.
//   A renewal refused (another epoch leads), a deadline passed, or the
//   store stepping down (fenced, in doubt) make it a standby again.
//
// Thread-safe: health() from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "cluster/pg_connection.h"
#include "cluster/pg_store.h"
#include "engine/engine.h"

namespace runledger {

struct ClusterOptions {
  std::string dsn;
  std::string node_name;
  std::string advertise_url;
  int leader_lease_s = 10;  // --leader-lease-s: 2..60
  int poll_ms = 50;         // a standby asks for new events this often
  size_t fetch_events = 8192;
  // Each call to the database gets this long (then it is lost, see
  // pg::Connection): half the lease, at most 5 s.
  int timeout_ms() const { return std::min(5000, leader_lease_s * 500); }
};

inline constexpr int kLeaderLeaseMinS = 2;
inline constexpr int kLeaderLeaseMaxS = 60;

struct ClusterHealth {
  bool leader = false;
  uint64_t epoch = 0;      // led, or the latest seen
  uint64_t head_seen = 0;  // the database's head when last read
  bool following = false;  // a standby that reads the database
  std::string leader_url;  // empty: none known
  std::string problem;     // why it is neither leading nor following
};

// The reply to a command on a standby (`leader_url` empty: none known).
Reply not_leader_reply(const std::string& leader_url);

class ClusterNode {
 public:
  ClusterNode(Engine& engine, PgStore& store, ClusterOptions options);
  ~ClusterNode();
  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  void start();
  // Stops seeking, renewing and following; the engine's writes are refused
  // from then on. The leadership stays until resign() or its expiry.
  void stop();
  // Gives the leadership up (its row expires now), once the engine has
  // stopped writing: a standby takes over without waiting for the lease.
  void resign();

  ClusterHealth health() const;

 private:
  void run();
  bool connect();
  void lead_step();
  void standby_step();
  bool read_leader_row();
  // Ends the database sessions that hold the leader row past its lease
  // (pg::kEndStaleHolder), so that the acquire after it does not wait on them.
  void end_stale_holders();
  bool try_acquire();
  bool renew();
  void become_standby(const std::string& why);
  // Reads the next events (up to `until`, 0: the end) and hands them to the
  // engine, after the replica handed over before them is folded: the
  // database is read while the engine folds. How many, or -1 when it failed.
  int64_t follow_once(uint64_t until);
  // Waits for the replica in flight, if any; false when it was not folded.
  bool settle_in_flight();
  // Where the log the engine will hold once the replica in flight is folded ends.
  uint64_t followed_seq() const;
  bool check_local_folder();
  void set_problem(const std::string& problem);
  void wait_ms(int ms);

  Engine& engine_;
  PgStore& store_;
  const ClusterOptions options_;
  std::unique_ptr<pg::Connection> conn_;  // the node thread's own
  bool local_checked_ = false;
  uint64_t idempotency_cursor_ = 0;
  bool cursor_known_ = false;
  // The replica handed to the engine and not yet folded.
  struct InFlight {
    std::shared_ptr<const Replica> replica;
    std::future<Reply> reply;
    uint64_t last_seq = 0;
    Hash last_hash{};
    uint64_t cursor_after = 0;  // the idempotency cursor once it is folded
  };
  std::optional<InFlight> in_flight_;

  // The node thread's view of its role.
  bool leading_ = false;
  uint64_t epoch_ = 0;
  std::chrono::steady_clock::time_point deadline_{};
  std::chrono::steady_clock::time_point next_renew_{};
  std::string refusal_url_ = "?";  // the URL the engine's refusal names now

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  ClusterHealth health_;   // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace runledger
