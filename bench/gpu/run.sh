#!/usr/bin/env bash
# GPU checks and benchmarks on a GPU host, in one go: uses the carried build (build-cuda/gpu_bench)
# or builds it, runs every section of gpu_bench as its own process (a fault in one leaves the
# others' results), writes the logs under $OUT (default ./gpu-out) and prints a short table last.
#
#   bench/gpu/run.sh [build-dir]          SECTIONS="field msm-check ntt e2e e2e-stream engine msm" by default
#   MSM_MAX_LOG=24 SECTIONS="msm" bench/gpu/run.sh
#   GPU_BENCH_SWEEP=1: also time every window size at 2^22 and 2^24 (tuning)
set -u
BUILD=${1:-build-cuda}
OUT=${OUT:-$PWD/gpu-out}
SECTIONS=${SECTIONS:-"field msm-check ntt e2e e2e-stream engine msm"}
mkdir -p "$OUT"
BIN="$BUILD/gpu_bench"
if [ ! -x "$BIN" ]; then
  echo "building $BIN"
  cmake -S . -B "$BUILD" -DCUZK_CUDA=ON -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build "$BUILD" -j"$(nproc)" --target gpu_bench >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total,temperature.gpu --format=csv \
  >"$OUT/gpu.txt" 2>&1 || true
cat "$OUT/gpu.txt"

status=0
# one process per GPU first: each must leave its work on its own device only
if [ "${DEVICES:-1}" = 1 ]; then
  for d in $(seq 0 $(( $(nvidia-smi -L 2>/dev/null | wc -l) - 1 ))); do
    timeout 120 "$BIN" device "$d" >"$OUT/device$d.log" 2>&1 || status=1
    grep -E "^(device|FAIL)" "$OUT/device$d.log"
  done
fi
for s in $SECTIONS; do
  args="$s"
  [ "$s" = msm ] && args="msm ${MSM_MAX_LOG:-26}"
  [ "$s" = engine ] && args="engine ${ENGINE_MAX_LOG:-22}"
  start=$(date +%s.%N)
  envs=()
  # e2e-stream: the e2e proofs with the key's points streamed in per MSM instead of resident
  [ "$s" = e2e-stream ] && { args="e2e"; envs=(CUZK_GPU_STREAM=1); }
  env ${envs[@]+"${envs[@]}"} timeout "${SECTION_TIMEOUT:-400}" "$BIN" $args >"$OUT/$s.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - ${start%.*} ))
  [ $rc -ne 0 ] && status=1
  echo "== $s: exit $rc in ${secs}s"
  grep -E "^(FAIL|FATAL)" "$OUT/$s.log" | head -20
done
# GPU proofs through the real CLI (TypeScript on Deno, the CUDA backend), one per committed
# fixture, written as $OUT/proofs/<curve>_<name>.{proof,public}.json for `snarkjs groth16 verify` on a machine
# that has Node (bench/gpu/verify-proofs.mjs). Needs deno on PATH (../shared/tools/gpu-bundle).
if command -v deno >/dev/null 2>&1 && [ -f "$BUILD/libcuzk.so" ]; then
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

# The table: every RESULT line, with the sppark-on-H200 target where there is one.
echo
echo "GPU: $(head -2 "$OUT/gpu.txt" | tail -1)"
cat "$OUT"/*.log | grep -E "^(SECTION|e2e|engine|ntt-check .* WRONG|msm-check .* 0/)" | sed 's/^/  /'
printf "%-44s %10s %10s\n" "benchmark (median, inputs on the GPU)" "ms" "target"
cat "$OUT"/*.log | grep "^RESULT" | sed 's/^RESULT //' | awk '
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
