#!/usr/bin/env bash
# Rebuilds the console into a temporary folder and fails when its bytes differ from the
# committed ui/dist/: what is embedded is exactly what the lockfile and the sources give.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/ui-build.sh" "$tmp/dist" >/dev/null
if ! diff -r "$root/ui/dist" "$tmp/dist" >"$tmp/diff" 2>&1; then
  echo "ui-check: ui/dist/ differs from a fresh build; run scripts/ui-build.sh and commit ui/dist/" >&2
  cat "$tmp/diff" >&2
  exit 1
fi
for f in "$root"/ui/dist/assets/*; do
  case "$(basename "$f")" in
    *-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*.*) ;;
    *) echo "ui-check: $f has no content hash in its name (assets are cached immutable)" >&2; exit 1 ;;
  esac
done
echo "ui-check: ui/dist/ matches a fresh build"
