#!/usr/bin/env bash
# Quick start: install what is missing, build, run the server on ./data at 127.0.0.1:8080.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
exec ./build/bin/runledgerd "$@"
