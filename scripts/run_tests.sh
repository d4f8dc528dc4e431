#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: a Release build,
# then the suites under AddressSanitizer+UBSan, then the threaded ones under
# ThreadSanitizer. Exits non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh"
jobs=$(nproc)

echo "== Release build and tests"
BUILD_DIR=$root/build "$root/scripts/build.sh" -DCREST_WERROR=ON
ctest --test-dir "$root/build" -j"$jobs" --output-on-failure

echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
BUILD_DIR=$root/build-asan BUILD_TYPE=RelWithDebInfo "$root/scripts/build.sh" \
  "-DCREST_SANITIZE=address;undefined" -DCREST_BUILD_BENCHMARKS=OFF
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$root/build-asan" -j"$jobs" \
  --output-on-failure -E 'perf'

echo "== ThreadSanitizer (concurrency suites)"
BUILD_DIR=$root/build-tsan BUILD_TYPE=RelWithDebInfo "$root/scripts/build.sh" \
  -DCREST_SANITIZE=thread -DCREST_BUILD_BENCHMARKS=OFF
# oneDNN's concurrency test is left out here: Debian's oneDNN runs on an
# uninstrumented OpenMP runtime, which TSan cannot follow (it runs in the
# Release and ASan stages).
TSAN_OPTIONS=halt_on_error=1 ctest --test-dir "$root/build-tsan" -j"$jobs" \
  --output-on-failure -R 'ConcurrentMakesShareTheCache'
# Also left out for now: tests that run kernels through Debian's
# uninstrumented libtbb (TSan reports its internal memset), and
# JitThreads.SecondMakeIsACacheHit, which asserts a time.
