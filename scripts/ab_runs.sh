#!/usr/bin/env bash
# Runs build/bench/ab_builds several times and prints one line per run:
# the roofline block's median call and each build's per-round median of
# the ratio to the roofline (ab_builds' last column). Runs seconds apart
# land in either of the machine's states (doc/performance.md); a change
# is real when every run shows it, for every copy of each build.
#
#   bash scripts/ab_runs.sh RUNS "AB_BUILDS_OPTIONS" DIR...
#   bash scripts/ab_runs.sh 3 "--shape=32x64x56x56 --order=0,2,3,1 --axes=0 --rounds=101 --calls=20" \
#       /tmp/a /tmp/b /tmp/a2 /tmp/b2
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { sed -n '2,10p' "$0"; exit 2; }
runs=$1 opts=$2
shift 2
for _ in $(seq 1 "$runs"); do
  # shellcheck disable=SC2086  # opts is a list of options
  out=$("$root/build/bench/ab_builds" $opts "$@" 2>&1) || { echo "$out"; exit 1; }
  line="roof=$(echo "$out" | awk '$1 == "roof" { print $2 }')us"
  for d in "$@"; do
    line="$line $(basename "$d")=$(echo "$out" | awk -v d="$d" '$1 == d { print $NF }')"
  done
  echo "$line"
done
