#!/usr/bin/env bash
# Checks the OpenAPI document runledgerd serves (GET /v1/openapi.json):
#   1. Redocly's recommended rules and Spectral's oas ruleset find nothing
#      (no error, no warning);
#   2. a scenario over the real API (openapi/check-replies.mjs) gets only
#      replies whose status and body the document describes, from a server
#      without authentication and one with --auth-tokens.
# Usage: scripts/openapi-check.sh [BIN_DIR]   (BIN_DIR defaults to build/bin)
set -euo pipefail
cd "$(dirname "$0")/.."
bin_dir=$(realpath "${1:-build/bin}")
[[ -x "$bin_dir/runledgerd" ]] || { echo "openapi-check: no $bin_dir/runledgerd" >&2; exit 2; }

if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm > /dev/null
fi
# npm ci starts from nothing each time: skip it when the lock file is the one
# the installed packages came from.
if ! cmp -s openapi/package-lock.json openapi/node_modules/.installed-lock.json; then
  (cd openapi && npm ci --no-audit --no-fund --loglevel=error > /dev/null &&
    cp package-lock.json node_modules/.installed-lock.json)
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# start NAME VAR [FLAGS...]: a server on a free loopback port; its URL in VAR.
start() {
  local name=$1 var=$2 port
  shift 2
  port=$(free_port)
  mkdir -p "$work/$name"
  "$bin_dir/runledgerd" --listen "127.0.0.1:$port" --data "$work/$name/data" "$@" \
    > "$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 150); do
    if curl -fsS -o /dev/null "http://127.0.0.1:$port/v1/health" 2> /dev/null; then
      printf -v "$var" 'http://127.0.0.1:%s' "$port"
      return 0
    fi
    sleep 0.1
  done
  echo "openapi-check: runledgerd ($name) did not start:" >&2
  cat "$work/$name.log" >&2
  return 1
}

operator_token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
reader_token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
printf 'checker operator %s\nviewer reader %s\n' "$operator_token" "$reader_token" > "$work/tokens"
chmod 600 "$work/tokens"

open_url='' auth_url=''
start open open_url
start auth auth_url --auth-tokens "$work/tokens"

curl -fsS "$open_url/v1/openapi.json" > "$work/openapi.json"
status=0
echo "== redocly lint"
(cd openapi && npx --no-install redocly lint --config redocly.yaml "$work/openapi.json") || status=1
echo "== spectral lint"
(cd openapi && npx --no-install spectral lint --ruleset .spectral.yaml --fail-severity=warn \
  "$work/openapi.json") || status=1
echo "== replies against the document"
(cd openapi && node check-replies.mjs "$open_url" "$auth_url" "$operator_token" "$reader_token") ||
  status=1
if [[ $status -ne 0 ]]; then
  echo "openapi-check: FAILED" >&2
else
  echo "openapi-check: ok"
fi
exit $status
