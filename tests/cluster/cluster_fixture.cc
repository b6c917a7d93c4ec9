#include "tests/cluster/cluster_fixture.h"

#include <httplib.h>

#include <sstream>

#include "tests/support/subprocess.h"

namespace runledger::testing {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);

int port_of_url(const std::string& url) {
  auto colon = url.rfind(':');
  if (colon == std::string::npos) return 0;
  try {
    return std::stoi(url.substr(colon + 1));
  } catch (const std::exception&) {
    return 0;
  }
}

uint64_t number(const std::string& text) {
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

ClusterNodeProcess& Cluster::start(size_t i, const std::string& dsn_override) {
  if (i == nodes_.size()) {
    ClusterNodeProcess n;
    n.name = "n" + std::to_string(i + 1);
    n.dir = std::make_unique<TempDir>();
    n.port = free_port();
    nodes_.push_back(std::move(n));
  }
  ClusterNodeProcess& n = nodes_.at(i);
  n.process.reset();
  n.process = std::make_unique<ServerProcess>(
      n.dir->path() + "/data",
      std::vector<std::string>{"--store", "postgres", "--pg-dsn",
                               dsn_override.empty() ? dsn_ : dsn_override, "--node-name", n.name,
                               "--leader-lease-s", std::to_string(lease_s_)},
      n.port);
  EXPECT_TRUE(n.process->wait_ready()) << n.process->log();
  return n;
}

bool Cluster::leads(size_t i) {
  if (!nodes_[i].process || !nodes_[i].process->running()) return false;
  httplib::Client c("127.0.0.1", nodes_[i].port);
  c.set_connection_timeout(1);
  c.set_read_timeout(1);
  auto r = c.Get("/v1/health/leader");
  return r && r->status == 200;
}

int Cluster::wait_leader(std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < deadline) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (leads(i)) return static_cast<int>(i);
    }
    std::this_thread::sleep_for(kPoll);
  }
  return -1;
}

bool Cluster::wait_leads(size_t i, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < deadline) {
    if (leads(i)) return true;
    std::this_thread::sleep_for(kPoll);
  }
  return false;
}

bool Cluster::wait_followed(size_t i, uint64_t seq, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  ApiClient c(nodes_.at(i).port);
  while (std::chrono::steady_clock::now() < deadline) {
    ApiReply r = c.get("/v1/health");
    if (r.json.is_object() && r.json.value("last_seq", uint64_t{0}) >= seq) return true;
    std::this_thread::sleep_for(kPoll);
  }
  return false;
}

KeyedLoad::KeyedLoad(std::vector<int> ports, int threads) : ports_(std::move(ports)) {
  for (int t = 0; t < threads; ++t) threads_.emplace_back([this, t] { run(t); });
}

KeyedLoad::~KeyedLoad() { stop(); }

void KeyedLoad::stop() {
  stop_ = true;
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

std::set<std::string> KeyedLoad::acknowledged() const {
  std::lock_guard<std::mutex> lk(mu_);
  return acked_;
}

size_t KeyedLoad::acknowledged_count() const {
  std::lock_guard<std::mutex> lk(mu_);
  return acked_.size();
}

void KeyedLoad::run(int thread) {
  // One keep-alive connection per node, as a real client keeps.
  std::vector<std::unique_ptr<httplib::Client>> clients;
  for (int port : ports_) {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port);
    c->set_connection_timeout(1);
    c->set_read_timeout(15);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);  // headers and body go in two writes
    clients.push_back(std::move(c));
  }
  size_t at = 0;  // the node tried first
  for (uint64_t n = 0; !stop_; ++n) {
    const std::string id = "job-" + std::to_string(thread) + "-" + std::to_string(n);
    const nlohmann::json body = {
        {"id", id}, {"kind", "etl"}, {"target", "t-" + std::to_string(n % 50)}};
    const Headers key = {{"Idempotency-Key", "k-" + id}};
    while (!stop_) {
      httplib::Client& c = *clients[at % ports_.size()];
      auto r = c.Post("/v1/jobs", httplib::Headers{key.begin(), key.end()}, body.dump(),
                      "application/json");
      if (r && r->status >= 200 && r->status < 300) {
        std::lock_guard<std::mutex> lk(mu_);
        acked_.insert(id);
        break;
      }
      if (r && r->status == 503) {
        auto j = nlohmann::json::parse(r->body, nullptr, false);
        if (j.is_object() && j.value("code", "") == "not_leader" && j["leader"].is_string()) {
          const int port = port_of_url(j["leader"].get<std::string>());
          for (size_t i = 0; i < ports_.size(); ++i) {
            if (ports_[i] == port) at = i;
          }
          if (ports_[at % ports_.size()] == port) continue;
        }
      } else if (r && r->status < 500) {
        ADD_FAILURE() << "a command got " << r->status << ": " << r->body;
        return;
      }
      ++at;  // another node, after a pause
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

uint64_t head_seq(const PgServer& db) {
  return number(db.psql("SELECT coalesce(max(seq), 0) FROM runledger_log"));
}

std::vector<std::string> log_problems(const PgServer& db) {
  std::vector<std::string> problems;
  bool ok = true;
  std::string counts = db.psql(
      "SELECT count(*), coalesce(min(seq), 1), coalesce(max(seq), 0) FROM runledger_log", &ok);
  if (!ok) return {"the log cannot be read"};
  std::istringstream in(counts);
  std::string count, min, max;
  std::getline(in, count, '|');
  std::getline(in, min, '|');
  std::getline(in, max, '|');
  if (number(min) != 1 || number(count) != number(max)) {
    problems.push_back("the log is not gapless from 1: count|min|max = " + counts);
  }
  std::string bad_hash = db.psql("SELECT count(*) FROM runledger_log WHERE hash <> sha256(bytes)");
  if (number(bad_hash) != 0) problems.push_back(bad_hash + " rows do not hash to their hash");
  std::string broken = db.psql(
      "SELECT count(*) FROM runledger_log a JOIN runledger_log b ON b.seq = a.seq + 1 "
      "WHERE b.prev_hash <> a.hash");
  if (number(broken) != 0) problems.push_back("the hash chain breaks at " + broken + " rows");
  std::string deposed = db.psql(
      "SELECT count(*) FROM (SELECT epoch, max(epoch) OVER (ORDER BY seq ROWS BETWEEN UNBOUNDED "
      "PRECEDING AND 1 PRECEDING) AS before FROM runledger_log) t WHERE epoch < before");
  if (number(deposed) != 0) {
    problems.push_back(deposed + " rows of a deposed epoch come after the next epoch's first row");
  }
  return problems;
}

std::vector<std::string> lost_or_doubled(const PgServer& db, const std::set<std::string>& acked) {
  std::vector<std::string> problems;
  std::string rows = db.psql(
      "SELECT substr(stream, 5), count(*) FROM runledger_log WHERE type = 'JobEnqueued' "
      "GROUP BY stream");
  std::set<std::string> present;
  std::istringstream in(rows);
  for (std::string line; std::getline(in, line);) {
    auto bar = line.find('|');
    if (bar == std::string::npos) continue;
    const std::string id = line.substr(0, bar);
    if (number(line.substr(bar + 1)) != 1) problems.push_back(id + " was enqueued more than once");
    present.insert(id);
  }
  for (const auto& id : acked) {
    if (present.count(id) == 0) problems.push_back("acknowledged " + id + " is not in the log");
  }
  return problems;
}

std::vector<std::string> folder_problems(const PgServer& db, const std::string& folder) {
  std::vector<std::string> problems;
  CliResult v = run_cli({"verify", "--data", folder});
  if (v.code != 0) problems.push_back("verify of " + folder + ": " + v.out + v.err);
  const uint64_t head = head_seq(db);
  CliResult e = run_cli({"events", "--data", folder, "--from-seq", std::to_string(head)});
  if (head > 0 && e.out.find("\"seq\":" + std::to_string(head) + ",") == std::string::npos) {
    problems.push_back(folder + " does not reach the database's head " + std::to_string(head) +
                       ": " + e.out.substr(0, 300) + e.err);
  }
  if (e.out.find("\"seq\":" + std::to_string(head + 1) + ",") != std::string::npos) {
    problems.push_back(folder + " holds events past the database's head");
  }
  return problems;
}

}  // namespace runledger::testing
