#!/usr/bin/env bash
# W1 side by side: PostgreSQL (pgbench with bench/postgres/w1.sql) and
# runledger (runledger bench w1-http), both with 32 concurrent clients on 2
# client threads (pgbench -j 2, w1-http --client-threads 2), 10,000 targets,
# every command durable before its reply, on this machine.
# A third run drives runledgerd with its log in the same PostgreSQL
# (--store postgres, docs/cluster.md): one leader, one transaction per
# group-commit batch. The three run in turn, alternating, ROUNDS times each;
# the medians and their ratios are printed last.
#
# PostgreSQL runs from a temporary folder on a free loopback port with
# fsync=on and synchronous_commit=on, tuned as its users tune it for a write
# load (shared_buffers, WAL size and buffers, checkpoint spacing). It is
# installed from Debian's postgresql + postgresql-contrib when missing. As
# root, it runs as the `postgres` user (it refuses to run as root).
#
# Usage: scripts/bench-postgres.sh [--rounds N] [--pg-seconds S] [--runledger-jobs N]
#                                  [--clients N] [--targets N] [--runledger BIN]
# Environment: BENCH_ROUNDS, BENCH_PG_SECONDS, BENCH_RUNLEDGER_JOBS, BENCH_CLIENTS,
#              BENCH_TARGETS, RUNLEDGER_BIN.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${BENCH_ROUNDS:-3}"
pg_seconds="${BENCH_PG_SECONDS:-20}"
rl_jobs="${BENCH_RUNLEDGER_JOBS:-30000}"
clients="${BENCH_CLIENTS:-32}"
targets="${BENCH_TARGETS:-10000}"
runledger="${RUNLEDGER_BIN:-$repo/build/bin/runledger}"
runledgerd="${RUNLEDGERD_BIN:-$(dirname "$runledger")/runledgerd}"
commands_per_job=11  # W1: enqueue, claim, start, 4 x (step start, step done)

while (($#)); do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --pg-seconds) pg_seconds="$2"; shift 2 ;;
    --runledger-jobs) rl_jobs="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    --runledger) runledger="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 64 ;;
  esac
done

die() { echo "bench-postgres: $*" >&2; exit 1; }
[ -x "$runledger" ] || die "no runledger binary at $runledger (build it, or pass --runledger)"
command -v jq >/dev/null || die "jq is needed to read runledger's JSON (apt-get install jq)"

# ---- PostgreSQL: install if missing ----
pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ] || ! command -v pgbench >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    postgresql postgresql-contrib
  pg_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
fi
pgbench_bin="$pg_bin/pgbench"
[ -x "$pgbench_bin" ] || pgbench_bin="$(command -v pgbench)"

# PostgreSQL refuses to run as root: run its programs as `postgres` then.
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  as_pg=(runuser -u postgres --)
fi

work="$(mktemp -d /tmp/runledger-pg-bench.XXXXXX)"
chmod 755 "$work"
pgdata="$work/pgdata"
cleanup() {
  if [ -f "$pgdata/postmaster.pid" ]; then
    "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pgdata" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
port="$(free_port)"

mkdir -p "$pgdata"
[ ${#as_pg[@]} -gt 0 ] && chown -R postgres "$work"
"${as_pg[@]}" "$pg_bin/initdb" -D "$pgdata" -U bench --auth=trust -E UTF8 >/dev/null
cat >>"$pgdata/postgresql.conf" <<CONF
# runledger W1 comparison: durable commits, tuned for a write-heavy OLTP load.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$work'
max_connections = 100
fsync = on
synchronous_commit = on
full_page_writes = on
wal_level = replica
shared_buffers = 1GB
effective_cache_size = 4GB
wal_buffers = 64MB
max_wal_size = 8GB
min_wal_size = 1GB
checkpoint_timeout = 30min
checkpoint_completion_target = 0.9
work_mem = 16MB
maintenance_work_mem = 256MB
CONF
"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pgdata" -l "$work/postgres.log" -w start >/dev/null \
  || { cat "$work/postgres.log" >&2; die "postgres did not start"; }
psql_() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U bench "$@"; }
psql_ -d postgres -c "CREATE DATABASE w1" >/dev/null

# One PostgreSQL round: fresh tables, pgbench for pg_seconds; prints commands/s.
pg_round() {
  psql_ -d w1 -f "$repo/bench/postgres/schema.sql" >/dev/null 2>&1
  psql_ -d w1 -c "VACUUM ANALYZE" >/dev/null
  local out
  out="$("$pgbench_bin" -n -M prepared -c "$clients" -j 2 -T "$pg_seconds" \
        -D clients="$clients" -D targets="$targets" -f "$repo/bench/postgres/w1.sql" \
        -h 127.0.0.1 -p "$port" -U bench w1 2>&1)" || { echo "$out" >&2; die "pgbench failed"; }
  local tps failed jobs not_done history
  tps="$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' <<<"$out")"
  failed="$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")"
  [ -n "$tps" ] || { echo "$out" >&2; die "pgbench printed no tps"; }
  # The run's own check: every job it started SUCCEEDED, 11 history rows each.
  jobs="$(psql_ -d w1 -At -c "SELECT count(*) FROM jobs")"
  not_done="$(psql_ -d w1 -At -c "SELECT count(*) FROM jobs WHERE state <> 'SUCCEEDED'")"
  history="$(psql_ -d w1 -At -c "SELECT count(*) FROM job_history")"
  if [ "${failed:-0}" != "0" ] || [ "$not_done" != "0" ] \
     || [ "$history" != "$((jobs * commands_per_job))" ]; then
    echo "$out" >&2
    die "PostgreSQL run is wrong: $failed failed, $not_done of $jobs jobs not SUCCEEDED, $history history rows"
  fi
  local lat
  lat="$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")"
  echo "  postgres  round $1: $(awk -v t="$tps" -v c=$commands_per_job 'BEGIN{printf "%.0f", t*c}') commands/s ($jobs jobs, mean job latency ${lat} ms = $commands_per_job commits)" >&2
  awk -v t="$tps" -v c=$commands_per_job 'BEGIN{printf "%.1f\n", t*c}'
}

# One runledger round: an in-process server with a fresh temporary folder.
rl_round() {
  local json
  json="$("$runledger" bench w1-http --clients "$clients" --client-threads 2 \
          --jobs "$rl_jobs" --targets "$targets" --json)" || { echo "$json" >&2; die "runledger bench failed"; }
  [ "$(jq -r .ok <<<"$json")" = "true" ] || { echo "$json" >&2; die "runledger run is wrong"; }
  echo "  runledger round $1: $(jq -r '.per_s|floor' <<<"$json") commands/s (p99 $(jq -r '.latency_ms.p99' <<<"$json") ms, mean batch $(jq -r '.mean_batch_commands|floor' <<<"$json") commands)" >&2
  jq -r '.per_s' <<<"$json"
}

# One round of runledger with its log in PostgreSQL: a fresh database and
# folder, a runledgerd leading it, driven over HTTP like the round above.
rld_round() {
  local db="rl_w1_$1" node="$work/node-$1" rport json pid
  psql_ -d postgres -c "CREATE DATABASE $db" >/dev/null
  rport="$(free_port)"
  "$runledgerd" --listen "127.0.0.1:$rport" --data "$node" --store postgres \
    --pg-dsn "host=127.0.0.1 port=$port dbname=$db user=bench" --node-name bench \
    --log-level warn 2>"$work/runledgerd-$1.log" &
  pid=$!
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$rport/v1/health/leader" >/dev/null && break
    sleep 0.1
  done
  json="$("$runledger" bench w1-http --server "http://127.0.0.1:$rport" --clients "$clients" \
          --client-threads 2 --jobs "$rl_jobs" --targets "$targets" --json)" \
    || { kill "$pid"; cat "$work/runledgerd-$1.log" >&2; echo "$json" >&2; die "runledger on postgres failed"; }
  kill "$pid"; wait "$pid" 2>/dev/null || true
  [ "$(jq -r .ok <<<"$json")" = "true" ] || { echo "$json" >&2; die "runledger on postgres is wrong"; }
  echo "  rl on pg  round $1: $(jq -r '.per_s|floor' <<<"$json") commands/s (p99 $(jq -r '.latency_ms.p99' <<<"$json") ms, mean batch $(jq -r '.mean_batch_commands|floor' <<<"$json") commands)" >&2
  jq -r '.per_s' <<<"$json"
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

echo "W1, $clients clients, $targets targets, $rounds rounds each, alternating" >&2
echo "machine: $(nproc) x $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1), $(free -g | awk '/^Mem:/{print $2}') GiB, $(uname -sr); $("$pg_bin/postgres" --version)" >&2
pg_rates=()
rl_rates=()
rld_rates=()
for ((i = 1; i <= rounds; i++)); do
  pg_rates+=("$(pg_round "$i")")
  rl_rates+=("$(rl_round "$i")")
  rld_rates+=("$(rld_round "$i")")
done
rld_median="$(printf '%s\n' "${rld_rates[@]}" | median)"
pg_median="$(printf '%s\n' "${pg_rates[@]}" | median)"
rl_median="$(printf '%s\n' "${rl_rates[@]}" | median)"
printf 'postgres  median: %.0f commands/s\n' "$pg_median"
printf 'runledger median: %.0f commands/s\n' "$rl_median"
printf 'runledger on postgres median: %.0f commands/s\n' "$rld_median"
awk -v r="$rl_median" -v p="$pg_median" 'BEGIN{printf "ratio runledger/postgres: %.2fx\n", r/p}'
awk -v r="$rld_median" -v p="$pg_median" 'BEGIN{printf "ratio runledger on postgres/postgres: %.2fx\n", r/p}'
