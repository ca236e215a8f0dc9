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
GPU_TEST_TIMEOUT=${GPU_TEST_TIMEOUT:-200}
. "$(dirname "$0")/carried.sh"
carried_setup affine
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
