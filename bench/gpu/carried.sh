# Sourced by the issue scripts (precompute.sh, affine.sh) on a GPU host: unpacks the binaries carried
# xz'd as .gpu/<tag>-gpu_tests.xz and .gpu/<tag>-gpu_bench.xz into build-<tag>/ (every time: a
# warm host keeps an earlier run's), names the GPU, and defines gpu_test.
#   carried_setup <tag>
#   gpu_test <log name> <test> [VAR=value ...]   runs build-<tag>/gpu_tests <test>, log in $OUT
carried_setup() {
  CARRIED=build-$1
  mkdir -p "$CARRIED" "$OUT"
  for b in gpu_tests gpu_bench; do
    [ ! -f .gpu/$1-$b.xz ] || { xz -dc .gpu/$1-$b.xz > "$CARRIED/$b" && chmod +x "$CARRIED/$b"; } || exit 2
  done
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
}
gpu_test() {
  local log=$1 t=$2
  shift 2
  (cd "$CARRIED" && env "$@" CUZK_GPU_REQUIRED=1 timeout ${GPU_TEST_TIMEOUT:-200} ./gpu_tests $t > "$OUT/gpu-$log.txt" 2>&1)
  echo "gpu_tests $log exit $? $(tail -1 "$OUT/gpu-$log.txt")"
  grep -E "^FAIL|wrong|WRONG" "$OUT/gpu-$log.txt" | head -10
}
