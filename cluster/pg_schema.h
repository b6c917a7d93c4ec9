// The tables, function and view runledger keeps in PostgreSQL (docs/cluster.md
// "The SQL view"), and the statements that read and write them. Every SQL
// text of the cluster is here, once.
//
//  runledger_log          one row per event: the exact bytes and their hash,
//                         with the columns a person queries (stream, type,
//                         recorded_at, data as jsonb, ...). seq is the key.
//  runledger_idempotency  the kept first replies, written in the
//                         transaction of their batch; `id` orders them for
//                         standbys that follow.
//  runledger_leader       one row: the epoch, who holds it and until when
//                         (the database's clock), and the log's head.
//  runledger_fence()      moves the head from the one the caller last wrote,
//                         only while the caller's epoch leads; else raises
//                         SQLSTATE RL001 and the batch's transaction fails.
//  runledger_events       the view for people; runledger never reads it.
#pragma once

#include <string>

#include "cluster/pg_connection.h"

namespace runledger::pg {

// The schema's version; a database with a later one is refused.
inline constexpr int kSchemaVersion = 1;

// Creates what is missing (under an advisory lock, so that nodes starting
// together do not race), and refuses a database of a later version.
Status ensure_schema(Connection& c);

// Prepared statements, by name (prepare_statements() prepares them).
inline constexpr const char* kInsertEvents = "rl_insert_events";
inline constexpr const char* kInsertIdempotency = "rl_insert_idempotency";
inline constexpr const char* kFence = "rl_fence";
inline constexpr const char* kReadEvents = "rl_read_events";
inline constexpr const char* kReadIdempotency = "rl_read_idempotency";
inline constexpr const char* kLeaderRow = "rl_leader_row";
inline constexpr const char* kAcquire = "rl_acquire";
inline constexpr const char* kEndStaleHolder = "rl_end_stale_holder";
inline constexpr const char* kRenew = "rl_renew";
inline constexpr const char* kResign = "rl_resign";
inline constexpr const char* kEventHash = "rl_event_hash";
inline constexpr const char* kIdempotencyCursor = "rl_idempotency_cursor";
inline constexpr const char* kPurgeIdempotency = "rl_purge_idempotency";
Status prepare_statements(Connection& c);

// The statements of the read-only log store (cluster/pg_log_store.h) that
// the CLI reads the log through; prepare_reader() prepares them.
inline constexpr const char* kLogTail = "rl_log_tail";
inline constexpr const char* kLogRange = "rl_log_range";
inline constexpr const char* kLogEvent = "rl_log_event";
inline constexpr const char* kLogStream = "rl_log_stream";
inline constexpr const char* kLogStreamVersion = "rl_log_stream_version";
inline constexpr const char* kLogStreamIndex = "rl_log_stream_index";
// Readies `c` for reading the log and nothing else: NotFound when the
// database holds no runledger log, Unavailable when it holds a later schema
// version than this build reads; else the session is made read-only (a
// reading tool cannot write, whatever it runs) and the statements above are
// prepared. Creates nothing: a tool pointed at the wrong database must not
// leave runledger's tables in it.
Status prepare_reader(Connection& c);

}  // namespace runledger::pg
