#include "tools/runledgerd.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <thread>

#include <CLI/CLI.hpp>

#include "base/free_memory.h"
#include "cluster/cluster_node.h"
#include "cluster/pg_store.h"
#include "engine/engine.h"
#include "engine/log.h"
#include "http/auth.h"
#include "http/console.h"
#include "http/cross_site.h"
#include "http/listen_address.h"
#include "http/server.h"
#include "http/tls_context.h"
#include "tools/server_startup.h"

namespace runledger {
namespace {

struct Flags {
  std::string listen = "127.0.0.1:8080";
  std::string data = "./data";
  int64_t stale_lock_s = 3600;
  int64_t lease_default_s = 30;
  int64_t lease_max_s = 3600;
  size_t body_limit_bytes = 1 << 20;
  size_t http_threads = 128;
  size_t waiting_claims_max = 4096;
  size_t live_streams_max = 4096;
  size_t connections_per_client_max = 1024;
  size_t live_streams_per_client_max = 1024;
  size_t reply_bytes_max = 256 << 20;
  size_t live_jobs_max = 1'000'000;
  std::string auth_tokens;
  int64_t retry_backoff_s = 1;
  std::string log_level = "info";
  bool read_only = false;
  uint64_t snapshot_every_events = EngineOptions{}.snapshot_every_events;
  std::string ui_dir;
  bool no_ui = false;
  http::TlsFiles tls;
  bool insecure_plaintext = false;
  // The log in PostgreSQL (docs/cluster.md).
  std::string store = "rocksdb";
  std::string pg_dsn;
  std::string node_name;
  std::string advertise_url;
  int leader_lease_s = 10;
};

// Every flag may also be given in the environment, as RUNLEDGER_ and its
// name in upper snake case (--lease-max-s: RUNLEDGER_LEASE_MAX_S), and the
// help shows each option's default. The rule is written here once.
std::string env_name_of(std::string_view flag) {
  std::string env = "RUNLEDGER_";
  for (char c : flag.substr(2)) env += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return env;
}

template <typename T>
CLI::Option* option(CLI::App& app, const std::string& name, T& value, const std::string& what) {
  return app.add_option(name, value, what)->envname(env_name_of(name))->capture_default_str();
}

CLI::Option* flag(CLI::App& app, const std::string& name, bool& value, const std::string& what) {
  return app.add_flag(name, value, what)->envname(env_name_of(name));
}

void add_flags(CLI::App& app, Flags& f) {
  option(app, "--listen", f.listen, "HOST:PORT to listen on");
  option(app, "--data", f.data, "data folder (created on first start)");
  option(app, "--stale-lock-s", f.stale_lock_s, "age at which a running sync is stale")
      ->check(CLI::Range(1, 365 * 24 * 3600));
  // docs/domain.md: a lease is at least 1 s and at most 1 h; the flags choose
  // within those bounds, never beyond them.
  option(app, "--lease-default-s", f.lease_default_s, "lease length when a claim gives none")
      ->check(CLI::Range(1, 3600));
  option(app, "--lease-max-s", f.lease_max_s, "longest lease a worker may ask for")
      ->check(CLI::Range(1, 3600));
  option(app, "--body-limit-bytes", f.body_limit_bytes, "largest request body accepted")
      ->check(CLI::Range(1024, 64 * 1024 * 1024));
  option(app, "--http-threads", f.http_threads,
         "threads running the HTTP handlers that wait (reads, scans, live streams)")
      ->check(CLI::Range(2, 4096));
  option(app, "--waiting-claims-max", f.waiting_claims_max,
         "claims that may wait for work at once (wait_s); one more is refused with 503")
      ->check(CLI::Range(1, 1'000'000));
  option(app, "--live-jobs-max", f.live_jobs_max,
         "jobs not finished that the server holds; an enqueue beyond is refused with 503")
      ->check(CLI::Range(1, 100'000'000));
  option(app, "--reply-bytes-max", f.reply_bytes_max,
         "reply bytes not yet taken by clients beyond which reads are refused with 503 "
         "and Retry-After")
      ->check(CLI::Range(size_t{64} << 10, size_t{64} << 30));
  option(app, "--live-streams-max", f.live_streams_max,
         "live event streams (GET /v1/events/live) open at once; one more is refused "
         "with 503")
      ->check(CLI::Range(1, 1'000'000));
  option(app, "--connections-per-client-max", f.connections_per_client_max,
         "connections one client address may hold open; one more is closed at once (0: "
         "no cap; raise it behind a reverse proxy)")
      ->check(CLI::Range(0, 1'000'000));
  option(app, "--live-streams-per-client-max", f.live_streams_per_client_max,
         "live event streams one client address may hold open; one more is refused with "
         "503 (0: no cap)")
      ->check(CLI::Range(0, 1'000'000));
  option(app, "--auth-tokens", f.auth_tokens, "file of bearer tokens: NAME ROLE TOKEN per line");
  option(app, "--retry-backoff-s", f.retry_backoff_s,
         "first retry delay; doubles per attempt, at most 300 s")
      ->check(CLI::Range(0, 300));
  option(app, "--log-level", f.log_level, "debug, info, warn or error");
  flag(app, "--read-only", f.read_only, "serve reads only (forensics; starts on a damaged log)");
  option(app, "--snapshot-every-events", f.snapshot_every_events,
         "write a projection snapshot after this many events (and 8 per live entity)")
      ->check(CLI::Range(1000, 100'000'000));
  auto* cert = option(app, "--tls-cert", f.tls.cert,
                      "serve HTTPS with this PEM certificate chain (reloaded on SIGHUP)");
  auto* key = option(app, "--tls-key", f.tls.key, "the PEM private key of --tls-cert");
  cert->needs(key);
  key->needs(cert);
  option(app, "--tls-client-ca", f.tls.client_ca,
         "require client certificates signed by these PEM CAs (mutual TLS)")
      ->needs(cert);
  flag(app, "--insecure-plaintext", f.insecure_plaintext,
       "allow plain HTTP with authentication on a non-loopback address (tokens go in "
       "clear)");
  auto* ui_dir = option(app, "--ui-dir", f.ui_dir,
                        "serve the console at /ui/ from this folder (index.html, assets/) "
                        "instead of the files built in");
  option(app, "--store", f.store,
         "where the log is: rocksdb (the data folder) or postgres (--pg-dsn; the data "
         "folder holds what can be rebuilt)")
      ->check(CLI::IsMember({"rocksdb", "postgres"}));
  option(app, "--pg-dsn", f.pg_dsn,
         "libpq connection string of the PostgreSQL database (--store postgres)");
  option(app, "--node-name", f.node_name,
         "this node's name in the leader row (--store postgres; default: the host name)");
  option(app, "--advertise-url", f.advertise_url,
         "the URL other nodes send writes to while this one leads (default: from --listen)");
  option(app, "--leader-lease-s", f.leader_lease_s,
         "how long a leadership lasts unless renewed (renewed every third)")
      ->check(CLI::Range(kLeaderLeaseMinS, kLeaderLeaseMaxS));
  flag(app, "--no-ui", f.no_ui, "serve no console (/ui/ is 404)")->excludes(ui_dir);
}

bool split_listen(const std::string& listen, std::string* host, int* port) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  *host = listen.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  try {
    size_t used = 0;
    *port = std::stoi(listen.substr(colon + 1), &used);
    return used == listen.size() - colon - 1 && *port >= 0 && *port <= 65535;
  } catch (const std::exception&) {
    return false;
  }
}

// Signals are taken by one thread with sigwait, so no handler runs inside
// the engine's or the HTTP library's threads.
sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

// Exit statuses: 0 a clean stop; 1 a start that could not be made (the
// address or the data folder taken, a store that would not open); 2 flags
// that are wrong, whatever the flag parser would have said; 3 a start
// refused on a damaged log.
constexpr int kExitCannotStart = 1;
constexpr int kExitUsage = 2;
constexpr int kExitDamagedLog = 3;

int refuse_damaged_log(const std::string& data, const Status& found) {
  log::error("the log in {} failed verification: {}", data, found.ToString());
  if (found.code() == Status::Code::kCorruption) {
    log::error("verifying the whole log to name its first bad event...");
    const std::string first = first_damage(data);
    if (!first.empty()) log::error("the first bad event: {}", first);
  }
  log::error(
      "refusing to serve state built from a damaged log; start with --read-only to "
      "read it for forensics, and run `runledger verify --data {}`",
      data);
  return kExitDamagedLog;
}

// What the flags say, once checked: where to listen, whether the log is in
// PostgreSQL, and the console to serve.
struct StartPlan {
  std::string host;
  int port = 0;
  bool clustered = false;
  std::shared_ptr<const http::Console> console;
};

int usage_error(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  return kExitUsage;
}

// --listen, and what serving there needs: auth off loopback, and TLS when
// auth is on, unless --insecure-plaintext; TLS files that load.
int check_listen(const Flags& f, StartPlan* plan) {
  if (!split_listen(f.listen, &plan->host, &plan->port)) {
    return usage_error("--listen must be HOST:PORT, got '" + f.listen + "'");
  }
  const bool loopback = http::loopback_host(plan->host);
  if (!loopback && f.auth_tokens.empty()) {
    return usage_error("refusing to listen on " + plan->host +
                       " without --auth-tokens: only loopback addresses may run without "
                       "authentication");
  }
  // A bearer token sent in clear over a network is a token given away.
  if (!loopback && !f.tls.enabled() && !f.insecure_plaintext) {
    return usage_error("refusing to serve plain HTTP with authentication on " + plan->host +
                       ": bearer tokens would cross the network in clear; give --tls-cert and "
                       "--tls-key, or --insecure-plaintext to accept that");
  }
  if (f.tls.enabled()) {
    std::shared_ptr<boost::asio::ssl::context> checked;
    if (Status t = http::make_tls_context(f.tls, &checked); !t.ok())
      return usage_error(t.message());
  }
  return 0;
}

// The flags that must agree with each other.
int check_combinations(const Flags& f, StartPlan* plan) {
  plan->clustered = f.store == "postgres";
  if (plan->clustered && f.pg_dsn.empty()) {
    return usage_error("--store postgres needs --pg-dsn (or RUNLEDGER_PG_DSN)");
  }
  if (!plan->clustered && !f.pg_dsn.empty()) {
    return usage_error("--pg-dsn is for --store postgres");
  }
  if (plan->clustered && f.read_only) {
    return usage_error("--read-only is for --store rocksdb: a standby of the cluster serves reads");
  }
  if (f.lease_default_s > f.lease_max_s) {
    return usage_error("--lease-default-s must not exceed --lease-max-s");
  }
  return 0;
}

// The console: the built-in one, a folder's (--ui-dir), or none (--no-ui).
int load_console(const Flags& f, StartPlan* plan) {
  if (!f.ui_dir.empty()) {
    std::string why;
    plan->console = http::Console::from_folder(f.ui_dir, &why);
    if (!plan->console) return usage_error(why);
  } else if (!f.no_ui) {
    plan->console = http::Console::built_in();
  }
  return 0;
}

// The tokens file is read before the data folder is touched: a wrong one
// stops the start as any wrong flag does.
int check_tokens_file(const Flags& f) {
  if (f.auth_tokens.empty()) return 0;
  http::Auth tokens;
  if (Status t = tokens.load(f.auth_tokens); !t.ok()) {
    return usage_error("--auth-tokens: " + t.message());
  }
  struct stat st {};
  if (::stat(f.auth_tokens.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    log::warn("the tokens file {} may be read by others than its owner (mode {:o}): chmod 600 it",
              f.auth_tokens, st.st_mode & 0777);
  }
  return 0;
}

// Every check of the flags, and --log-level applied: 0, or kExitUsage with
// what is wrong on stderr. Nothing on disk is touched yet.
int check_flags(const Flags& f, StartPlan* plan) {
  log::Level level;
  if (!log::parse_level(f.log_level, &level)) {
    return usage_error("--log-level must be debug, info, warn or error");
  }
  log::set_level(level);
  if (int code = check_listen(f, plan); code != 0) return code;
  if (int code = check_combinations(f, plan); code != 0) return code;
  if (int code = load_console(f, plan); code != 0) return code;
  return check_tokens_file(f);
}

// The embedded store in the data folder (under a read-only start, locked
// against a writer); an exit status when it cannot be opened.
int open_local_store(const Flags& f, ReadOnlyFolderLock* read_only_lock,
                     std::unique_ptr<EventStore>* out) {
  std::error_code ec;
  std::filesystem::create_directories(f.data, ec);
  if (f.read_only) {
    if (Status l = read_only_lock->acquire(f.data); !l.ok()) {
      log::error("{}", l.ToString());
      return kExitCannotStart;
    }
  }
  StoreOptions so;
  so.read_only = f.read_only;
  const auto start = std::chrono::steady_clock::now();
  Status st = open_rocksdb_store(f.data, so, out);
  if (st.code() == Status::Code::kCorruption) return refuse_damaged_log(f.data, st);
  if (!st.ok()) {
    log::error("cannot open the data folder {}: {}", f.data, st.ToString());
    return kExitCannotStart;
  }
  // Most of it is RocksDB replaying its WAL: what a slow start is made of
  // (docs/operations.md "Start-up").
  log::info("opened the store in {:.3f} s",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

ClusterOptions cluster_options(const Flags& f) {
  ClusterOptions co;
  co.dsn = f.pg_dsn;
  co.leader_lease_s = f.leader_lease_s;
  co.node_name = f.node_name;
  if (co.node_name.empty()) {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    co.node_name = name;
  }
  co.advertise_url = f.advertise_url;
  if (co.advertise_url.empty()) {
    co.advertise_url = (f.tls.enabled() ? "https://" : "http://") + f.listen;
  }
  return co;
}

EngineOptions engine_options(const Flags& f, bool clustered) {
  EngineOptions eo;
  eo.policy.lease_default_s = f.lease_default_s;
  eo.policy.lease_max_s = f.lease_max_s;
  eo.policy.stale_lock_s = f.stale_lock_s;
  eo.policy.retry_backoff_s = f.retry_backoff_s;
  eo.read_only = f.read_only;
  eo.snapshot_every_events = f.snapshot_every_events;
  eo.live_jobs_max = f.live_jobs_max;
  // A node of a cluster writes nothing until it leads.
  if (clustered) eo.refuse_writes = not_leader_reply("");
  return eo;
}

void log_start(const LoadReport& rep) {
  log::info("replayed {} events in {:.3f} s (snapshot at seq {})", rep.replayed, rep.seconds,
            rep.snapshot_seq);
  if (!rep.snapshot_problem.ok()) {
    log::warn("set the snapshot aside and folded the whole log: {}",
              rep.snapshot_problem.ToString());
  }
  if (!rep.damage.ok()) log::warn("read-only on a damaged log: {}", rep.damage.ToString());
}

http::ServerOptions server_options(const Flags& f, StartPlan& plan, int listen_fd,
                                   ClusterNode* node) {
  http::ServerOptions ho;
  ho.host = plan.host;
  ho.port = plan.port;
  ho.listen_fd = listen_fd;
  ho.threads = f.http_threads;
  ho.waiting_claims_max = f.waiting_claims_max;
  ho.live_streams_max = f.live_streams_max;
  ho.connections_per_client_max = f.connections_per_client_max;
  ho.live_streams_per_client_max = f.live_streams_per_client_max;
  ho.reply_bytes_max = f.reply_bytes_max;
  ho.body_limit_bytes = f.body_limit_bytes;
  ho.api.lease_max_s = f.lease_max_s;
  ho.auth_tokens_path = f.auth_tokens;
  ho.console = std::move(plan.console);
  ho.tls = f.tls;
  if (node != nullptr) {
    ho.api.node_role = [node] {
      ClusterHealth h = node->health();
      return http::NodeRole{h.leader, h.epoch, h.head_seen, h.following, h.problem};
    };
  }
  return ho;
}

// Serves until SIGINT or SIGTERM; a SIGHUP reads the tokens file and the
// TLS files again. `signals` are blocked in every thread, and taken here.
void serve_until_signalled(http::Server& server, const sigset_t& signals) {
  std::thread waiter([&server, signals] {
    int sig = 0;
    while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
      if (Status r = server.reload(); r.ok()) {
        log::info("SIGHUP: read the tokens file and the TLS files again");
      } else {
        log::error("SIGHUP: kept the tokens and TLS files as they were: {}", r.message());
      }
    }
    log::info("signal {}: shutting down", sig);
    server.stop();
  });
  server.serve();
  // The waiter may still be in sigwait if the server stopped on its own: the
  // signal it waits for (blocked in every thread) ends that wait, nothing else.
  pthread_kill(waiter.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
  waiter.join();
}

}  // namespace

int server_main(int argc, char** argv) {
  CLI::App app{"runledgerd: the runledger engine and its HTTP API"};
  Flags f;
  add_flags(app, f);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Prints the help, or what is wrong and how to get the help.
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  StartPlan plan;
  if (int code = check_flags(f, &plan); code != 0) return code;

  // Whatever the server creates is its owner's alone: the data folder holds
  // every job's input and output (the store also closes a folder made
  // before, see events/private_folder.h).
  ::umask(077);
  sigset_t signals = shutdown_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Gives back what the allocator keeps free after a load (base/free_memory.h):
  // without it the server stays at the size of its busiest moment.
  FreeMemoryKeeper free_memory;

  // The address first: a port in use stops the start before the data
  // folder is created, read or written.
  http::ListenAddress address;
  if (Status a = http::ListenAddress::take(plan.host, plan.port, &address); !a.ok()) {
    log::error("{}", a.ToString());
    return kExitCannotStart;
  }
  ReadOnlyFolderLock read_only_lock;
  std::unique_ptr<EventStore> local_store;
  if (int code = open_local_store(f, &read_only_lock, &local_store); code != 0) return code;
  std::shared_ptr<EventStore> store = std::move(local_store);
  std::shared_ptr<PgStore> pg_store;
  const ClusterOptions co = plan.clustered ? cluster_options(f) : ClusterOptions{};
  if (plan.clustered) {
    pg_store = std::make_shared<PgStore>(store, co.dsn, co.timeout_ms());
    store = pg_store;
  }
  SystemClock clock;
  std::unique_ptr<Engine> engine;
  if (Status st = Engine::open(store, clock, engine_options(f, plan.clustered), &engine);
      !st.ok()) {
    return refuse_damaged_log(f.data, st);
  }
  log_start(engine->load_report());
  engine->record_schedule_gaps();
  std::unique_ptr<ClusterNode> node;
  if (plan.clustered) {
    node = std::make_unique<ClusterNode>(*engine, *pg_store, co);
    node->start();
    log::info("cluster node {} on the PostgreSQL store; it will advertise {}", co.node_name,
              co.advertise_url);
  }

  http::Server server(*engine, server_options(f, plan, address.release(), node.get()));
  if (Status st = server.bind(); !st.ok()) {
    log::error("{}", st.ToString());
    return kExitCannotStart;
  }
  log::info("listening on {}:{} with data in {}{}{}", plan.host, server.port(), f.data,
            f.read_only ? " (read-only)" : "", f.tls.enabled() ? " (HTTPS)" : "");
  serve_until_signalled(server, signals);
  if (node) node->stop();
  engine->shutdown();
  if (!f.read_only) {
    if (Status st = store->flush_to_tables(); !st.ok()) {
      log::warn("the next start replays the write-ahead log: {}", st.ToString());
    }
  }
  // Only once the engine wrote its last: a standby takes over at once.
  if (node) node->resign();
  log::info("stopped cleanly");
  return 0;
}

}  // namespace runledger
