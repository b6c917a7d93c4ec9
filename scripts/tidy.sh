#!/usr/bin/env bash
# clang-tidy with .clang-tidy's checks over the engine's layers (base,
# events, projections, engine) and the parts beside them that speak to a
# database or run a step (cluster, worker, client), with the compile
# commands of a clang build (by default build-asan-ci, which
# scripts/sanitize.sh makes for CI). Fails on any finding. http/, tools/ and
# bench/ are left out: nearly every source there pulls in Boost.Asio and
# cpp-httplib, and tidying them would add a quarter of an hour to CI on two
# cores.
#
#   ./scripts/tidy.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-asan-ci}"
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy.sh: $build/compile_commands.json is missing: build $build with clang first" >&2
  exit 2
fi
if ! command -v run-clang-tidy >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang-tidy
fi
nice run-clang-tidy -p "$build" -j "${RUNLEDGER_JOBS:-2}" -quiet \
  '/(base|events|projections|engine|cluster|worker|client)/[^/]*\.cc$'
