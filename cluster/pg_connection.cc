#include "cluster/pg_connection.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <libpq-fe.h>

namespace runledger::pg {
namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waits until `fd` is ready for `events` or the deadline passes.
bool wait_fd(int fd, short events, int64_t deadline_ms) {
  for (;;) {
    int64_t left = deadline_ms - now_ms();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

uint64_t big_endian(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

struct ParamArrays {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  explicit ParamArrays(const std::vector<Param>& params) {
    values.reserve(params.size());
    lengths.reserve(params.size());
    formats.reserve(params.size());
    for (const auto& p : params) {
      // A text parameter must end with a NUL: callers pass views of
      // std::string or literals, which do.
      values.push_back(p.null ? nullptr : p.value.data());
      lengths.push_back(static_cast<int>(p.value.size()));
      formats.push_back(p.binary ? 1 : 0);
    }
  }
};

}  // namespace

Result::Result(pg_result* r) : r_(r) {}
Result::~Result() {
  if (r_ != nullptr) PQclear(r_);
}
Result::Result(Result&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
Result& Result::operator=(Result&& o) noexcept {
  if (this != &o) {
    if (r_ != nullptr) PQclear(r_);
    r_ = o.r_;
    o.r_ = nullptr;
  }
  return *this;
}
int Result::rows() const { return r_ == nullptr ? 0 : PQntuples(r_); }
uint64_t Result::affected() const {
  if (r_ == nullptr) return 0;
  const char* n = PQcmdTuples(r_);
  return n == nullptr || *n == '\0' ? 0 : std::strtoull(n, nullptr, 10);
}
bool Result::is_null(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }
std::string_view Result::bytes(int row, int col) const {
  return {PQgetvalue(r_, row, col), static_cast<size_t>(PQgetlength(r_, row, col))};
}
int64_t Result::int64(int row, int col) const {
  auto b = bytes(row, col);
  return static_cast<int64_t>(big_endian(b.data(), std::min<size_t>(b.size(), 8)));
}
int32_t Result::int32(int row, int col) const {
  auto b = bytes(row, col);
  return static_cast<int32_t>(big_endian(b.data(), std::min<size_t>(b.size(), 4)));
}
bool Result::boolean(int row, int col) const {
  auto b = bytes(row, col);
  return !b.empty() && b[0] != 0;
}

Status Connection::open(const std::string& dsn, int timeout_ms, std::unique_ptr<Connection>* out) {
  int64_t deadline = now_ms() + timeout_ms;
  PGconn* c = PQconnectStart(dsn.c_str());
  if (c == nullptr) return Status::Unavailable("PostgreSQL: out of memory");
  std::unique_ptr<Connection> conn(new Connection(c, timeout_ms));
  if (PQstatus(c) == CONNECTION_BAD) {
    return Status::Unavailable(std::string("PostgreSQL: ") + PQerrorMessage(c));
  }
  for (PostgresPollingStatusType st = PGRES_POLLING_WRITING;;) {
    if (st == PGRES_POLLING_OK) break;
    if (st == PGRES_POLLING_FAILED) {
      std::string m = PQerrorMessage(c);
      while (!m.empty() && m.back() == '\n') m.pop_back();
      return Status::Unavailable("PostgreSQL: " + m);
    }
    short ev = st == PGRES_POLLING_READING ? POLLIN : POLLOUT;
    if (!wait_fd(PQsocket(c), ev, deadline)) {
      return Status::Unavailable("PostgreSQL: no connection within " + std::to_string(timeout_ms) +
                                 " ms");
    }
    st = PQconnectPoll(c);
  }
  if (PQsetnonblocking(c, 1) != 0) return conn->error("nonblocking mode", nullptr);
  // Ends any transaction left open across a Sync. A batch's statements are
  // one transaction, which ends at its Sync, and the server runs this
  // timeout only while it waits after a Sync: a client frozen (SIGSTOP, a
  // paused VM) part-way through sending a batch holds its locks for as long
  // as it stays frozen. The leader row's lock is the one that matters; a
  // standby ends such a session once the lease has run out
  // (pg::kEndStaleHolder).
  if (Status st =
          conn->exec("SET idle_in_transaction_session_timeout = " + std::to_string(timeout_ms));
      !st.ok()) {
    return st;
  }
  *out = std::move(conn);
  return Status::Ok();
}

Connection::~Connection() {
  if (c_ != nullptr) PQfinish(c_);
}

bool Connection::broken() const { return lost_ || c_ == nullptr || PQstatus(c_) != CONNECTION_OK; }
int Connection::backend_pid() const { return c_ == nullptr ? 0 : PQbackendPID(c_); }
int64_t Connection::deadline() const { return now_ms() + timeout_ms_; }

Status Connection::error(std::string_view what, pg_result* r, std::string* sqlstate) {
  std::string m;
  if (r != nullptr) {
    m = PQresultErrorMessage(r);
    if (sqlstate != nullptr) {
      const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      *sqlstate = s == nullptr ? "" : s;
    }
  }
  if (m.empty() && c_ != nullptr) m = PQerrorMessage(c_);
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return Status::Unavailable("PostgreSQL (" + std::string(what) + "): " + m);
}

bool Connection::flush_until(int64_t deadline_ms) {
  for (;;) {
    int r = PQflush(c_);
    if (r == 0) return true;
    if (r < 0) return false;
    if (!wait_fd(PQsocket(c_), POLLIN | POLLOUT, deadline_ms)) return false;
    // Reading lets the server go on sending while we send.
    if (PQconsumeInput(c_) == 0) return false;
  }
}

bool Connection::wait_readable(int64_t deadline_ms) {
  while (PQisBusy(c_) != 0) {
    if (!wait_fd(PQsocket(c_), POLLIN, deadline_ms)) return false;
    if (PQconsumeInput(c_) == 0) return false;
  }
  return true;
}

// The next result, or null at the end of a statement's results. *timed_out
// when the deadline passed or the link broke: the connection is lost then.
pg_result* Connection::next_result(int64_t deadline_ms, bool* timed_out) {
  *timed_out = false;
  if (!wait_readable(deadline_ms)) {
    *timed_out = true;
    lost_ = true;
    return nullptr;
  }
  return PQgetResult(c_);
}

// Reads a statement's results up to its end; the last one in *out.
Status Connection::collect(std::string_view what, Result* out) {
  int64_t dl = deadline();
  if (!flush_until(dl)) {
    lost_ = true;
    return error(what, nullptr);
  }
  Status st;
  for (;;) {
    bool timed_out = false;
    pg_result* r = next_result(dl, &timed_out);
    if (timed_out) {
      return Status::Unavailable("PostgreSQL (" + std::string(what) + "): no answer within " +
                                 std::to_string(timeout_ms_) + " ms");
    }
    if (r == nullptr) break;
    ExecStatusType rs = PQresultStatus(r);
    if (rs == PGRES_COMMAND_OK || rs == PGRES_TUPLES_OK) {
      if (out != nullptr) {
        *out = Result(r);
      } else {
        PQclear(r);
      }
    } else {
      if (st.ok()) st = error(what, r);
      PQclear(r);
    }
  }
  return st;
}

Status Connection::exec(const std::string& sql) {
  if (broken()) return error("exec", nullptr);
  if (PQsendQuery(c_, sql.c_str()) == 0) return error("exec", nullptr);
  return collect("exec", nullptr);
}

Status Connection::query(const std::string& sql, const std::vector<Param>& params, Result* out) {
  if (broken()) return error("query", nullptr);
  ParamArrays a(params);
  if (PQsendQueryParams(c_, sql.c_str(), static_cast<int>(params.size()), nullptr, a.values.data(),
                        a.lengths.data(), a.formats.data(), 1) == 0) {
    return error("query", nullptr);
  }
  return collect("query", out);
}

Status Connection::prepare(const std::string& name, const std::string& sql, int params) {
  if (std::find(prepared_.begin(), prepared_.end(), name) != prepared_.end()) return Status::Ok();
  if (broken()) return error("prepare", nullptr);
  if (PQsendPrepare(c_, name.c_str(), sql.c_str(), params, nullptr) == 0) {
    return error("prepare", nullptr);
  }
  Status st = collect("prepare", nullptr);
  if (st.ok()) prepared_.push_back(name);
  return st;
}

Status Connection::query_prepared(const std::string& name, const std::vector<Param>& params,
                                  Result* out) {
  if (broken()) return error(name, nullptr);
  ParamArrays a(params);
  if (PQsendQueryPrepared(c_, name.c_str(), static_cast<int>(params.size()), a.values.data(),
                          a.lengths.data(), a.formats.data(), 1) == 0) {
    return error(name, nullptr);
  }
  return collect(name, out);
}

Status Connection::pipeline_begin() {
  if (broken()) return error("pipeline", nullptr);
  if (PQenterPipelineMode(c_) == 0) return error("pipeline", nullptr);
  in_pipeline_ = true;
  queued_ = 0;
  return Status::Ok();
}

Status Connection::pipeline_queue(const std::string& name, const std::vector<Param>& params) {
  ParamArrays a(params);
  if (PQsendQueryPrepared(c_, name.c_str(), static_cast<int>(params.size()), a.values.data(),
                          a.lengths.data(), a.formats.data(), 1) == 0) {
    return error(name, nullptr);
  }
  ++queued_;
  // Not flushed here: libpq sends its buffer in 8 KiB pieces as it fills,
  // and pipeline_sync() sends the rest with the Sync.
  return Status::Ok();
}

Status Connection::pipeline_sync(std::string* sqlstate) {
  if (sqlstate != nullptr) sqlstate->clear();
  if (PQpipelineSync(c_) == 0) {
    lost_ = true;
    return error("pipeline", nullptr);
  }
  int64_t dl = deadline();
  if (!flush_until(dl)) {
    lost_ = true;
    return error("pipeline", nullptr);
  }
  Status first;
  // queued_ statements, each ending with a null result, then the sync.
  for (size_t done = 0; done <= queued_;) {
    bool timed_out = false;
    pg_result* r = next_result(dl, &timed_out);
    if (timed_out) {
      return Status::Unavailable("PostgreSQL (pipeline): no answer within " +
                                 std::to_string(timeout_ms_) + " ms");
    }
    if (r == nullptr) {
      ++done;  // the end of one statement's results
      continue;
    }
    ExecStatusType rs = PQresultStatus(r);
    if (rs == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      break;
    }
    if (rs == PGRES_FATAL_ERROR && first.ok()) first = error("pipeline", r, sqlstate);
    PQclear(r);
  }
  if (PQexitPipelineMode(c_) == 0) lost_ = true;
  in_pipeline_ = false;
  queued_ = 0;
  return first;
}

std::string quote_literal(std::string_view s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') out.push_back('\'');
    out.push_back(ch);
  }
  out.push_back('\'');
  return out;
}

}  // namespace runledger::pg
