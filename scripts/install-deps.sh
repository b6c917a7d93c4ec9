#!/usr/bin/env bash
# Installs the Debian 12 packages runledger builds, tests and benchmarks with.
# Idempotent: installs only what is missing. Run as root (or with sudo).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  librocksdb-dev              # the embedded event store
  libflatbuffers-dev flatbuffers-compiler  # event encoding + flatc
  libboost-dev libboost-system-dev         # Asio timers
  libcpp-httplib-dev          # HTTP server and test client
  libfmt-dev                  # formatting
  nlohmann-json3-dev          # JSON bodies and views
  libcli11-dev                # command-line flags
  libssl-dev                  # SHA-256 for the hash chain and lease tokens
  zlib1g-dev                  # the console's files, served gzipped
  libpq-dev                   # the log in PostgreSQL (docs/cluster.md)
  postgresql                  # PostgreSQL 15 servers for the cluster tests
  libgoogle-perftools-dev     # tcmalloc, the allocator of the shipped binaries
  libgtest-dev libgmock-dev   # tests
  curl procps                 # scripts and restart tests
  clang-format                # the format check of scripts/test.sh
  openssl testssl.sh          # certificates for the TLS tests, and the TLS check
  file systemd man-db lintian # the Debian package's checks: shlibdeps, unit, man pages
  prometheus                  # promtool, which checks monitoring/'s alert rules
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
