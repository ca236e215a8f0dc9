#!/usr/bin/env bash
# GPU checks and benchmarks on a GPU host, in one go: uses the carried build (build-cuda/gpu_bench)
# or builds it, runs every section of gpu_bench as its own process (a fault in one leaves the
# others' results), writes the logs under $OUT (default ./gpu-out) and prints a short table last.
#
#   bench/gpu/run.sh [build-dir]          SECTIONS="field msm-check ntt e2e msm" by default
#   MSM_MAX_LOG=24 SECTIONS="msm" bench/gpu/run.sh
#   GPU_BENCH_SWEEP=1: also time every window size at 2^22 and 2^24 (tuning)
set -u
BUILD=${1:-build-cuda}
OUT=${OUT:-$PWD/gpu-out}
SECTIONS=${SECTIONS:-"field msm-check ntt e2e engine msm"}
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
for s in $SECTIONS; do
  args="$s"
  [ "$s" = msm ] && args="msm ${MSM_MAX_LOG:-26}"
  [ "$s" = engine ] && args="engine ${ENGINE_MAX_LOG:-22}"
  start=$(date +%s.%N)
  timeout "${SECTION_TIMEOUT:-400}" "$BIN" $args >"$OUT/$s.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - ${start%.*} ))
  [ $rc -ne 0 ] && status=1
  echo "== $s: exit $rc in ${secs}s"
  grep -E "^(FAIL|FATAL)" "$OUT/$s.log" | head -20
done
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
