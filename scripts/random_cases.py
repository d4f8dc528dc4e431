#!/usr/bin/env python3
"""Prints a benchgraph batch of random ReduceMax problems (mode C).

Each line is one problem: a rank of 1-6, dims from a list of sizes around
vector widths and tails, dims permuted in memory (a random format tag), a
random non-empty axes set, keep_dims either way, f32/bf16/f16, NaNs in
some, fpmath any in some (then no NaNs: only strict compares them). A
fraction of the problems grows to 4-20 MiB, where the kernels switch to
their from-memory forms (prefetches, fused loads, streamed and staged
dst). benchgraph compares every one bit-exactly against the reference
backend, so a batch is a differential soak of every kernel family:

    python3 scripts/random_cases.py --seed=7 --cases=2000 > /tmp/soak
    build/tools/benchgraph/benchgraph --batch=/tmp/soak
    CREST_MAX_CPU_ISA=avx2 build/tools/benchgraph/benchgraph --batch=/tmp/soak

benchdnn_inputs/graph/harness_reducemax_random is this script's output for
its defaults (registered with CTest, on every ISA the machine runs).
"""
import argparse
import random

SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 12, 14, 15, 16, 17, 28, 31, 32, 33, 49, 56, 63, 64,
         65, 100, 127, 128, 129]
# --every-size: each size up to 70, then sizes around the wider kernels'
# bounds (register rows, periods, tiles), for soaks past the defaults.
EVERY_SIZE = SIZES[:8] + [s for s in range(1, 71) if s not in SIZES[:8]] + [
    96, 100, 127, 128, 129, 192, 255, 256, 257, 384, 448, 449, 513, 576, 577, 1000, 1025]
CASE = "op/reducemax_4d_nchw.json"  # --in-shapes rewrites its rank too


def product(dims):
    p = 1
    for d in dims:
        p *= d
    return p


def problem(rnd, sizes, large_fraction, large_max_mib, negative_fraction):
    rank = rnd.choice([1, 2, 3, 4, 4, 4, 5, 6])
    dt = rnd.choice(["f32", "bf16", "f16"])
    esz = 4 if dt == "f32" else 2
    large = rnd.random() < large_fraction
    if large:
        limit = rnd.randint(4, large_max_mib) * 2**20 // esz
    else:
        limit = rnd.choice([2000, 40000, 400000, 2000000])
    dims = [rnd.choice(sizes) for _ in range(rank)]
    while product(dims) > limit:
        dims[rnd.randrange(rank)] = rnd.choice(sizes[:8])
    if large:  # grow one dim at a time while it fits
        for _ in range(200):
            k = rnd.randrange(rank)
            grown = dims[:k] + [dims[k] * rnd.choice([2, 3, 4, 7])] + dims[k + 1:]
            if product(grown) <= limit:
                dims = grown
    tag = list("abcdef"[:rank])
    if rnd.random() < 0.6:
        rnd.shuffle(tag)
    axes = sorted(rnd.sample(range(rank), rnd.randint(1, rank)))
    line = (f"--reset --dt={dt} --in-shapes=0:{'x'.join(map(str, dims))}*{''.join(tag)}"
            f" --op-attrs=0:axes:{'x'.join(map(str, axes))}*keep_dims:{rnd.randint(0, 1)}")
    if rnd.random() < 0.1:
        line += " --fpmath=any"
    elif rnd.random() < 0.4:
        line += " --nan"
    if negative_fraction and rnd.random() < negative_fraction:
        line += " --negative"
    return f"{line} --seed={rnd.randint(0, 999)} --case={CASE}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--large-fraction", type=float, default=0.08)
    ap.add_argument("--large-max-mib", type=int, default=20)
    ap.add_argument("--every-size", action="store_true",
                    help="dims of every size up to 70 and around the wider kernels' bounds")
    ap.add_argument("--negative-fraction", type=float, default=0.0,
                    help="problems whose values are all negative (benchgraph --negative)")
    a = ap.parse_args()
    sizes = EVERY_SIZE if a.every_size else SIZES
    rnd = random.Random(a.seed)
    print(f"# scripts/random_cases.py --seed={a.seed} --cases={a.cases}"
          f" --large-fraction={a.large_fraction} --large-max-mib={a.large_max_mib}"
          + (" --every-size" if a.every_size else "")
          + (f" --negative-fraction={a.negative_fraction}" if a.negative_fraction else ""))
    print("--mode=C")
    for _ in range(a.cases):
        print(problem(rnd, sizes, a.large_fraction, a.large_max_mib, a.negative_fraction))


if __name__ == "__main__":
    main()
