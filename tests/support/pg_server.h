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

#include "tests/support/test_support.h"

namespace runledger::testing {

class PgServer {
 public:
  // initdb + start a primary with database `runledger` (user `postgres`,
  // trust authentication on loopback). Check ok() afterwards.
  static std::unique_ptr<PgServer> start_primary();
  // pg_basebackup of `primary` + start it as its streaming standby; when
  // `synchronous`, the primary's synchronous_standby_names names it and the
  // call returns once the primary reports it as a sync standby.
  static std::unique_ptr<PgServer> start_standby(PgServer& primary, bool synchronous = true);
  // Stops the server (fast shutdown; SIGKILL if that fails) and removes the folder.
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
  // only, '|' between fields) or "" with *ok false when psql failed.
  std::string psql(const std::string& sql, bool* ok = nullptr) const;

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
  bool ok_ = false;
  std::string error_;
  TempDir dir_;
  std::string pgdata_;
  std::string bin_;  // /usr/lib/postgresql/<major>/bin
  int port_ = 0;
  std::string name_;  // application_name of a standby
};

}  // namespace runledger::testing
