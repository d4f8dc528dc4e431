#!/usr/bin/env bash
# Runs a benchgraph --mode=P batch several times and prints one markdown
# table of per-case medians (time, GB/s, roofline GB/s, % of roofline,
# oneDNN time, oneDNN / crest). This machine's bandwidth moves by 2x from
# run to run, so single runs are not what doc/performance.md reports.
#
#   bash scripts/perf_table.sh [runs=3] [batch=perf_reducemax] [benchgraph options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
batch=${2:-perf_reducemax}
shift $(( $# > 2 ? 2 : $# ))
bg=${BENCHGRAPH:-$root/build/tools/benchgraph/benchgraph}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root/benchdnn_inputs/graph"
for i in $(seq 1 "$runs"); do
  "$bg" --mode=P --batch="$batch" --csv="$tmp/run$i.csv" "$@" > "$tmp/run$i.log" 2>&1 \
    || { cat "$tmp/run$i.log"; exit 1; }
  tail -n 1 "$tmp/run$i.log" >&2
done
# CSV fields (benchgraph.md): case,time_ms,bytes,gbps,roofline_gbps,onednn_ms,
# onednn_impl,pct_roofline,speedup_vs_onednn,kernel,cpu_wait_pct,machine.
# The case string holds no commas.
awk -F, -v runs="$runs" '
  function median(key, col,   n, i, j, t, a) {
    n = 0
    for (i = 1; i <= runs; ++i) if ((key, i, col) in v && v[key, i, col] != "") a[++n] = v[key, i, col] + 0
    if (n == 0) return "-"
    for (i = 2; i <= n; ++i) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; --j) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function fmt(x, f) { return x == "-" ? "-" : sprintf(f, x) }
  FNR == 1 { ++run; next }
  {
    key = $1
    if (!(key in seen)) { seen[key] = ++ncase; order[ncase] = key; kern[key] = $10; bytes[key] = $3 }
    for (c = 2; c <= NF; ++c) v[key, run, c] = $c
  }
  END {
    print "| case | MiB | kernel | ms | GB/s | roofline GB/s | % roofline | oneDNN ms | oneDNN / crest |"
    print "|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= ncase; ++i) {
      k = order[i]; name = k
      sub(/^--mode=P --graph /, "", name); gsub(/--case=op\/reducemax_4d_nchw.json/, "", name)
      gsub(/--in-shapes=0:/, "", name); gsub(/--op-attrs=0:axes:/, "axes ", name)
      gsub(/ +$/, "", name)
      printf "| %s | %.1f | %s | %s | %s | %s | %s | %s | %s |\n", name, bytes[k] / 1048576, kern[k],
        fmt(median(k, 2), "%.4g"), fmt(median(k, 4), "%.1f"), fmt(median(k, 5), "%.1f"),
        fmt(median(k, 8), "%.0f%%"), fmt(median(k, 6), "%.4g"), fmt(median(k, 9), "%.2fx")
    }
  }' "$tmp"/run*.csv
