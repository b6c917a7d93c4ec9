// PgConnection: one libpq connection, with the few calls the PostgreSQL
// store, leadership and the follower make: statements with parameters
// (text or binary), results in binary form, and pipelines that send many
// statements in one round trip. A connection that broke says so
// (broken()); its owner opens a new one.
// Not thread-safe: one thread uses a connection at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct pg_conn;
struct pg_result;

namespace runledger::pg {

// A statement's parameter: text (numbers, names) or bytes (bytea); null
// when `null`.
struct Param {
  std::string_view value;
  bool binary = false;
  bool null = false;
  static Param text(std::string_view v) { return {v, false, false}; }
  static Param bytes(std::string_view v) { return {v, true, false}; }
};

// A result, read in binary form (the statements ask for it).
class Result {
 public:
  Result() = default;
  explicit Result(pg_result* r);
  ~Result();
  Result(Result&& o) noexcept;
  Result& operator=(Result&& o) noexcept;
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;

  int rows() const;
  // Rows a command changed (UPDATE, INSERT, DELETE).
  uint64_t affected() const;
  bool is_null(int row, int col) const;
  std::string_view bytes(int row, int col) const;
  // int8 / int4 / bool columns in binary form.
  int64_t int64(int row, int col) const;
  int32_t int32(int row, int col) const;
  bool boolean(int row, int col) const;

 private:
  pg_result* r_ = nullptr;
};

// SQLSTATE of the error a statement raised when it refuses a fenced append
// (cluster/pg_schema.cc).
inline constexpr std::string_view kFencedState = "RL001";

class Connection {
 public:
  // Connects within `timeout_ms`, and from then on gives every call that
  // much to be answered: a database that does not answer in time (a
  // partition, where no error ever comes) fails the call with Unavailable
  // and the connection is broken from then on. The server ends the session
  // when a transaction of it waits on this side longer than that too
  // (idle_in_transaction_session_timeout). Unavailable with libpq's message
  // when it cannot connect.
  static Status open(const std::string& dsn, int timeout_ms, std::unique_ptr<Connection>* out);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements without parameters or results.
  Status exec(const std::string& sql);
  // Runs one statement; its rows in binary form in *out (when given).
  Status query(const std::string& sql, const std::vector<Param>& params, Result* out = nullptr);
  // Prepares `sql` under `name` once per connection.
  Status prepare(const std::string& name, const std::string& sql, int params);
  Status query_prepared(const std::string& name, const std::vector<Param>& params,
                        Result* out = nullptr);

  // Pipeline mode: queue prepared statements, then sync() sends them all and
  // reads every result. The first error aborts what follows it up to the
  // sync (PostgreSQL's rule) and is what sync() returns; *sqlstate (when
  // given) gets its SQLSTATE.
  Status pipeline_begin();
  Status pipeline_queue(const std::string& name, const std::vector<Param>& params);
  Status pipeline_sync(std::string* sqlstate = nullptr);

  // Whether the connection is lost; statements on it fail at once then.
  bool broken() const;
  // The server's process id (tests terminate it to cut one connection).
  int backend_pid() const;

 private:
  Connection(pg_conn* c, int timeout_ms) : c_(c), timeout_ms_(timeout_ms) {}
  Status error(std::string_view what, pg_result* r, std::string* sqlstate = nullptr);
  // Sends what is queued and waits for the next result until the deadline;
  // false (and the connection closed) when it passed or the link broke.
  bool flush_until(int64_t deadline_ms);
  bool wait_readable(int64_t deadline_ms);
  pg_result* next_result(int64_t deadline_ms, bool* timed_out);
  Status collect(std::string_view what, Result* out);
  int64_t deadline() const;
  pg_conn* c_ = nullptr;
  int timeout_ms_ = 0;
  bool lost_ = false;  // timed out: closed on our side
  std::vector<std::string> prepared_;
  bool in_pipeline_ = false;
  size_t queued_ = 0;
};

// A quoted string literal for SQL text built by the schema ('...' with
// quotes doubled).
std::string quote_literal(std::string_view s);

}  // namespace runledger::pg
