#!/usr/bin/env bash
# Issue 17 item 2 on a GPU host: the batch-affine bucket accumulation (cuda/msm_affine.cuh), checks
# first, then the A/B against the XYZZ walk. Run from the working tree's copy (repo root) with the
# binaries built on the dev VM (sm_90) carried xz'd:
#   cmake --build build-cuda --target gpu_tests gpu_bench -j2 && mkdir -p .gpu &&
#   xz -T0 -6 -c build-cuda/native/tests/gpu_tests > .gpu/affine-gpu_tests.xz &&
#   xz -T0 -6 -c build-cuda/gpu_bench > .gpu/affine-gpu_bench.xz        (then carry .gpu)
#
#   bench/gpu/affine.sh [tests] [bench]    (both when none is named)
#     tests    gpu_tests msm_affine (all four groups: levels 1/2/4/auto, per-thread slots, slabs,
#              copies, the overflow fallback, against the discrete-log reference); then with
#              CUZK_GPU_MSM_ACCUMULATE=affine for every MSM: msm (to 2^${MSM_CHECK_MAX_LOG:-20}),
#              msm_copies, engine (GPU sums = CPU sums) and e2e (every fixture's proof
#              byte-identical to the CPU's, self-checked)
#     bench    gpu_bench msm-affine ${AFFINE_MAX_LOG:-24}: xyzz against affine alternated, the table last
# Logs under $OUT.
set -u
OUT=${OUT:-/tmp/affine-out}
mkdir -p build-affine "$OUT"
# unpacked every time: a warm GPU host keeps build-affine/ from an earlier run's binaries
for b in gpu_tests gpu_bench; do
  [ ! -f .gpu/affine-$b.xz ] || { xz -dc .gpu/affine-$b.xz > build-affine/$b && chmod +x build-affine/$b; } || exit 2
done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
gpu_test() {  # gpu_test <log name> <test> [VAR=value ...]
  local log=$1 t=$2
  shift 2
  (cd build-affine && env "$@" CUZK_GPU_REQUIRED=1 timeout 200 ./gpu_tests $t > "$OUT/gpu-$log.txt" 2>&1)
  echo "gpu_tests $log exit $? $(tail -1 "$OUT/gpu-$log.txt")"
  grep -E "^FAIL|wrong|WRONG" "$OUT/gpu-$log.txt" | head -10
}
for part in ${*:-tests bench}; do case $part in
tests)
  gpu_test msm_affine msm_affine
  grep "^msm-affine" "$OUT/gpu-msm_affine.txt"
  gpu_test msm-affine msm CUZK_GPU_MSM_ACCUMULATE=affine MSM_CHECK_MAX_LOG=${MSM_CHECK_MAX_LOG:-20}
  gpu_test msm_copies-affine msm_copies CUZK_GPU_MSM_ACCUMULATE=affine
  gpu_test engine-affine engine CUZK_GPU_MSM_ACCUMULATE=affine
  gpu_test e2e-affine e2e CUZK_GPU_MSM_ACCUMULATE=affine ;;
bench)
  start=$(date +%s)
  timeout ${AFFINE_TIMEOUT:-330} build-affine/gpu_bench msm-affine ${AFFINE_MAX_LOG:-24} > "$OUT/bench-affine.txt" 2>&1
  echo "gpu_bench msm-affine exit $? in $(( $(date +%s) - start )) s; $(grep -c '^RESULT' "$OUT/bench-affine.txt") results"
  grep -E "^FAIL|WRONG|^TRACE" "$OUT/bench-affine.txt"
  grep "^TABLE" "$OUT/bench-affine.txt" ;;
*) echo "affine.sh: unknown part '$part' (tests, bench)"; exit 2 ;;
esac; done
