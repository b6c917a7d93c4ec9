#!/usr/bin/env bash
# runledgerd's HTTPS checked by testssl.sh (docs/operations.md "TLS"): no
# SSLv2/SSLv3/TLS 1.0/1.1, no NULL, export, low, 3DES or CBC suites, and none
# of the vulnerabilities testssl.sh probes for. Usage: testssl_test.sh BIN_DIR
set -euo pipefail
bin_dir=${1:?usage: testssl_test.sh BIN_DIR}
work=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
"$bin_dir/runledgerd" --listen 127.0.0.1:0 --data "$work/data" \
  --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" 2>"$work/server.log" &
server_pid=$!
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's|.*listening on 127.0.0.1:\([0-9]*\) .*|\1|p' "$work/server.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "runledgerd did not start:"; cat "$work/server.log"; exit 1; }

timeout 600 testssl --quiet --color 0 --warnings off -p -s -U "127.0.0.1:$port" >"$work/report" 2>&1 || true
cat "$work/report"

failed=0
expect() {  # expect PATTERN-OF-LINE WORDS-IT-MUST-HAVE
  local line
  line=$(grep -E "^ *$1" "$work/report" | head -1)
  if [[ "$line" != *"$2"* ]]; then
    echo "FAIL: '$1' should say '$2', says: '${line:-nothing}'"
    failed=1
  fi
}
expect "SSLv2 " "not offered"
expect "SSLv3 " "not offered"
expect "TLS 1 " "not offered"
expect "TLS 1.1 " "not offered"
expect "TLS 1.2 " "offered (OK)"
expect "TLS 1.3 " "offered (OK)"
expect "NULL ciphers" "not offered"
expect "Anonymous NULL" "not offered"
expect "Export ciphers" "not offered"
expect "LOW: 64 Bit" "not offered"
expect "Triple DES" "not offered"
expect "Obsolete CBC" "not offered"
expect "Strong encryption" "offered (OK)"
if grep -E "VULNERABLE|potentially vulnerable" "$work/report" | grep -v "not vulnerable"; then
  echo "FAIL: testssl.sh found the vulnerabilities above"
  failed=1
fi
grep -q "Done " "$work/report" || { echo "FAIL: testssl.sh did not finish"; failed=1; }
[ "$failed" = 0 ] && echo "testssl.sh: every check passed"
exit "$failed"
