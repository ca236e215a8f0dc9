#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a bounded time from the fixtures' seed corpus:
#   native/fuzz/run.sh [SECONDS_PER_TARGET=30] [BUILD_DIR=build-fuzz]
# Prints per target the executions and executions per second (libFuzzer's final stats) and exits
# non-zero if a target crashed, leaked, timed out on an input or ran out of memory. Each finding is
# copied to native/tests/regressions/<target>/ (commit it: the fuzz_<target>_replay ctest replays it
# in every build once the bug is fixed) and reproduced with `BUILD_DIR/native/fuzz/fuzz_<target> <file>`.
# Env: CUZK_FUZZ_TARGETS="key_open wtns r1cs verify input_json", CLANGXX/CLANG (default clang++-19/clang-19),
# CUZK_FUZZ_JOBS (build parallelism, default nproc), CUZK_FUZZ_NO_BUILD=1 (run the targets as built),
# CUZK_FUZZ_PARALLEL (targets fuzzed at once, default 1: each libFuzzer process uses one core).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds=${1:-30}
build=${2:-build-fuzz}
targets=${CUZK_FUZZ_TARGETS:-key_open wtns r1cs verify input_json}
cxx=${CLANGXX:-clang++-19}
cc=${CLANG:-clang-19}
jobs=${CUZK_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCUZK_CUDA=OFF -DCUZK_TESTS=OFF -DCUZK_FUZZ=ON \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" >/dev/null
fi
if [[ "${CUZK_FUZZ_NO_BUILD:-0}" != 1 ]]; then
  build_start=$SECONDS
  cmake --build "$build" -j "$jobs" --target $(for t in $targets; do printf 'fuzz_%s ' "$t"; done) >/dev/null
  echo "fuzz targets built in $((SECONDS - build_start)) s ($build)"
fi

work="$build/fuzz-run"
rm -rf "$work"
mkdir -p "$work"
node native/fuzz/seeds.mjs "$work/seeds"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
symbolizer=$(command -v llvm-symbolizer-19 || command -v llvm-symbolizer || true)
[[ -n "$symbolizer" ]] && export ASAN_SYMBOLIZER_PATH="$symbolizer"

failed=0
parallel=${CUZK_FUZZ_PARALLEL:-1}
# One target's run: its log in $work/<target>.log, its exit status in $work/<target>.rc.
fuzz_one() {
  local t=$1
  mkdir -p "$work/corpus-$t" "$work/artifacts-$t"
  set +e
  # The seed folder is read-only input; new inputs go to the corpus folder (listed first).
  "$build/native/fuzz/fuzz_$t" "$work/corpus-$t" "$work/seeds/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$work/artifacts-$t/" >"$work/$t.log" 2>&1
  echo $? >"$work/$t.rc"
}
running=0
for t in $targets; do
  fuzz_one "$t" &
  running=$((running + 1))
  if ((running >= parallel)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

printf '%-10s %12s %10s %8s %s\n' target executions exec/s corpus result
for t in $targets; do
  corpus="$work/corpus-$t"
  artifacts="$work/artifacts-$t"
  log="$work/$t.log"
  rc=$(cat "$work/$t.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  units=$(find "$corpus" -type f | wc -l)
  result=ok
  if ((rc != 0)) || compgen -G "$artifacts/*" >/dev/null; then
    result="FAILED (rc $rc, log $log)"
    failed=1
    mkdir -p "native/tests/regressions/$t"
    for a in "$artifacts"/*; do
      [[ -f "$a" ]] || continue
      cp "$a" "native/tests/regressions/$t/$(basename "$a")"
      echo "  finding: native/tests/regressions/$t/$(basename "$a")"
    done
    grep -m1 -A12 -E "ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error|fuzz target:" "$log" | sed 's/^/    /' || true
  fi
  printf '%-10s %12s %10s %8s %s\n' "$t" "${execs:-?}" "${rate:-?}" "$units" "$result"
done
exit $failed
