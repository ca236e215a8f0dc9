#!/usr/bin/env bash
# Packs what bench/gpu/run.sh needs from a CUDA build folder (gpu_tests and ctest's test lists,
# gpu_bench, libcuzk.so for the CLI proofs) into one xz archive, small enough to carry to a GPU
# host (the binaries hold the library's device code: ~35 MB each, ~4x smaller compressed). On the
# GPU host, run.sh unpacks it when the build folder itself is missing.
#
#   bench/gpu/pack.sh [build-dir]     writes build-carry/<build-dir name>.tar.xz (git-ignored)
set -eu
BUILD=${1:-build-cuda}
BUILD=${BUILD%/}
[ -x "$BUILD/native/tests/gpu_tests" ] && [ -x "$BUILD/gpu_bench" ] ||
  { echo "pack.sh: $BUILD has no gpu_tests or gpu_bench: cmake --build $BUILD --target gpu_tests gpu_bench cuzk" >&2; exit 2; }
[ ! -d .git ] || grep -qx '/build-carry/' .git/info/exclude || echo '/build-carry/' >> .git/info/exclude
mkdir -p build-carry
out="build-carry/$(basename "$BUILD").tar.xz"
# paths inside the archive are relative to the build folder: run.sh unpacks into its own
files=$(cd "$BUILD" && find . -name CTestTestfile.cmake && echo ./native/tests/gpu_tests ./gpu_bench &&
  { [ ! -f libcuzk.so ] || echo ./libcuzk.so; })
tar -C "$BUILD" -cf - $files | xz -T0 -6 > "$out"
echo "packed $(echo $files | wc -w) files of $BUILD into $out ($(du -m "$out" | cut -f1) MiB): carry build-carry"
