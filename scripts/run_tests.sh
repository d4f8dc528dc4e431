#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: a Release build,
# then the suites under AddressSanitizer+UBSan, then the threaded ones under
# ThreadSanitizer. Exits non-zero on any failure.
#
#   bash scripts/run_tests.sh [release] [asan] [tsan]    (default: all three)
#
# Build folders: build, build-asan and build-tsan under the repository, or
# $RELEASE_BUILD_DIR, $ASAN_BUILD_DIR and $TSAN_BUILD_DIR.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(release asan tsan)
for s in "${stages[@]}"; do
  case $s in release|asan|tsan) ;; *) echo "run_tests: unknown stage '$s' (release, asan, tsan)" >&2; exit 2 ;; esac
done
want() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

"$root/scripts/install_deps.sh"

# Builds Debian's own oneTBB source (the exact version of the installed
# libtbb-dev) with -fsanitize=thread into $1/lib, once per version.
#
# Why: TSan sees a happens-before edge only where instrumented code (or an
# intercepted call) synchronises. Debian's libtbb.so is not instrumented, so
# the hand-off of a task to a worker thread and the join back to the caller
# happen where TSan cannot see them. Every parallel_for then gives dozens of
# false reports, and not only inside libtbb: the kernels' own accesses in
# crest (backend/jit/reduce_kernel.cpp, src/threading.cpp) are reported
# against the caller's earlier or later accesses. A suppression broad enough
# to hide those would also hide real races in crest's parallel code, so the
# instrumented library replaces suppressions; with it these tests report
# nothing, and a planted race in a parallel_for body is still reported.
#
# The source comes through apt-get with a private list of deb-src entries
# (the machine's own apt sources are left as they are). Debian's patches to
# oneTBB 2021.8 touch other architectures, build flags and tests only, so
# the upstream tarball is built as it is.
build_tsan_tbb() {
  local dir=$1 pkg ver
  pkg=$(dpkg-query -W -f='${source:Package}' libtbb-dev)
  ver=$(dpkg-query -W -f='${source:Version}' libtbb-dev)
  if [ -f "$dir/lib/libtbb.so.12" ] && [ "$(cat "$dir/version" 2>/dev/null)" = "$pkg $ver" ]; then
    return 0
  fi
  echo "run_tests: building $pkg $ver with ThreadSanitizer into $dir"
  rm -rf "$dir"
  mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/apt/parts" \
           "$dir/dl" "$dir/src" "$dir/lib"
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    if [ -f "$f" ]; then sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f"; fi
  done > "$dir/apt/sources.list"
  for f in /etc/apt/sources.list.d/*.sources; do
    if [ -f "$f" ]; then sed 's/^Types:.*/Types: deb-src/' "$f" > "$dir/apt/parts/$(basename "$f")"; fi
  done
  local apt=(apt-get -q -o Dir::State::Lists="$dir/apt/lists" -o Dir::Cache="$dir/apt/cache"
             -o Dir::Etc::SourceList="$dir/apt/sources.list"
             -o Dir::Etc::SourceParts="$dir/apt/parts" -o APT::Sandbox::User=root)
  "${apt[@]}" update >/dev/null || echo "run_tests: apt-get update of the deb-src lists reported errors"
  (cd "$dir/dl" && "${apt[@]}" source --download-only "$pkg=$ver" >/dev/null)
  tar -xf "$dir"/dl/*.orig.tar.* -C "$dir/src" --strip-components=1
  # -Wno-tsan: GCC notes that TSan does not model oneTBB's seq_cst fences
  # (its sleep/wake-up handshake); the hand-offs themselves are atomics.
  { cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBB_SANITIZE=thread \
      -DCMAKE_CXX_FLAGS=-Wno-tsan -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF -DTBB_STRICT=OFF \
      -DTBBMALLOC_BUILD=OFF && cmake --build "$dir/build" --target tbb -j"$jobs"; } \
    > "$dir/build.log" 2>&1 || { tail -n 40 "$dir/build.log"; return 1; }
  cp -L "$(find "$dir/build" -name libtbb.so.12 | head -n1)" "$dir/lib/libtbb.so.12"
  # (grep without -q: with pipefail, an early exit of grep fails the pipe.)
  nm -D "$dir/lib/libtbb.so.12" | grep __tsan_ >/dev/null || {
    echo "run_tests: $dir/lib/libtbb.so.12 is not instrumented" >&2; return 1; }
  echo "$pkg $ver" > "$dir/version"
}

if want release; then
  echo "== Release build and tests"
  build=${RELEASE_BUILD_DIR:-$root/build}
  BUILD_DIR=$build "$root/scripts/build.sh" -DCREST_WERROR=ON
  ctest --test-dir "$build" -j"$jobs" --output-on-failure
fi

if want asan; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
  build=${ASAN_BUILD_DIR:-$root/build-asan}
  BUILD_DIR=$build BUILD_TYPE=RelWithDebInfo "$root/scripts/build.sh" \
    "-DCREST_SANITIZE=address;undefined" -DCREST_BUILD_BENCHMARKS=OFF
  ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$build" -j"$jobs" \
    --output-on-failure -E 'perf'
fi

if want tsan; then
  echo "== ThreadSanitizer (concurrency suites)"
  build=${TSAN_BUILD_DIR:-$root/build-tsan}
  BUILD_DIR=$build BUILD_TYPE=RelWithDebInfo "$root/scripts/build.sh" \
    -DCREST_SANITIZE=thread -DCREST_BUILD_BENCHMARKS=OFF
  build_tsan_tbb "$build/tbb-tsan"
  tbb_lib=$build/tbb-tsan/lib
  # The tests must load the instrumented libtbb, not the system one.
  LD_LIBRARY_PATH=$tbb_lib ldd "$build/tests/api/api_concurrency_tests" \
    | grep "$tbb_lib/libtbb.so.12" >/dev/null || { echo "run_tests: tests do not load $tbb_lib/libtbb.so.12" >&2; exit 1; }
  # JitThreads: one kernel from 4 threads, makes racing on the code cache.
  # ApiConcurrency: one compiled_partition from 4 threads, concurrent
  # compiles through the API. oneDNN's concurrency test is left out: Debian's
  # oneDNN runs on an uninstrumented OpenMP runtime, which TSan cannot follow
  # (it runs in the Release and ASan stages).
  LD_LIBRARY_PATH=$tbb_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} TSAN_OPTIONS=halt_on_error=1 \
    ctest --test-dir "$build" -j"$jobs" --output-on-failure --no-tests=error \
    -R '^(JitThreads|ApiConcurrency)\.'
fi
