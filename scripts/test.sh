#!/usr/bin/env bash
# Install what is missing, build, and run the whole test suite; then the
# sanitized build of the core suites and a bounded run of every fuzzer
# (scripts/sanitize.sh). RUNLEDGER_SANITIZE_CHECKS=0 skips the second part.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
(cd build && ctest --output-on-failure --timeout 900 -j2)
if [ "${RUNLEDGER_SANITIZE_CHECKS:-1}" != 0 ]; then
  RUNLEDGER_FUZZ_SECONDS="${RUNLEDGER_FUZZ_SECONDS:-20}" \
    RUNLEDGER_ASAN_TESTS="${RUNLEDGER_ASAN_TESTS:-events_tests projections_tests engine_tests}" \
    ./scripts/sanitize.sh
fi
