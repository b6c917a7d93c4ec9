#include "cluster/pg_schema.h"

namespace runledger::pg {
namespace {

// Arbitrary, fixed: the advisory lock the schema's creation runs under.
constexpr const char* kSchemaLock = "7262011";

constexpr const char* kCreate = R"sql(
CREATE TABLE IF NOT EXISTS runledger_schema (version integer NOT NULL);
INSERT INTO runledger_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM runledger_schema);

CREATE TABLE IF NOT EXISTS runledger_log (
  seq         bigint PRIMARY KEY,
  stream      text NOT NULL,
  version     integer NOT NULL,
  type        text NOT NULL,
  recorded_at timestamptz NOT NULL,
  actor       text NOT NULL,
  command_id  text NOT NULL,
  epoch       bigint NOT NULL,
  data        jsonb NOT NULL,
  bytes       bytea NOT NULL,
  hash        bytea NOT NULL,
  prev_hash   bytea NOT NULL,
  UNIQUE (stream, version)
);

CREATE SEQUENCE IF NOT EXISTS runledger_idempotency_id;
CREATE TABLE IF NOT EXISTS runledger_idempotency (
  key         bytea PRIMARY KEY,
  record      bytea NOT NULL,
  recorded_ms bigint NOT NULL,
  seq         bigint NOT NULL,
  id          bigint NOT NULL DEFAULT nextval('runledger_idempotency_id')
);
CREATE INDEX IF NOT EXISTS runledger_idempotency_by_id ON runledger_idempotency (id);
CREATE INDEX IF NOT EXISTS runledger_idempotency_by_age ON runledger_idempotency (recorded_ms);

CREATE TABLE IF NOT EXISTS runledger_leader (
  id         integer PRIMARY KEY CHECK (id = 1),
  epoch      bigint NOT NULL,
  holder     text NOT NULL,
  url        text NOT NULL,
  expires_at timestamptz NOT NULL,
  head_seq   bigint NOT NULL,
  head_hash  bytea NOT NULL
);
INSERT INTO runledger_leader VALUES (1, 0, '', '', '-infinity', 0, '\x0000000000000000000000000000000000000000000000000000000000000000')
  ON CONFLICT (id) DO NOTHING;

CREATE OR REPLACE FUNCTION runledger_fence(p_epoch bigint, p_from bigint, p_to bigint, p_hash bytea)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE runledger_leader SET head_seq = p_to, head_hash = p_hash
   WHERE id = 1 AND epoch = p_epoch AND head_seq = p_from;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'runledger: epoch % no longer leads, or the head is not at seq %', p_epoch, p_from
      USING ERRCODE = 'RL001';
  END IF;
END
$fn$;

CREATE OR REPLACE VIEW runledger_events AS
  SELECT seq, stream, version, type, recorded_at, actor, command_id, epoch, data,
         encode(hash, 'hex') AS hash, encode(prev_hash, 'hex') AS prev_hash
    FROM runledger_log;

UPDATE runledger_schema SET version = 1 WHERE version < 1;
)sql";

struct Statement {
  const char* name;
  const char* sql;
  int params;
};

// Binary results: int8 and int4 columns are read big-endian, bytea raw.
constexpr Statement kStatements[] = {
    // A batch's events, each column one array (cluster/pg_array.h), in the
    // order of the table's columns but epoch, the batch's ($1).
    {kInsertEvents,
     "INSERT INTO runledger_log (seq, stream, version, type, recorded_at, actor, command_id, "
     "epoch, data, bytes, hash, prev_hash) "
     "SELECT seq, stream, version, type, recorded_at, actor, command_id, $1, data, bytes, hash, "
     "prev_hash FROM unnest($2::int8[], $3::text[], $4::int4[], $5::text[], $6::timestamptz[], "
     "$7::text[], $8::text[], $9::jsonb[], $10::bytea[], $11::bytea[], $12::bytea[]) "
     "AS t(seq, stream, version, type, recorded_at, actor, command_id, data, bytes, hash, "
     "prev_hash)",
     12},
    // A batch's kept replies: keys, records, when each was kept; $4 the
    // batch's last seq. A key twice in one batch keeps its last record (one
    // statement may not update a row twice).
    {kInsertIdempotency,
     "INSERT INTO runledger_idempotency (key, record, recorded_ms, seq) "
     "SELECT DISTINCT ON (key) key, record, recorded_ms, $4 "
     "FROM unnest($1::bytea[], $2::bytea[], $3::int8[]) WITH ORDINALITY "
     "AS t(key, record, recorded_ms, n) ORDER BY key, n DESC "
     "ON CONFLICT (key) DO UPDATE SET record = EXCLUDED.record, recorded_ms = "
     "EXCLUDED.recorded_ms, seq = EXCLUDED.seq, id = nextval('runledger_idempotency_id')",
     4},
    {kFence, "SELECT runledger_fence($1, $2, $3, $4)", 4},
    {kReadEvents,
     "SELECT seq, stream, version, bytes, hash FROM runledger_log WHERE seq > $1 AND seq <= $2 "
     "ORDER BY seq LIMIT $3",
     3},
    {kReadIdempotency,
     "SELECT id, key, record FROM runledger_idempotency WHERE id > $1 ORDER BY id LIMIT $2", 2},
    // epoch, holder, url, expired (by the database's clock), head_seq, head_hash
    {kLeaderRow,
     "SELECT epoch, holder, url, expires_at <= now(), head_seq, head_hash FROM runledger_leader "
     "WHERE id = 1",
     0},
    // Taken when it expired, or by the node that held it (a restart of the
    // same node, or one that stepped down on a write in doubt): the epoch
    // moves on in both cases, which fences anything the old one still sends.
    {kAcquire,
     "UPDATE runledger_leader SET epoch = epoch + 1, holder = $1, url = $2, "
     "expires_at = now() + make_interval(secs => $3) "
     "WHERE id = 1 AND (expires_at <= now() OR holder = $1) RETURNING epoch, head_seq, head_hash",
     3},
    // The sessions whose open transaction holds the leader row (the row's
    // xmax is their transaction) and began before the lease ran out by the
    // database's clock: a leader frozen in the middle of a batch, which
    // would hold the row for as long as it stays frozen (the server's
    // idle_in_transaction_session_timeout does not run inside a batch). Each
    // is ended, $1 ms given for it to go: its transaction rolls back, so its
    // batch was never written. A standby's own acquire began after the
    // expiry and is never among them. Chosen first (MATERIALIZED), so that
    // no session is ended on a condition not yet checked. pid of each one ended.
    {kEndStaleHolder,
     "WITH stale AS MATERIALIZED (SELECT a.pid FROM runledger_leader l JOIN pg_stat_activity a "
     "ON a.backend_xid = l.xmax WHERE l.id = 1 AND l.expires_at <= now() "
     "AND a.xact_start < l.expires_at AND a.pid <> pg_backend_pid()) "
     "SELECT pid FROM stale WHERE pg_terminate_backend(pid, $1)",
     1},
    {kRenew,
     "UPDATE runledger_leader SET expires_at = now() + make_interval(secs => $2) "
     "WHERE id = 1 AND epoch = $1 RETURNING head_seq",
     2},
    {kResign,
     "UPDATE runledger_leader SET expires_at = now() - interval '1 millisecond' "
     "WHERE id = 1 AND epoch = $1",
     1},
    {kEventHash, "SELECT hash FROM runledger_log WHERE seq = $1", 1},
    // Where a follower's idempotency records start: the records of batches
    // at or after its last seq may not have reached it.
    {kIdempotencyCursor,
     "SELECT coalesce(max(id), 0)::int8 FROM runledger_idempotency WHERE seq < $1", 1},
    {kPurgeIdempotency, "DELETE FROM runledger_idempotency WHERE recorded_ms < $1", 1},
};

// The reader's statements. Each read ends at the tail the reader saw at open
// (a parameter), and each page at a LIMIT, so that no read holds more than a
// page of the log in memory.
constexpr Statement kReaderStatements[] = {
    // seq, bytes of the log's last row
    {kLogTail, "SELECT seq, bytes FROM runledger_log ORDER BY seq DESC LIMIT 1", 0},
    // seq, bytes: after < seq <= until, by seq
    {kLogRange,
     "SELECT seq, bytes FROM runledger_log WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3", 3},
    {kLogEvent, "SELECT bytes FROM runledger_log WHERE seq = $1", 1},
    // seq, version, bytes of one stream by version, through UNIQUE (stream, version)
    {kLogStream,
     "SELECT seq, version, bytes FROM runledger_log WHERE stream = $1 AND version > $2 "
     "AND seq <= $3 ORDER BY version LIMIT $4",
     4},
    {kLogStreamVersion,
     "SELECT coalesce(max(version), 0)::int4 FROM runledger_log WHERE stream = $1 AND seq <= $2",
     2},
    // stream, version, seq after the key ($1, $2), in the order of UNIQUE
    // (stream, version): each stream's rows together, by version
    {kLogStreamIndex,
     "SELECT stream, version, seq FROM runledger_log WHERE (stream, version) > ($1, $2) "
     "AND seq <= $3 ORDER BY stream, version LIMIT $4",
     4},
};

}  // namespace

Status ensure_schema(Connection& c) {
  std::string sql = "BEGIN; SELECT pg_advisory_xact_lock(" + std::string(kSchemaLock) + "); ";
  sql += kCreate;
  sql += "COMMIT;";
  Result version;
  if (Status st = c.query("SELECT to_regclass('runledger_schema') IS NOT NULL", {}, &version);
      !st.ok()) {
    return st;
  }
  if (version.rows() == 1 && version.boolean(0, 0)) {
    Result v;
    if (Status st = c.query("SELECT max(version)::int4 FROM runledger_schema", {}, &v); !st.ok()) {
      return st;
    }
    if (v.rows() == 1 && !v.is_null(0, 0) && v.int32(0, 0) > kSchemaVersion) {
      return Status::Invalid("the database holds runledger's schema version " +
                             std::to_string(v.int32(0, 0)) + ", newer than this build's " +
                             std::to_string(kSchemaVersion) + ": upgrade runledgerd");
    }
    if (v.rows() == 1 && !v.is_null(0, 0) && v.int32(0, 0) == kSchemaVersion) return Status::Ok();
  }
  Status st = c.exec(sql);
  if (!st.ok()) c.exec("ROLLBACK").IgnoreError();
  return st;
}

Status prepare_statements(Connection& c) {
  for (const auto& s : kStatements) {
    if (Status st = c.prepare(s.name, s.sql, s.params); !st.ok()) return st;
  }
  return Status::Ok();
}

Status prepare_reader(Connection& c) {
  Result tables;
  if (Status st = c.query("SELECT to_regclass('runledger_log') IS NOT NULL AND "
                          "to_regclass('runledger_schema') IS NOT NULL",
                          {}, &tables);
      !st.ok()) {
    return st;
  }
  if (tables.rows() != 1 || !tables.boolean(0, 0)) {
    return Status::NotFound("the database holds no runledger log (no table runledger_log)");
  }
  Result v;
  if (Status st = c.query("SELECT max(version)::int4 FROM runledger_schema", {}, &v); !st.ok()) {
    return st;
  }
  if (v.rows() == 1 && !v.is_null(0, 0) && v.int32(0, 0) > kSchemaVersion) {
    return Status::Unavailable("the database holds runledger's schema version " +
                               std::to_string(v.int32(0, 0)) + ", newer than this build's " +
                               std::to_string(kSchemaVersion) + ": upgrade runledger");
  }
  if (Status st = c.exec("SET default_transaction_read_only = on"); !st.ok()) return st;
  for (const auto& s : kReaderStatements) {
    if (Status st = c.prepare(s.name, s.sql, s.params); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace runledger::pg
