#!/usr/bin/env bash
# Install what is missing, build, check the formatting of every source
# (.clang-format), and run the whole test suite and the console's browser
# suite (scripts/ui-test.sh); then the
# sanitizer pass at CI size (scripts/sanitize.sh): the store, decider,
# engine and HTTP suites under ASan + UBSan (the randomized ones cut to a
# tenth; the HTTP suite against a sanitized server) and
# 20 s of each fuzzer, in build-asan-ci/ at -O0 (it builds fastest), which
# also checks the engine's lock annotations; then clang-tidy over the layers
# below http/ (scripts/tidy.sh). RUNLEDGER_SANITIZE_CHECKS=0 skips those.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
cmake --build build --target format-check
(cd build && ctest --output-on-failure --timeout 900 -j2)
# The console: its committed build is what its sources give, and the browser
# suite passes against the console built into runledgerd.
./scripts/ui-check.sh
RL_UI_EMBEDDED=1 ./scripts/ui-test.sh build/bin
# The OpenAPI document: linted by Redocly and Spectral, and real replies
# validated against it.
./scripts/openapi-check.sh build/bin
if [ "${RUNLEDGER_SANITIZE_CHECKS:-1}" != 0 ]; then
  RUNLEDGER_ASAN_BUILD=build-asan-ci RUNLEDGER_ASAN_OPT=-O0 \
    RUNLEDGER_FUZZ_SECONDS="${RUNLEDGER_FUZZ_SECONDS:-20}" \
    RUNLEDGER_ASAN_TESTS="${RUNLEDGER_ASAN_TESTS:-events_tests projections_tests engine_tests http_tests}" \
    ./scripts/sanitize.sh
  # clang-tidy (.clang-tidy) with that clang build's compile commands.
  ./scripts/tidy.sh build-asan-ci
fi
