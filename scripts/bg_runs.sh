#!/usr/bin/env bash
# Runs one benchgraph --mode=P case with each build's libcrest.so in
# turn, RUNS rounds, and prints one line a round: each build's % of the
# roofline. Each DIR holds a libcrest.so, which LD_LIBRARY_PATH puts
# before the build tree's RUNPATH. Runs seconds apart land in either of
# the machine's states (doc/performance.md), so a change is real when
# every round shows it. In session 28 some two-stage 16-bit plans read
# apart here round after round (72-80 against 93-97%) where
# ab_runs.sh's children read the old build at 79-90%.
#
#   bash scripts/bg_runs.sh RUNS "BENCHGRAPH_OPTIONS" DIR...
#   bash scripts/bg_runs.sh 3 "--dt=bf16 --in-shapes=0:64x64x56x56*acdb \
#       --op-attrs=0:axes:0x1 --case=op/reducemax_4d_nchw.json" /tmp/a /tmp/b
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { sed -n '2,13p' "$0"; exit 2; }
runs=$1 opts=$2
shift 2
bg=${BENCHGRAPH:-$root/build/tools/benchgraph/benchgraph}
for d in "$@"; do
  lib=$(cd "$d" && pwd)/libcrest.so
  [ -f "$lib" ] || { echo "no libcrest.so in $d" >&2; exit 2; }
  LD_LIBRARY_PATH=$(dirname "$lib") ldd "$bg" | grep -F "$lib" >/dev/null \
    || { echo "benchgraph would not load $lib" >&2; exit 2; }
done
cd "$root/benchdnn_inputs/graph"
for _ in $(seq 1 "$runs"); do
  line=""
  for d in "$@"; do
    # shellcheck disable=SC2086  # opts is a list of options
    out=$(LD_LIBRARY_PATH=$(cd "$d" && pwd) "$bg" --mode=P $opts 2>&1) \
      || { echo "$out"; exit 1; }
    pct=$(echo "$out" | grep -o 'pct_roofline=[0-9.]*' | cut -d= -f2 | paste -sd/)
    line="$line $(basename "$d")=$pct%"
  done
  echo "${line# }"
done
