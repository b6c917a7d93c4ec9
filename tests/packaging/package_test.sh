#!/usr/bin/env bash
# Builds the Debian package and checks it as a Debian 12 machine would use it,
# without installing it: its control data and contents, the unit (systemd-
# analyze verify), the man pages (man --warnings), lintian when it is there,
# and the packaged server itself, extracted with dpkg -x and started the way
# the unit's ExecStart starts it, answering GET /v1/health.
#
#   package_test.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail

build=${1:?build dir}
: "${2:?source dir}"
version=${3:?version}
deb="$build/runledger_${version}_amd64.deb"

failures=0
pass() { printf 'ok   %s\n' "$*"; }
fail() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
skip() { printf 'skip %s\n' "$*"; }
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

for tool in dpkg-deb dpkg curl man gzip; do
  command -v "$tool" >/dev/null || { echo "FAIL $tool is missing (scripts/install-deps.sh installs it)"; exit 1; }
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/runledger-pkg.XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# ---- the package target ----
rm -f "$deb"
if ! cmake --build "$build" --target package >"$scratch/cpack.log" 2>&1; then
  cat "$scratch/cpack.log"
  echo "FAIL cmake --build $build --target package"
  exit 1
fi
[ -f "$deb" ] || { cat "$scratch/cpack.log"; echo "FAIL no $deb"; exit 1; }
pass "package built: $(basename "$deb"), $(du -h "$deb" | cut -f1)"

# ---- control data ----
info=$(dpkg-deb -I "$deb")
printf '     %s\n' "${info//$'\n'/$'\n'     }"
field() { dpkg-deb -f "$deb" "$1"; }
check "Package is runledger" test "$(field Package)" = runledger
check "Version is $version" test "$(field Version)" = "$version"
check "Architecture is amd64" test "$(field Architecture)" = amd64
depends=$(field Depends)
# dpkg-shlibdeps names the packages of the libraries the binaries link.
for dep in adduser libc6 'libstdc++6' libssl3 libfmt9 libtcmalloc-minimal4; do
  check "Depends names $dep" grep -qE "(^|, )${dep//+/\\+}( |,|$)" <<<"$depends"
done
check "Depends carries versions from shlibdeps" grep -qE 'libc6 \(>= [0-9.]+\)' <<<"$depends"
check "/etc/default/runledgerd is a conffile" \
  grep -qx /etc/default/runledgerd < <(dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles)
for script in postinst prerm postrm; do
  check "$script is in the control data, executable" \
    grep -qE "^-rwxr-xr-x .* \./$script$" < <(dpkg-deb --ctrl-tarfile "$deb" | tar -tvf -)
done
check "postinst creates the system user runledger" \
  grep -q 'adduser --system' < <(dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./postinst)

# ---- contents ----
contents=$(dpkg-deb -c "$deb")
has() { # has MODE PATH
  grep -qE "^$1 root/root .* \./$2$" <<<"$contents"
}
check "usr/bin/runledgerd, 0755" has -rwxr-xr-x usr/bin/runledgerd
check "usr/bin/runledger, 0755" has -rwxr-xr-x usr/bin/runledger
check "usr/lib/runledger/runledger-keeper, 0755" has -rwxr-xr-x usr/lib/runledger/runledger-keeper
check "lib/systemd/system/runledgerd.service" has -rw-r--r-- lib/systemd/system/runledgerd.service
check "etc/default/runledgerd" has -rw-r--r-- etc/default/runledgerd
check "usr/share/man/man8/runledgerd.8.gz" has -rw-r--r-- usr/share/man/man8/runledgerd.8.gz
check "usr/share/man/man1/runledger.1.gz" has -rw-r--r-- usr/share/man/man1/runledger.1.gz
check "usr/share/doc/runledger/copyright" has -rw-r--r-- usr/share/doc/runledger/copyright
check "nothing under usr/local" test -z "$(grep '\./usr/local' <<<"$contents" || true)"

# ---- extracted ----
root="$scratch/root"
dpkg -x "$deb" "$root"
if command -v file >/dev/null; then
  for bin in usr/bin/runledgerd usr/bin/runledger usr/lib/runledger/runledger-keeper; do
    check "$bin is stripped" grep -q ', stripped' < <(file "$root/$bin")
  done
fi
check "runledgerd --help runs" grep -q -- '--listen' < <("$root/usr/bin/runledgerd" --help)
check "runledger --help runs" grep -q -- 'verify' < <("$root/usr/bin/runledger" --help)
# runledger work finds its keeper where the package puts it (its preflight
# refuses with 78 when it cannot; 69 is "no server", past the preflight).
work_code=0
"$root/usr/bin/runledger" work --kind k --once --wait-s 0 --server http://127.0.0.1:1 \
  --state-dir "$scratch/work-state" -- true >/dev/null 2>&1 || work_code=$?
check "runledger work finds usr/lib/runledger/runledger-keeper" test "$work_code" = 69

# The man pages render without a warning.
for page in usr/share/man/man8/runledgerd.8.gz usr/share/man/man1/runledger.1.gz; do
  out=$(MANWIDTH=80 man --warnings -l "$root/$page" 2>&1 >/dev/null || echo "man exited $?")
  if [ -z "$out" ]; then pass "man -l $page: no warning"; else fail "man -l $page: $out"; fi
done

# The unit.
unit="$root/lib/systemd/system/runledgerd.service"
for directive in 'User=runledger' 'StateDirectory=runledger' 'EnvironmentFile=-/etc/default/runledgerd' \
                 'NoNewPrivileges=yes' 'ProtectSystem=strict' 'PrivateTmp=yes' 'ProtectHome=yes' \
                 'CapabilityBoundingSet=' 'UMask=0077' 'MemoryDenyWriteExecute=yes' \
                 'SystemCallFilter=@system-service' 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX'; do
  check "unit has $directive" grep -qxF "$directive" "$unit"
done
check "ExecStart runs the packaged /usr/bin/runledgerd" grep -q '^ExecStart=/usr/bin/runledgerd ' "$unit"
if command -v systemd-analyze >/dev/null; then
  # The unit as packaged but for ExecStart's binary, which is the extracted
  # one: with --root, systemd-analyze would miss the host's targets the unit
  # orders itself after. The Documentation= man pages are the packaged ones.
  mkdir -p "$scratch/unit"
  sed "s|^ExecStart=/usr/bin/runledgerd |ExecStart=$root/usr/bin/runledgerd |" "$unit" \
    >"$scratch/unit/runledgerd.service"
  if out=$(MANPATH="$root/usr/share/man" systemd-analyze verify "$scratch/unit/runledgerd.service" 2>&1) \
     && [ -z "$out" ]; then
    pass "systemd-analyze verify: clean"
  else
    fail "systemd-analyze verify: $out"
  fi
  exposure=$(systemd-analyze security --offline=yes "$scratch/unit/runledgerd.service" 2>/dev/null \
             | sed -n 's/.*Overall exposure level for runledgerd.service: \([0-9.]*\).*/\1/p')
  # 0 is a unit that may do nothing, 10 one that may do anything; the
  # unit's sandbox keeps it low.
  check "systemd-analyze security: exposure ${exposure:-unknown} at most 2.0" \
    awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }'
else
  skip "systemd-analyze verify: systemd-analyze is not installed (the systemd package has it)"
fi

# The packaged server, started as the unit starts it: the environment file's
# variables, then ExecStart with systemd's expansion (${VAR} one word, $VAR
# split at spaces), under the unit's umask. Only the address and the data
# folder are the test's own.
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
# shellcheck disable=SC2016 # the variables are systemd's, not this shell's
check "ExecStart uses the environment file's variables" \
  grep -qF -- '--listen ${RUNLEDGER_LISTEN} --data ${RUNLEDGER_DATA} $RUNLEDGERD_OPTS' <<<"$exec_start"
cmdline=$(sed -e "s|^/usr/bin/|$root/usr/bin/|" -e 's/\${\([A-Z_]*\)}/"${\1}"/g' <<<"$exec_start")
data="$scratch/data"
# As root (CI is), it runs as the unit runs it: an unprivileged user (nobody
# here, as the package's user is not made), no capabilities, no new
# privileges; and where mount namespaces are allowed, with / read-only but
# for its data folder (ProtectSystem=strict).
launcher=()
how=""
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 711 "$scratch"
  install -d -o 65534 -g 65534 -m 700 "$scratch/state"
  data="$scratch/state/data"
  launcher=(setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all)
  how=", as nobody without capabilities"
  if unshare -m --propagation private true 2>/dev/null; then
    # shellcheck disable=SC2016 # the inner shell expands them
    launcher=(unshare -m --propagation private sh -c \
      'mount --bind "$0" "$0" && mount -o remount,bind,ro / && exec "$@"' "$scratch/state" "${launcher[@]}")
    how="$how, / read-only"
  else
    skip "read-only / for the server: no mount namespace here"
  fi
fi
(
  # The unit's Environment= defaults, then its EnvironmentFile=.
  while IFS= read -r assignment; do
    export "${assignment?}"
  done < <(sed -n 's/^Environment=//p' "$unit")
  set -a
  # shellcheck disable=SC1091
  . "$root/etc/default/runledgerd"
  set +a
  export RUNLEDGER_LISTEN=127.0.0.1:0 RUNLEDGER_DATA="$data"
  umask 0077
  eval "set -- $cmdline"
  exec "${launcher[@]}" "$@"
) >"$scratch/server.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$scratch/server.log")
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then
  fail "packaged runledgerd started"; cat "$scratch/server.log"
else
  pass "packaged runledgerd listening on 127.0.0.1:$port$how"
  health=$(curl -sS --max-time 5 "http://127.0.0.1:$port/v1/health" || true)
  check "GET /v1/health answers ok ($health)" grep -q '"status":"ok"' <<<"$health"
  # A command is made durable: the data folder is writable to it.
  job=$(curl -sS --max-time 5 -XPOST "http://127.0.0.1:$port/v1/jobs" -H 'Content-Type: application/json' \
          -d '{"id":"package-test","kind":"check","target":"package/test","plan":["LOAD"]}' || true)
  check "POST /v1/jobs enqueues a job" grep -q '"state":"QUEUED"' <<<"$job"
  check "data folder created 0700" test "$(stat -c %a "$data")" = 700
  kill -TERM "$server_pid"
  rc=0; wait "$server_pid" || rc=$?
  server_pid=""
  check "SIGTERM stops it cleanly (exit $rc)" test "$rc" -eq 0
fi

# ---- lintian, when installed: errors fail, the rest is reported ----
if command -v lintian >/dev/null; then
  lint=$(lintian --tag-display-limit 0 "$deb" 2>&1 || true)
  if [ -n "$lint" ]; then printf '     lintian: %s\n' "${lint//$'\n'/$'\n'     lintian: }"; fi
  if grep -q '^E:' <<<"$lint"; then fail "lintian: errors"; else pass "lintian: no error"; fi
else
  skip "lintian: not installed"
fi

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all package checks passed"
