#!/usr/bin/env bash
# Issue 17 item 1 on a GPU host: MSMs over precomputed copies of the key points. Run from the
# working tree's copy (repo root) with the binaries built on the dev VM (sm_90, build-gpu6)
# carried xz'd: .gpu/h17-gpu_tests.xz .gpu/h17-gpu_bench.xz (and .gpu/h17-libcuzk.so.xz for
# `digests`).
#   bench/gpu/precompute.sh [tests] [bench] [engine] [digests]    (tests bench when none is named)
#     tests    gpu_tests msm_copies (t = 2, 3, 4, max against the discrete-log reference, all four
#              groups); msm (the plain path, MSM_CHECK_MAX_LOG=${MSM_CHECK_MAX_LOG:-20}); engine
#              (GPU sums = CPU sums at 2^16: H copies auto, and forced to 3); e2e with copies forced
#              (CUZK_GPU_PRECOMPUTE=4) and by default (every fixture byte-identical to the CPU)
#     bench    gpu_bench msm-precompute ${PRE_MAX_LOG:-26}: the table last
#     engine   gpu_bench engine ${ENGINE_MAX_LOG:-25}: proofs with and without the H copies
#     digests  the fixtures' CUDA proof digests with copies forced, against .gpu/baseline-digests.txt
# Logs under $OUT.
set -u
OUT=${OUT:-/tmp/precompute-out}
GPU_TEST_TIMEOUT=${GPU_TEST_TIMEOUT:-150}
. "$(dirname "$0")/carried.sh"
carried_setup h17
for part in ${*:-tests bench}; do case $part in
tests)
  gpu_test msm_copies msm_copies
  gpu_test msm msm MSM_CHECK_MAX_LOG=${MSM_CHECK_MAX_LOG:-20}
  gpu_test engine engine CUZK_KERNEL_TRACE=1
  grep "TRACE msm_h copies" "$OUT/gpu-engine.txt"
  gpu_test engine-copies3 engine CUZK_GPU_PRECOMPUTE=3
  gpu_test e2e-copies4 e2e CUZK_GPU_PRECOMPUTE=4
  gpu_test e2e e2e ;;
bench)
  start=$(date +%s)
  timeout ${PRE_TIMEOUT:-330} build-h17/gpu_bench msm-precompute ${PRE_MAX_LOG:-26} > "$OUT/bench-precompute.txt" 2>&1
  echo "gpu_bench msm-precompute exit $? in $(( $(date +%s) - start )) s; $(grep -c '^RESULT' "$OUT/bench-precompute.txt") results"
  grep -E "^FAIL|WRONG|skipped|^TRACE" "$OUT/bench-precompute.txt"
  grep "^TABLE" "$OUT/bench-precompute.txt" ;;
engine)
  start=$(date +%s)
  env -u CUZK_KERNEL_TRACE timeout ${ENGINE_TIMEOUT:-400} build-h17/gpu_bench engine ${ENGINE_MAX_LOG:-25} > "$OUT/bench-engine.txt" 2>&1
  echo "gpu_bench engine exit $? in $(( $(date +%s) - start )) s"
  grep -E "^FAIL|ms/proof" "$OUT/bench-engine.txt" ;;
digests)
  mkdir -p build-h17/lib
  xz -dc .gpu/h17-libcuzk.so.xz > build-h17/lib/libcuzk.so || exit 2
  cc -O2 -o /tmp/pd tools/proof_digest/proof_digest.c -ldl
  dirs=$(ls -d tests/fixtures/*/*/ | sed 's:/$::')
  CUZK_GPU_PRECOMPUTE=4 /tmp/pd $PWD/build-h17/lib/libcuzk.so cuda $dirs > "$OUT/digests-cuda-copies4.txt"
  echo "digest cuda (copies 4) exit $?"
  cmp "$OUT/digests-cuda-copies4.txt" .gpu/baseline-digests.txt &&
    echo "cuda proofs with H copies of $(wc -l < "$OUT/digests-cuda-copies4.txt") fixtures byte-identical to fb79055" ;;
*) echo "precompute.sh: unknown part '$part' (tests, bench, engine, digests)"; exit 2 ;;
esac; done
