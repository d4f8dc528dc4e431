#!/usr/bin/env bash
# Same-run A/B of crest builds over a whole benchgraph --mode=P batch:
# each round runs the batch once with each build's libcrest.so (its
# directory by LD_LIBRARY_PATH, as bg_runs.sh), without oneDNN's
# primitive (--onednn=0), the builds' order reversed every other round
# (in session 36 the first build of each bg_runs.sh round read higher),
# then prints one line a case: each build's
# median % of the roofline over the rounds, the rounds' figures and the
# kernel, and how many cases each build had at 85% or more. A case
# whose rounds disagree by 20 points is the machine's state, not the
# build (doc/performance.md); more rounds tell.
#
#   bash scripts/batch_ab.sh ROUNDS BATCH DIR...
#   bash scripts/batch_ab.sh 3 perf_reducemax_small_maps_sweep /tmp/a /tmp/b
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { sed -n '2,12p' "$0"; exit 2; }
rounds=$1 batch=$2
shift 2
bg=${BENCHGRAPH:-$root/build/tools/benchgraph/benchgraph}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
names=()
for d in "$@"; do
  [ -f "$d/libcrest.so" ] || { echo "no libcrest.so in $d" >&2; exit 2; }
  names+=("$(basename "$d")")
done
cd "$root/benchdnn_inputs/graph"
dirs=("$@")
for r in $(seq 1 "$rounds"); do
  order=$(seq 0 $(($# - 1)))
  [ $((r % 2)) -eq 0 ] && order=$(seq $(($# - 1)) -1 0)
  for i in $order; do
    LD_LIBRARY_PATH=$(cd "${dirs[$i]}" && pwd) "$bg" --mode=P --onednn=0 --batch="$batch" \
      --csv="$tmp/b${i}_r$r.csv" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
  done
done
python3 - "$tmp" "$rounds" "${names[@]}" <<'EOF'
import csv, re, statistics, sys
tmp, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
cases, at85 = {}, [0] * len(names)
for b in range(len(names)):
    for r in range(1, rounds + 1):
        for row in csv.DictReader(open(f"{tmp}/b{b}_r{r}.csv")):
            c = cases.setdefault(row['case'], [[] for _ in names])
            c[b].append((float(row['pct_roofline']), row['kernel'].split(':')[-1]))
for case, per in cases.items():
    short = re.sub(r'--mode=P --graph |--case=op/reducemax_4d_nchw.json', '', case).strip()
    cols = []
    for b, v in enumerate(per):
        med = statistics.median(x[0] for x in v)
        at85[b] += med >= 85
        cols.append("%s %5.1f [%s] %s" % (names[b], med, ",".join("%.0f" % x[0] for x in v), v[0][1]))
    print(short + " | " + " | ".join(cols))
print("at 85%: " + ", ".join("%s %d" % (n, k) for n, k in zip(names, at85))
      + " of %d cases" % len(cases))
EOF
