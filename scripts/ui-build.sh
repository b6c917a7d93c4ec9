#!/usr/bin/env bash
# Builds the web console into ui/dist/ (committed; the C++ build embeds it and needs no Node).
# Usage: scripts/ui-build.sh [OUTDIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "ui-build: installing nodejs and npm" >&2
  apt-get update -qq && apt-get install -y --no-install-recommends nodejs npm
fi
cd "$root/ui"
npm ci --no-audit --no-fund --loglevel=error
node build.mjs "${1:-$root/ui/dist}"
