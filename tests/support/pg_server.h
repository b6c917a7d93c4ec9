// PgServer: a real PostgreSQL 15 server for the cluster tests, in a
// temporary folder, listening on a free loopback port (TCP only), with
// fsync and synchronous_commit on. As root it runs as the `postgres` user,
// as PostgreSQL refuses root. A primary may get a streaming standby that it
// waits for on every commit (synchronous_standby_names), which can be
// promoted when the primary is lost. Not thread-safe: one test thread owns it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/test_support.h"

namespace runledger::testing {

class PgServer {
 public:
  // Starts a primary with database `runledger` (user `postgres`, trust
  // authentication on loopback): a copy of a cluster that the first call in
  // the process initdb'd. Check ok() afterwards.
  static std::unique_ptr<PgServer> start_primary();
  // pg_basebackup of `primary` + start it as its streaming standby; when
  // `synchronous`, the primary's synchronous_standby_names names it and the
  // call returns once the primary reports it as a sync standby.
  static std::unique_ptr<PgServer> start_standby(PgServer& primary, bool synchronous = true);
  // Stops the server (immediate shutdown: nothing of it is kept; SIGKILL if
  // that fails) and removes the folder.
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  bool ok() const { return ok_; }
  // Why start_* failed, and the server's log.
  const std::string& error() const { return error_; }
  std::string log() const;

  int port() const { return port_; }
  // "host=127.0.0.1 port=<port> dbname=runledger user=postgres connect_timeout=5"
  std::string dsn() const;
  // The same with another port (a proxy in front of this server).
  std::string dsn_via(int port) const;

  // Runs `sql` with psql against this server; its stdout (unaligned, tuples
  // only, '|' between fields, without the last newline) or "" with *ok
  // false when psql failed or did not end within a minute.
  std::string psql(const std::string& sql, bool* ok = nullptr) const;
  // The same against any `dsn` (through a proxy, another database); with
  // `error` (when given) set to what psql printed on stderr.
  static std::string psql_at(const std::string& dsn, const std::string& sql, bool* ok = nullptr,
                             std::string* error = nullptr);

  // The postmaster's process id (postmaster.pid), 0 when it has none.
  pid_t postmaster_pid() const;

  // SIGKILL of the postmaster and its children: a lost machine.
  void kill_hard();
  // Stops (fast) and starts it again on the same port and folder.
  bool restart();
  // A standby: pg_ctl promote, waits until it takes writes. On a promoted
  // former synchronous standby, clears synchronous_standby_names so that
  // its commits do not wait for a standby it no longer has.
  bool promote();
  // Sets synchronous_standby_names to '' (asynchronous replication) and reloads.
  bool make_replication_asynchronous();

 private:
  PgServer() = default;
  // initdb, database `runledger`, and a clean shutdown: what each primary
  // starts from a copy of.
  static std::unique_ptr<PgServer> make_template();
  // Runs a PostgreSQL program (in bin_) as the user the server runs as; its
  // exit code and output.
  std::pair<int, std::string> run_pg(const std::vector<std::string>& args) const;
  // The folder, handed to `postgres` when running as root.
  bool init_folder();
  // pg_ctl start; when `may_move`, on another free port if this one was
  // taken since it was picked.
  bool start(bool may_move);
  // Records why and the log's tail in error_; false.
  bool fail(const std::string& what);
  bool ok_ = false;
  std::string error_;
  TempDir dir_;
  std::string pgdata_;
  std::string bin_;  // /usr/lib/postgresql/<major>/bin
  int port_ = 0;
  std::string name_;  // application_name of a standby
};

}  // namespace runledger::testing
