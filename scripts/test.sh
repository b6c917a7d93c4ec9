#!/usr/bin/env bash
# Install what is missing, build, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 -j2
