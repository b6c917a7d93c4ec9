// The cluster tests' scaffolding: PostgreSQL servers, runledgerd nodes on
// them, a load of keyed commands that follows `not_leader`, and the checks
// of docs/cluster.md "Failures that must lose nothing", each a list of the
// problems it found (so that a positive control can show it finds them).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/http/api_client.h"
#include "tests/support/pg_server.h"
#include "tests/support/server_process.h"
#include "tests/support/test_support.h"

namespace runledger::testing {

// One runledgerd of the cluster: its folder survives the process.
struct ClusterNodeProcess {
  std::string name;
  std::unique_ptr<TempDir> dir;
  int port = 0;
  std::unique_ptr<ServerProcess> process;
};

class Cluster {
 public:
  explicit Cluster(std::string dsn, int lease_s = 3) : dsn_(std::move(dsn)), lease_s_(lease_s) {}
  // Starts node `i` (a new one when i == size()); its folder is kept across restarts.
  ClusterNodeProcess& start(size_t i, const std::string& dsn_override = "");
  ClusterNodeProcess& node(size_t i) { return nodes_.at(i); }
  size_t size() const { return nodes_.size(); }
  int lease_s() const { return lease_s_; }
  // The index of the node whose /v1/health/leader is 200, within `wait`; -1 if none.
  int wait_leader(std::chrono::milliseconds wait);
  // Whether node `i` leads within `wait`, asking it alone: a paused node
  // holds every question put to it for the whole of its timeout.
  bool wait_leads(size_t i, std::chrono::milliseconds wait);
  // Whether node `i` runs and answers /v1/health/leader 200 now.
  bool leads(size_t i);
  // Waits until node i's /v1/health reports last_seq >= seq.
  bool wait_followed(size_t i, uint64_t seq, std::chrono::milliseconds wait);

 private:
  std::string dsn_;
  int lease_s_;
  std::vector<ClusterNodeProcess> nodes_;
};

// Clients that enqueue jobs with an Idempotency-Key each, sending each
// command to the node that leads (following not_leader's URL, trying every
// node when none is known), retrying a command with its key until it is
// acknowledged or the load stops. Records every acknowledged id.
class KeyedLoad {
 public:
  KeyedLoad(std::vector<int> ports, int threads);
  ~KeyedLoad();
  void stop();
  std::set<std::string> acknowledged() const;
  size_t acknowledged_count() const;

 private:
  void run(int thread);
  std::vector<int> ports_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::set<std::string> acked_;
  std::vector<std::thread> threads_;
};

// The checks, against the log in PostgreSQL; each returns the problems found.
// The log is gapless from 1, every row hashes to its `hash` and chains to the
// one before, and epochs never go down.
std::vector<std::string> log_problems(const PgServer& db);
// Every acknowledged id's job was enqueued exactly once.
std::vector<std::string> lost_or_doubled(const PgServer& db, const std::set<std::string>& acked);
// `runledger verify` of the node's folder is clean and the folder ends at
// the database's head (the node must be stopped).
std::vector<std::string> folder_problems(const PgServer& db, const std::string& folder);
// The log's head in the database.
uint64_t head_seq(const PgServer& db);

}  // namespace runledger::testing
