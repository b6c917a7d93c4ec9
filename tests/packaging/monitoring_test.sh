#!/usr/bin/env bash
# Checks monitoring/: the alert rules (promtool check rules) and their unit
# tests (promtool test rules), every query of the Grafana dashboard (parsed by
# promtool as a recording rule), and that every runledger_* name in either is
# a family the built runledgerd serves on GET /metrics.
#
#   monitoring_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

build=${1:?build dir}
src=${2:?source dir}
rules="$src/monitoring/prometheus/runledger.rules.yml"
rules_test="$src/monitoring/prometheus/runledger.rules.test.yml"
dashboard="$src/monitoring/grafana/runledger.json"
server="$build/bin/runledgerd"

command -v promtool >/dev/null || {
  echo "FAIL promtool is missing (the Debian package prometheus has it; scripts/install-deps.sh installs it)"
  exit 1
}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/runledger-mon.XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT

promtool check rules "$rules"
# promtool resolves rule_files against the test file's folder.
promtool test rules "$rules_test"

cmake -DIN="$dashboard" -DOUT="$scratch/dashboard.rules.yml" -P "$src/tests/packaging/dashboard_exprs.cmake"
promtool check rules "$scratch/dashboard.rules.yml"

# The families the server serves, read from a running one.
[ -x "$server" ] || { echo "FAIL $server is not built"; exit 1; }
"$server" --listen 127.0.0.1:0 --data "$scratch/data" >"$scratch/server.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$scratch/server.log")
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { cat "$scratch/server.log"; echo "FAIL runledgerd did not start"; exit 1; }
curl -sS --max-time 5 "http://127.0.0.1:$port/metrics" >"$scratch/metrics"
kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=""

# Every family with its TYPE; a histogram also serves _bucket, _sum, _count.
served=$(awk '$1 == "#" && $2 == "TYPE" {
                print $3
                if ($4 == "histogram") { print $3 "_bucket"; print $3 "_sum"; print $3 "_count" }
              }' "$scratch/metrics" | sort -u)
[ -n "$served" ] || { echo "FAIL /metrics served no family"; exit 1; }

unknown=0
used=$(cat "$rules" "$rules_test" "$dashboard" | grep -oE 'runledger_[a-z_]+' | sort -u)
for name in $used; do
  if ! grep -qxF "$name" <<<"$served"; then
    echo "FAIL $name is used in monitoring/ but runledgerd does not serve it"
    unknown=$((unknown + 1))
  fi
done
((unknown == 0)) || exit 1
echo "ok   the $(wc -w <<<"$used") runledger_* names of monitoring/ are all served by runledgerd"
echo "all monitoring checks passed"
