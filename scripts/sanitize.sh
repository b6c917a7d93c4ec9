#!/usr/bin/env bash
# The sanitizer and fuzzing pass of CI (docs/performance.md "Bad input"):
#  1. builds build-asan with clang, AddressSanitizer + UBSan and the libFuzzer
#     targets of fuzz/;
#  2. runs the core test binaries under the sanitizers (leaks included);
#  3. runs each fuzzer for a bounded time over a copy of its corpus (the
#     repository is never written), with its dictionary.
# Fails on a failing test, a crash, a leak, undefined behaviour or a broken
# contract check of a fuzzer. A fuzzer's failing input is kept in
# build-asan/fuzz-artifacts/; replay it with `build-asan/bin/<fuzzer> FILE`.
#
# Environment:
#   RUNLEDGER_FUZZ_SECONDS  seconds per fuzzer (default 60)
#   RUNLEDGER_ASAN_TESTS    test binaries to run (default: events, projections, engine, http)
#   RUNLEDGER_JOBS          build parallelism (default 2)
#   RUNLEDGER_ASAN_OPT      optimization of the sanitized build (default -O1;
#                           CI uses -O0, which builds faster and runs slower)
#   RUNLEDGER_ASAN_BUILD    build folder (default build-asan)
set -euo pipefail
cd "$(dirname "$0")/.."

fuzz_seconds="${RUNLEDGER_FUZZ_SECONDS:-60}"
tests="${RUNLEDGER_ASAN_TESTS:-base_tests events_tests projections_tests engine_tests http_tests}"
jobs="${RUNLEDGER_JOBS:-2}"
fuzzers=(fuzz_event_decoder fuzz_http_request fuzz_json_input fuzz_request_parser)
build="${RUNLEDGER_ASAN_BUILD:-build-asan}"
opt="${RUNLEDGER_ASAN_OPT:--O1}"
# The throughput tests measure speed, which a sanitized build does not have;
# the free memory tests measure what malloc gives back, and ASan's allocator
# replaces it (its quarantine keeps freed memory on purpose).
test_filter='-*Throughput*:*throughput*:FreeMemory*'

# clang and its runtimes (libFuzzer is in libclang-rt-14-dev on Debian 12).
if ! command -v clang++ >/dev/null ||
   ! compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a' >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    clang libclang-rt-14-dev
fi

# No full debug info: the sanitized build is compile-bound on 2 cores; line
# tables are enough for symbolized reports. -O1 by default, which fuzzes many
# times faster than -O0. Assertions stay on.
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt -gline-tables-only" \
  -DRUNLEDGER_SANITIZE=ON -DRUNLEDGER_FUZZ=ON -DRUNLEDGER_TESTS=ON >/dev/null
# shellcheck disable=SC2086
# The HTTP suite runs the server it tests as a subprocess: that server is
# sanitized too, and a finding in it fails the test that stops it.
servers=()
[[ " $tests " == *" http_tests "* ]] && servers+=(runledgerd)
nice cmake --build "$build" -j"$jobs" -t "${fuzzers[@]}" $tests "${servers[@]}"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1"
# The randomized engine suites at a tenth of their size: a sanitized build
# runs them about ten times slower, and the normal build runs them whole.
export RUNLEDGER_SIM_COMMANDS="${RUNLEDGER_SIM_COMMANDS:-2000}"
export RUNLEDGER_COMMANDS="${RUNLEDGER_COMMANDS:-200}"
# fuzz/ubsan.supp lists the known, reported findings (each with the reason
# and the way to remove it); anything else stops the run.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$PWD/fuzz/ubsan.supp"

for t in $tests; do
  echo "== $t (ASan + UBSan)"
  if [ "$t" = http_tests ]; then
    # Its tests mostly wait on the servers they start: two shards at once.
    pids=()
    for shard in 0 1; do
      GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$shard \
        "$build/bin/$t" --gtest_brief=1 --gtest_filter="$test_filter" &
      pids+=($!)
    done
    failed=0
    for p in "${pids[@]}"; do wait "$p" || failed=1; done
    [ "$failed" = 0 ] || exit 1
  else
    "$build/bin/$t" --gtest_brief=1 --gtest_filter="$test_filter"
  fi
done

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
for f in "${fuzzers[@]}"; do
  echo "== $f for ${fuzz_seconds}s"
  mkdir -p "$scratch/$f"
  cp -R "fuzz/corpus/$f/." "$scratch/$f/"
  extra=()
  [ -f "fuzz/$f.dict" ] && extra+=(-dict="fuzz/$f.dict")
  case "$f" in
    # These two reach 50,000-190,000 coverage features an input, and
    # libFuzzer's entropic schedule updates its rare-feature tables for each:
    # three quarters of the run went there (138 → 1,449 inputs/s for the
    # decoder without it, and more coverage in the same time).
    fuzz_event_decoder) extra+=(-entropic=0) ;;
    # Its engine lives across inputs by design, so every input looks like a
    # leak and libFuzzer ran LeakSanitizer's whole-heap scan after each;
    # leaks are still checked when the run ends (6 → 86 inputs/s with both).
    fuzz_http_request) extra+=(-entropic=0 -detect_leaks=0) ;;
  esac
  if ! "$build/bin/$f" -max_total_time="$fuzz_seconds" -timeout=30 -rss_limit_mb=2048 \
      -max_len=16384 -print_final_stats=1 -artifact_prefix="$artifacts/$f-" "${extra[@]}" \
      "$scratch/$f" 2>"$scratch/$f.log"; then
    tail -n 80 "$scratch/$f.log"
    echo "$f FAILED; its input is in $artifacts/" >&2
    exit 1
  fi
  grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$scratch/$f.log"
done
echo "sanitizers and fuzzers: OK"
