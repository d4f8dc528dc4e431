#!/usr/bin/env bash
# The main job: installs what is missing, builds, then runs the benchgraph
# correctness batch (every case checked bit-exact against the reference
# backend) and the performance batch (median time, GB/s, roofline, oneDNN).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh"
BUILD_DIR=$root/build "$root/scripts/build.sh"
bg=$root/build/tools/benchgraph/benchgraph
cd "$root/benchdnn_inputs/graph"
echo "== correctness"
"$bg" --mode=C --batch=harness_reducemax_ci
echo "== performance"
"$bg" --mode=P --batch=perf_reducemax
