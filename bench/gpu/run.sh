#!/usr/bin/env bash
# GPU checks and benchmarks on a GPU host, in one go: uses the carried build folder (or configures
# and builds one when it is missing), runs the GPU tests (`ctest -L gpu`: native/tests/gpu, each
# its own process, so a fault in one leaves the others' results), then each gpu_bench section as
# its own process, then GPU proofs of the fixtures through the CLI when Deno is there; writes the
# logs under the out folder ($OUT, default ./gpu-out) and prints a short table last.
#
#   bench/gpu/run.sh [build-dir [out-dir]]       build-dir defaults to build-cuda (bench/gpu/pack.sh
#       packs one here to carry; run.sh unpacks it there)
#   SECTIONS="msm-check e2e msm" bench/gpu/run.sh  only these sections (default: every test, and the
#       benchmarks ntt engine msm). Tests: field msm-check ntt e2e e2e-stream engine fixed-base
#       device; benchmarks: ntt engine msm fixed-base (ntt, engine and fixed-base name both)
#   CHECKS=none / BENCHES=none: skip the tests / the benchmarks; CLI=0: no proofs through the CLI
#   MSM_MAX_LOG=26 (msm benchmark sizes), ENGINE_MAX_LOG=22, MSM_CHECK_MAX_LOG=24 (msm test sizes),
#   NTT_CHECK_LOG=24 (the ntt test's large size), DEVICES=0 (no per-GPU isolation test),
#   GPU_BENCH_SWEEP=1 (every MSM window size at 2^22 and 2^24), SECTION_TIMEOUT=400 (s, each)
set -u
BUILD=${1:-build-cuda}
OUT=${2:-${OUT:-$PWD/gpu-out}}
mkdir -p "$OUT"
status=0

# The sections of the old all-in-one gpu_bench, as ctest test names and gpu_bench sections.
tests_of() {
  case $1 in
    field) echo gpu_field_test ;;
    msm-check) echo gpu_msm_test ;;
    ntt | ntt-check) echo gpu_ntt_test ;;
    e2e) echo gpu_e2e_test gpu_proving_loop_test gpu_abi_kernels_test ;;
    e2e-stream) echo gpu_e2e_stream_test gpu_proving_loop_stream_test ;;
    engine) echo gpu_engine_test ;;
    fixed-base) echo gpu_fixed_base_test ;;
    device) echo gpu_device_test ;;
  esac
}
if [ -n "${SECTIONS:-}" ]; then
  names=""; BENCHES_FROM=""
  for s in $SECTIONS; do
    names="$names $(tests_of "$s")"
    case $s in ntt | engine | msm | fixed-base) BENCHES_FROM="$BENCHES_FROM $s" ;; esac
  done
  [ "${DEVICES:-1}" = 1 ] && names="$names gpu_device_test"
  CHECKS=${CHECKS:-$(echo $names | tr ' ' '\n' | sort -u | sed 's/.*/^&$/' | paste -sd'|')}
  [ -z "$CHECKS" ] && CHECKS=none
  BENCHES=${BENCHES:-${BENCHES_FROM:-none}}
fi
CHECKS=${CHECKS:-all}
BENCHES=${BENCHES:-"ntt engine msm"}

# A carried build is used as it is (its tests run from their own folder, wherever it now lies), or
# unpacked from build-carry/ (bench/gpu/pack.sh); only a missing one is configured and built here.
pack="build-carry/$(basename "${BUILD%/}").tar.xz"
if [ ! -x "$BUILD/native/tests/gpu_tests" ] && [ -f "$pack" ]; then
  echo "unpacking $pack"
  mkdir -p "$BUILD"
  if command -v xz >/dev/null 2>&1; then xz -dc "$pack" | tar -C "$BUILD" -xf -
  else python3 -c "import lzma,sys,tarfile; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2])" "$pack" "$BUILD"; fi
fi
if [ ! -x "$BUILD/gpu_bench" ] || [ ! -x "$BUILD/native/tests/gpu_tests" ]; then
  echo "building $BUILD (log: $OUT/build.txt)"
  cmake -S . -B "$BUILD" -DCUZK_CUDA=ON -DCUZK_TESTS=ON -DCMAKE_BUILD_TYPE=Release >"$OUT/build.txt" 2>&1 &&
    cmake --build "$BUILD" -j"$(nproc)" >>"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total,temperature.gpu --format=csv \
  >"$OUT/gpu.txt" 2>&1 || true
cat "$OUT/gpu.txt"

# The tests: on a GPU host a test that finds no GPU fails (CUZK_GPU_REQUIRED) instead of skipping.
if [ "$CHECKS" != none ]; then
  if ! command -v ctest >/dev/null 2>&1; then
    echo "FAIL no ctest on PATH: the GPU tests cannot run"; status=1
  else
    filter=(); [ "$CHECKS" != all ] && filter=(-R "$CHECKS")
    [ "${DEVICES:-1}" = 1 ] || filter+=(-E '^gpu_device_test$')
    start=$(date +%s)
    CUZK_GPU_REQUIRED=1 ctest --test-dir "$BUILD" -L gpu "${filter[@]}" -V --no-tests=error \
      --timeout "${SECTION_TIMEOUT:-400}" >"$OUT/ctest.txt" 2>&1
    rc=$?
    [ $rc -ne 0 ] && status=1
    echo "== ctest -L gpu: exit $rc in $(( $(date +%s) - start ))s"
    # one log per test, as the sections used to write: ctest -V prefixes each output line "N: "
    awk -v out="$OUT" '
      match($0, /^ *Start +[0-9]+: /) { n = $0; sub(/^ *Start +/, "", n); split(n, a, ": "); name[a[1]] = a[2] }
      match($0, /^[0-9]+: /) { k = substr($0, 1, RLENGTH - 2); if (k in name) print substr($0, RLENGTH + 1) > (out "/" name[k] ".log") }
    ' "$OUT/ctest.txt"
    grep -E "^(FAIL|FATAL)" "$OUT"/gpu_*.log 2>/dev/null | head -20
  fi
fi

BIN="$BUILD/gpu_bench"
for s in $BENCHES; do
  [ "$s" = none ] && continue
  args="$s"
  [ "$s" = msm ] && args="msm ${MSM_MAX_LOG:-26}"
  [ "$s" = engine ] && args="engine ${ENGINE_MAX_LOG:-22}"
  start=$(date +%s)
  timeout "${SECTION_TIMEOUT:-400}" "$BIN" $args >"$OUT/$s.log" 2>&1
  rc=$?
  [ $rc -ne 0 ] && status=1
  echo "== $s: exit $rc in $(( $(date +%s) - start ))s"
  grep -E "^(FAIL|FATAL)" "$OUT/$s.log" | head -20
done

# GPU proofs through the real CLI (TypeScript on Deno, the CUDA backend), one per committed
# fixture, written as $OUT/proofs/<curve>_<name>.{proof,public}.json for `snarkjs groth16 verify` on a machine
# that has Node (bench/gpu/verify-proofs.mjs). Needs deno on PATH, or staged in .gpu/ by
# ../shared/tools/gpu-bundle (unpacked here).
if ! command -v deno >/dev/null 2>&1 && [ -f .gpu/unpack.sh ] && [ "${CLI:-1}" = 1 ]; then . .gpu/unpack.sh; fi
if [ "${CLI:-1}" = 1 ] && command -v deno >/dev/null 2>&1 && [ -f "$BUILD/libcuzk.so" ]; then
  start=$(date +%s)
  n=0; bad=0
  for dir in tests/fixtures/bn254/* tests/fixtures/bls12_381/*; do
    [ -f "$dir/circuit.zkey" ] && [ -f "$dir/witness.wtns" ] || continue
    o="$OUT/proofs/$(echo "${dir#tests/fixtures/}" | tr / _)"  # flat: $OUT keeps shallow folders only
    mkdir -p "$OUT/proofs"
    if CUZK_LIB="$BUILD/libcuzk.so" deno run -A cli.ts prove "$dir/circuit.zkey" "$dir/witness.wtns" \
        "$o.proof.json" "$o.public.json" --backend cuda --self-check --json-timings "$o.timings.json" --timeline "$o.svg" \
        >"$o.log" 2>&1; then n=$((n + 1)); else bad=$((bad + 1)); status=1; echo "FAIL cli prove $dir"; tail -3 "$o.log"; fi
  done
  echo "== cli: $n GPU proofs through the CLI, $bad failed, in $(( $(date +%s) - start ))s"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$OUT/gpu.txt" 2>&1 || true

# The table: each test's outcome, the summary lines of every section, then every RESULT line
# with the sppark-on-H200 target where there is one.
echo
echo "GPU: $(head -2 "$OUT/gpu.txt" | tail -1)"
[ -f "$OUT/ctest.txt" ] && grep -E "Test +#[0-9]+: |tests passed|tests failed" "$OUT/ctest.txt" | sed 's/^ */  /'
logs=$(ls "$OUT"/*.log 2>/dev/null)
[ -n "$logs" ] && cat $logs | grep -E "^(SECTION|SKIP|e2e|engine|ntt-check .* WRONG|msm-check .* 0/)" | sed 's/^/  /'
printf "%-44s %10s %10s\n" "benchmark (median, inputs on the GPU)" "ms" "target"
[ -n "$logs" ] && cat $logs | grep "^RESULT" | sed 's/^RESULT //' | awk '
  BEGIN {
    t["msm bls12-381 G1 2^24"] = 150; t["msm bn254 G1 2^24"] = 79; t["msm bls12-381 G2 2^24"] = 447;
    t["ntt bls12-381 2^27 fwd nat"] = 42; t["msm bls12-381 G1 2^24 99%01"] = 33;
    t["msm bls12-381 G1 2^20"] = 21.4; t["msm bls12-381 G1 2^22"] = 52.2; t["msm bls12-381 G1 2^26"] = 555.2;
    t["msm bn254 G1 2^20"] = 12.5; t["msm bn254 G1 2^22"] = 26.8; t["msm bn254 G1 2^26"] = 275.5;
    t["msm bls12-381 G2 2^20"] = 48.5; t["ntt bls12-381 2^24 fwd nat"] = 4.4;
  }
  { unit = $NF; v = $(NF-1); $NF = ""; $(NF-1) = ""; sub(/ +$/, ""); name = $0;
    printf "%-44s %10.2f %10s\n", name, v, (name in t) ? t[name] : "" }'
exit $status
