#!/usr/bin/env bash
# The console's browser suite: Debian's chromium driven by playwright-core, against real
# runledgerd processes on loopback (one with authentication on), seeded over the HTTP API.
# Usage: scripts/ui-test.sh [BINARY_DIR]   (default: build/bin; the folder holding runledgerd)
# Screenshots of every page, light and dark, are written to build/ui-screenshots/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bindir="$(cd "${1:-$root/build/bin}" && pwd)"
[ -x "$bindir/runledgerd" ] || { echo "ui-test: no runledgerd in $bindir" >&2; exit 2; }

need_apt=()
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || need_apt+=(nodejs npm)
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "ui-test: installing ${need_apt[*]}" >&2
  apt-get update -qq && apt-get install -y --no-install-recommends "${need_apt[@]}"
fi

cd "$root/ui"
npm ci --no-audit --no-fund --loglevel=error
mkdir -p "$root/build/ui-screenshots"
start=$(date +%s)
node --test --test-reporter=spec tests/overlap.test.mjs
RL_BIN_DIR="$bindir" node --test --test-concurrency=1 --test-reporter=spec tests/suite.test.mjs
echo "ui-test: passed in $(( $(date +%s) - start )) s; screenshots in build/ui-screenshots/"
