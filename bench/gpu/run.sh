#!/usr/bin/env bash
# The one driver for GPU work: checks, benchmarks and whole proofs on a GPU host, and the packing of
# a build to carry there. Run from anywhere; it works in the repository root. Each section runs as
# its own process(es) with a time limit, its logs under the out folder; a failing section marks the
# run failed and the others still run. Exit status: 0 all passed, 1 something failed, 2 a usage
# error or a missing precondition (no GPU, no build, no deno), said before anything runs.
#
#   bench/gpu/run.sh [--build DIR] [--out DIR] [section...]
#       no section: tests msm ntt engine, and cli where there is a deno
#   bench/gpu/run.sh --help
#
# On the dev machine (no GPU needed):
#   pack[:lean]       packs what the GPU sections need from the build folder (gpu_tests, ctest's
#                     test lists, gpu_bench, libcuzk.so) into build-carry/<build name>.tar.xz
#                     (git-ignored). Carry build-carry/; on the GPU host a missing build folder is
#                     unpacked from it. pack:lean leaves gpu_bench out. Build the carried folder
#                     for the GPU it runs on only (-DCUZK_CUDA_ARCHITECTURES=90-real for H100/H200):
#                     the full pack is then ~35 MiB, the library alone (xz) ~11 MiB, which fits a
#                     call's 64 MiB beside .gpu/deno.xz and the tree for the TypeScript runs.
# On a GPU host:
#   tests[:a,b]       the GPU tests, `ctest -L gpu` (native/tests/gpu, one process each, so a fault in
#                     one leaves the others' results); `tests:e2e,msm` only gpu_e2e_test,
#                     gpu_e2e_stream_test and gpu_msm_test. One log per test: $OUT/gpu_<name>_test.log
#   msm[:max_log]     the gpu_bench sections (bench/gpu/gpu_bench.cu), each its own process, log
#   ntt               $OUT/bench-<section>.log, "RESULT" lines gathered in a table at the end: MSMs
#   ntt-bench[:reps]  on inputs already on the GPU (every result checked), NTTs of both curves, the
#   ntt-one[:log]     BLS12-381 NTTs alone (for A/B runs), one of each transform (for a profiler),
#   engine[:max_log]  whole proofs in the engine on synthetic keys, the development setup's
#   fixed-base        fixed-base batch, MSMs over precomputed copies of the points
#   msm-precompute[:max_log]
#   msm-chunks[:log]  (one MSM whole and in chunks of 2^18/2^20/2^22, each chunk reduced and its partial sums added; traced)
#   msm-windows[:log] (one MSM of 2^log (26) uniform scalars whole and in chunks of 2^22..2^24, at
#                     each window the chooser could take: is its pick the fastest)
#   msm-chunk-copies[:log]  (the same MSM in chunks of 2^23/2^24 over 2..4 precomputed copies of its
#                     points, windows 18..21, against no copies: a streamed H pass with copies)
#   msm-h-proof[:log]  (one proof's H MSM of 2^log (26) in chunks whose buckets are kept across them,
#                     points on the GPU and streamed from pinned host memory: H summed per proof)
#   engine-stream[:log]  (a batch of 4 on a 2^log synthetic key: resident, resident in 4 chunks,
#                     streamed in 4 chunks, for a uniform-rest, a skewed small-value and a
#                     PoRep-profile witness; one streamed batch of each traced)
#   cli               a GPU proof of every committed fixture through the CLI (Deno, --backend cuda,
#                     self-checked): $OUT/proofs/<curve>_<name>.{proof,public}.json, timings, waterfall
#   digests           every fixture's CUDA proof with fixed r, s (tools/proof_digest) compared byte for
#                     byte with the CPU baseline bench/results/refactor-baseline/digests-cpu-fb79055.txt
#   large             for each curve a synthetic PoRep-profile circuit of 2^LARGE_LOG constraints
#                     (cuzk synth), an INSECURE dev key for it (cuzk setup --insecure-dev, all cores),
#                     then LARGE_RUNS proofs through the CLI; proofs and vkeys in $OUT/large/
#   porep[:run,...]   the PoRep-profile workload through bench/gpu/porep_batch.ts (keys made in memory,
#                     INSECURE; nothing of the key on disk), log $OUT/porep-<run>.txt, proofs and vkeys
#                     in $OUT/porep/<run>/. `porep` alone is porep:sanity,p22,p24:
#     porep:sanity    2^16, both curves, a batch of 3 against the same witnesses proved alone (same
#                     r, s): equal proofs, every proof self-checked; catches a broken pipeline in seconds
#     porep:p27       BLS12-381 2^27, batch of 10 (the seed's workload): per-circuit phase medians,
#                     batch wall time, peak GPU memory (nvidia-smi every 100 ms), waterfall. Host: ~80 GB
#                     RSS at peak, ~30 GB of /tmp for the .r1cs (removed once the key is made)
#     porep:p22       both curves 2^22, batch of 10 against single proofs, batch == single proofs
#     porep:p24       BLS12-381 2^24, batch of P24_N against single proofs; waterfall
#     porep:stream    every section streamed (--stream-all; a key made in memory makes a streamed
#                     section's points again for each read): 2^22 batch of 4 against the same witnesses
#                     alone, batches of 10 read once per group against --stream-per-proof, and 2^24
#                     batches of 10 read once per group
#     porep:budgets   bench/gpu/porep_budgets.ts: BLS12-381 2^BUDGETS_LOG (26) batches of 10 under each
#                     budget of BUDGETS (0,48GiB,32GiB,24GiB), BUDGETS_RUNS (2) timed batches each:
#                     the plan, peak device memory, per-circuit time against the first budget's,
#                     proofs with fixed r, s equal across budgets; BUDGETS_N (10) circuits a batch,
#                     BUDGETS_HOST the host memory budget (0: the library's default)
#     porep:scale     several GPUs: 2^24 and 2^26, a batch of SCALE_N on each device set of SCALE_SETS,
#                     2^24 batches compared with single proofs; peak memory per GPU; lanes waterfall
#   ab[:sec[:arg]]    A/B timing of gpu_bench builds on one GPU, runs alternated (A B C A B C ...):
#                     AB="old-build new-build" (build folders, carried packs' names or gpu_bench
#                     binaries), gpu_bench section sec (default ntt-bench:11); prints, per RESULT
#                     name, each build's median over rounds and its ratio to the first's
#
# Proofs written by cli, large and porep are checked on a machine with Node (the GPU host has none):
#   node bench/gpu/verify-proofs.mjs <out dir>
#
# Knobs (environment):
#   BUILD=build-cuda    the CUDA build folder (--build); a missing one is unpacked from
#                       build-carry/<name>.tar.xz, else configured and built when nvcc is there
#   OUT=./gpu-out       the logs (--out)
#   SECTION_TIMEOUT=400 seconds for each test run and gpu_bench section
#   MSM_MAX_LOG=26, ENGINE_MAX_LOG=22, PRE_MAX_LOG=26   default args of msm, engine, msm-precompute
#   DEVICES=0           leave out the per-GPU isolation test (gpu_device_test)
#   MSM_CHECK_MAX_LOG=24, NTT_CHECK_LOG=24, MSM_ONLY, GPU_BENCH_SWEEP=1, CUZK_KERNEL_TRACE=1: read by
#                       the GPU tests and gpu_bench themselves (test sizes, MSM groups, every window
#                       size at 2^22 and 2^24, kernel trace)
#   DIGESTS_BASELINE    the digests file digests compares with (default above)
#   LARGE_LOG=22, LARGE_RUNS=3, LARGE_WORK=/tmp/cuzk-large, LARGE_BACKEND=cuda (cpu: a dry run
#                       without a GPU)
#   POREP_ARGS          extra porep_batch.ts flags for every porep run: the prover's engine settings,
#                       e.g. "--h-copies 0", "--h-copies 8", "--stream-all" (never the environment)
#   P27_RUNS=3, P27_TIMEOUT=520, P24_N=4, SCALE_N=8, SCALE_SETS="0 0,1"   porep sizes and limits
#   AB, AB_ROUNDS=3, AB_TIMEOUT=300   ab's builds, rounds, seconds per run
#   REQUIRE_GPU=0       skip the check that nvidia-smi lists a GPU (a host without nvidia-smi)
# Needs on the GPU host: ctest (tests), deno on PATH or staged in .gpu/ by ../shared/tools/gpu-bundle
# (cli, large, porep), cc (digests), xz or python3 (unpacking a carried build).
set -u

usage() { sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "$0"; }
die() { echo "run.sh: $*" >&2; exit 2; }
HERE=$PWD  # relative --build, --out and AB paths are taken from where the script was started
abspath() { case $1 in /*) echo "${1%/}" ;; *) echo "$HERE/${1%/}" ;; esac; }

BUILD=${BUILD:-}
OUT=${OUT:-}
sections=()
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    -b | --build) [ $# -ge 2 ] || die "$1 needs a folder"; BUILD=$2; shift ;;
    -o | --out) [ $# -ge 2 ] || die "$1 needs a folder"; OUT=$2; shift ;;
    --build=*) BUILD=${1#*=} ;;
    --out=*) OUT=${1#*=} ;;
    -*) die "unknown option $1 (--help)" ;;
    *) sections+=("$1") ;;
  esac
  shift
done
if [ ${#sections[@]} -eq 0 ]; then
  sections=(tests msm ntt engine)
  { command -v deno || [ -f "$(dirname "$0")/../../.gpu/unpack.sh" ]; } >/dev/null 2>&1 && sections+=(cli)
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(abspath "${OUT:-gpu-out}")
if [ -n "$BUILD" ]; then BUILD=$(abspath "$BUILD"); else BUILD=$ROOT/build-cuda; fi
cd "$ROOT" || exit 2
PACK="$ROOT/build-carry/$(basename "$BUILD").tar.xz"
LARGE_BACKEND=${LARGE_BACKEND:-cuda}
SECTION_TIMEOUT=${SECTION_TIMEOUT:-400}
status=0

# ---------------------------------------------------------------------------------------------
# What each section needs, checked for all of them before any runs: a GPU section on a machine
# without one stops here with a message instead of building for minutes or waiting on a device.
# ---------------------------------------------------------------------------------------------
BENCH_SECTIONS="msm ntt ntt-bench ntt-one engine engine-stream fixed-base msm-precompute msm-chunks msm-windows msm-chunk-copies msm-h-proof msm-acc"
POREP_RUNS="sanity p27 p22 p24 stream scale budgets"
need_gpu=0 need_tests=0 need_bench=0 need_lib=0 need_deno=0
for s in "${sections[@]}"; do
  name=${s%%:*} arg=${s#"$name"}; arg=${arg#:}
  case $name in
    pack)
      [ -x "$BUILD/native/tests/gpu_tests" ] ||
        die "pack: $BUILD has no gpu_tests: cmake --build $BUILD --target gpu_tests gpu_bench cuzk" ;;
    tests) need_gpu=1 need_tests=1 ;;
    cli) need_gpu=1 need_lib=1 need_deno=1 ;;
    digests) need_gpu=1 need_lib=1 ;;
    large) need_lib=1 need_deno=1; [ "$LARGE_BACKEND" = cpu ] || need_gpu=1 ;;
    porep)
      for r in ${arg//,/ }; do case " $POREP_RUNS " in *" $r "*) ;; *) die "unknown porep run '$r' ($POREP_RUNS)" ;; esac; done
      need_gpu=1 need_lib=1 need_deno=1 ;;
    ab)
      [ -z "$arg" ] || case " $BENCH_SECTIONS " in *" ${arg%%:*} "*) ;; *) die "ab: unknown gpu_bench section '${arg%%:*}'" ;; esac
      need_gpu=1; [ "$(echo "${AB:-}" | wc -w)" -ge 2 ] || die "ab needs AB=\"build-a build-b ...\" (two or more)" ;;
    *)
      case " $BENCH_SECTIONS " in *" $name "*) need_gpu=1 need_bench=1 ;; *) die "unknown section '$s' (--help lists them)" ;; esac ;;
  esac
done

if [ $need_gpu = 1 ] && [ "${REQUIRE_GPU:-1}" = 1 ]; then
  command -v nvidia-smi >/dev/null 2>&1 || die "no nvidia-smi here, so no NVIDIA GPU: sections ${sections[*]} need a GPU host (pack a build here with 'bench/gpu/run.sh pack'; REQUIRE_GPU=0 skips this check)"
  gpus=$(timeout 30 nvidia-smi -L 2>&1) || die "nvidia-smi -L failed or hung (30 s): ${gpus:-no output}"
  echo "$gpus" | grep -q '^GPU ' || die "nvidia-smi lists no GPU: $gpus"
fi
case "${sections[*]}" in pack | pack:*) ;; *) mkdir -p "$OUT" || die "cannot make $OUT" ;; esac

# A build carried as build-carry/<name>.tar.xz (section pack) is unpacked where the folder is
# missing; its tests run from their own folder, wherever it now lies.
unpack() {
  local dir=$1 pack
  pack="$ROOT/build-carry/$(basename "$dir").tar.xz"
  [ -f "$pack" ] || return 1
  echo "unpacking $pack into $dir"
  mkdir -p "$dir"
  if command -v xz >/dev/null 2>&1; then xz -dc "$pack" | tar -C "$dir" -xf -
  else python3 -c "import lzma,sys,tarfile; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2])" "$pack" "$dir"; fi
}
missing=()
[ $need_tests = 1 ] && [ ! -x "$BUILD/native/tests/gpu_tests" ] && missing+=(native/tests/gpu_tests)
[ $need_bench = 1 ] && [ ! -x "$BUILD/gpu_bench" ] && missing+=(gpu_bench)
[ $need_lib = 1 ] && [ ! -f "$BUILD/libcuzk.so" ] && [ -z "${CUZK_LIB:-}" ] && missing+=(libcuzk.so)
if [ ${#missing[@]} -gt 0 ]; then
  unpack "$BUILD" || true
  still=(); for f in "${missing[@]}"; do [ -e "$BUILD/$f" ] || still+=("$f"); done
  if [ ${#still[@]} -gt 0 ]; then
    command -v nvcc >/dev/null 2>&1 && command -v cmake >/dev/null 2>&1 ||
      die "$BUILD lacks ${still[*]} and there is no build-carry/$(basename "$BUILD").tar.xz nor nvcc to build it: pack one on the dev machine (bench/gpu/run.sh --build DIR pack) and carry build-carry/"
    echo "building $BUILD (log: $OUT/build.txt)"
    { cmake -S . -B "$BUILD" -DCUZK_CUDA=ON -DCUZK_TESTS=ON -DCMAKE_BUILD_TYPE=Release &&
      cmake --build "$BUILD" -j"$(nproc)" --target gpu_tests gpu_bench cuzk; } >"$OUT/build.txt" 2>&1 ||
      { tail -30 "$OUT/build.txt"; die "the build of $BUILD failed"; }
  fi
fi
export CUZK_LIB=${CUZK_LIB:-$BUILD/libcuzk.so}  # the TypeScript side's library (cli, large, porep)
if [ $need_deno = 1 ] && ! command -v deno >/dev/null 2>&1; then
  [ -f .gpu/unpack.sh ] && . .gpu/unpack.sh
  command -v deno >/dev/null 2>&1 || die "no deno on PATH (stage one with ../shared/tools/gpu-bundle into .gpu/)"
fi

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------
# step <label> <seconds> <log> <command...>: runs the command under a time limit with its output in
# the log, prints its exit status and time; a failure marks the run failed. Returns the exit status.
step() {
  local label=$1 limit=$2 log=$3 start rc
  shift 3
  start=$(date +%s)
  timeout -k 10 "$limit" "$@" >"$log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || status=1
  [ $rc -eq 124 ] && label="$label (timed out at ${limit} s)"
  echo "== $label: exit $rc in $(( $(date +%s) - start )) s"
  return $rc
}
# GPU memory sampled every 100 ms while a long run goes on; the peak (per GPU) printed after it.
smi_pid=""
smi_start() { nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 100 >"$OUT/$1-gpumem.csv" 2>/dev/null & smi_pid=$!; }
smi_stop() {
  [ -n "$smi_pid" ] && kill "$smi_pid" 2>/dev/null; smi_pid=""
  echo "$1: peak GPU memory used (nvidia-smi, MiB per GPU): $(sort -t, -k1,1n -k2,2n "$OUT/$1-gpumem.csv" |
    awk -F', ' '{ m[$1] = $2 } END { for (g in m) printf "%s:%s ", g, m[g] }')"
}
trap '[ -n "$smi_pid" ] && kill "$smi_pid" 2>/dev/null' EXIT
gpu_info() {
  command -v nvidia-smi >/dev/null 2>&1 || { echo "(no nvidia-smi)"; return; }
  timeout 30 nvidia-smi --query-gpu="$1" --format=csv,noheader 2>&1 || true
}

# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------
section_pack() {
  mkdir -p build-carry
  # paths inside the archive are relative to the build folder: unpack() puts them in its own
  local files
  # gpu_bench where the build has it (a CI-style build leaves it out: CUZK_GPU_BENCH=OFF), unless lean
  local bench=1
  [ "$1" = lean ] && bench=0
  mapfile -t files < <(cd "$BUILD" && find . -name CTestTestfile.cmake && echo ./native/tests/gpu_tests &&
    { [ $bench = 0 ] || [ ! -x gpu_bench ] || echo ./gpu_bench; } && { [ ! -f libcuzk.so ] || echo ./libcuzk.so; })
  tar -C "$BUILD" -cf - "${files[@]}" | xz -T0 -6 >"$PACK" || { echo "FAIL pack: tar | xz"; status=1; return; }
  echo "== pack: ${#files[@]} files of $BUILD into $PACK ($(du -m "$PACK" | cut -f1) MiB): carry build-carry/"
}

# On a GPU host a test that finds no GPU fails (CUZK_GPU_REQUIRED) instead of reporting "skipped".
section_tests() {
  command -v ctest >/dev/null 2>&1 || { echo "FAIL tests: no ctest on PATH"; status=1; return; }
  local filter=()
  [ -n "$1" ] && filter=(-R "^gpu_($(echo "$1" | tr , '|'))(_stream)?_test\$")
  [ "${DEVICES:-1}" = 1 ] || filter+=(-E '^gpu_device_test$')
  local log="$OUT/ctest${1:+-${1//,/-}}.txt"
  CUZK_GPU_REQUIRED=1 step "tests (ctest -L gpu${1:+ $1})" $(( SECTION_TIMEOUT * 12 )) "$log" \
    ctest --test-dir "$BUILD" -L gpu "${filter[@]}" -V --no-tests=error --timeout "$SECTION_TIMEOUT"
  # one log per test: ctest -V prefixes each line of test N's output "N: "
  awk -v out="$OUT" '
    match($0, /^ *Start +[0-9]+: /) { n = $0; sub(/^ *Start +/, "", n); split(n, a, ": "); name[a[1]] = a[2] }
    match($0, /^[0-9]+: /) { k = substr($0, 1, RLENGTH - 2); if (k in name) print substr($0, RLENGTH + 1) > (out "/" name[k] ".log") }
  ' "$log"
  sed -n '/tests FAILED:/,$p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' | sed 's/^[[:space:]]*/FAIL test /'
  grep -hE "^(FAIL|FATAL)" "$OUT"/gpu_*.log 2>/dev/null | head -20
}

section_bench() {
  local name=$1 arg=$2
  case $name in
    msm) arg=${arg:-${MSM_MAX_LOG:-26}} ;;
    engine) arg=${arg:-${ENGINE_MAX_LOG:-22}} ;;
    msm-precompute) arg=${arg:-${PRE_MAX_LOG:-26}} ;;
  esac
  step "bench $name${arg:+ $arg}" "$SECTION_TIMEOUT" "$OUT/bench-$name.log" "$BUILD/gpu_bench" "$name" ${arg:+"$arg"}
  grep -E "^(FAIL|FATAL)" "$OUT/bench-$name.log" | head -20
}

# Written flat ($OUT keeps shallow folders) for bench/gpu/verify-proofs.mjs.
section_cli() {
  local dir o n=0 bad=0 start
  start=$(date +%s)
  mkdir -p "$OUT/proofs"
  for dir in tests/fixtures/bn254/* tests/fixtures/bls12_381/*; do
    [ -f "$dir/circuit.zkey" ] && [ -f "$dir/witness.wtns" ] || continue
    o="$OUT/proofs/$(echo "${dir#tests/fixtures/}" | tr / _)"
    if timeout -k 10 120 deno run -A cli.ts prove "$dir/circuit.zkey" "$dir/witness.wtns" "$o.proof.json" "$o.public.json" \
        --backend cuda --self-check --json-timings "$o.timings.json" --timeline "$o.svg" >"$o.log" 2>&1; then
      n=$((n + 1))
    else bad=$((bad + 1)); status=1; echo "FAIL cli prove $dir"; tail -3 "$o.log"; fi
  done
  echo "== cli: $n GPU proofs through the CLI, $bad failed, in $(( $(date +%s) - start )) s"
}

section_digests() {
  local baseline=${DIGESTS_BASELINE:-bench/results/refactor-baseline/digests-cpu-fb79055.txt}
  cc -O2 -o "$OUT/proof_digest" tools/proof_digest/proof_digest.c -ldl || { echo "FAIL digests: cc"; status=1; return; }
  local dirs=(tests/fixtures/*/*/)
  step "digests (cuda)" "$SECTION_TIMEOUT" "$OUT/digests-cuda.txt" "$OUT/proof_digest" "$CUZK_LIB" cuda "${dirs[@]%/}" || return
  if cmp -s <(sort "$OUT/digests-cuda.txt") <(sort "$baseline"); then
    echo "digests: the CUDA proofs of $(wc -l <"$baseline") fixtures byte-identical to $baseline"
  else
    status=1; echo "FAIL digests: CUDA proofs differ from $baseline:"; diff "$baseline" "$OUT/digests-cuda.txt" | cut -c1-80 | head -10
  fi
}

section_large() {
  local log=${LARGE_LOG:-22} work=${LARGE_WORK:-/tmp/cuzk-large} curve w o t0 r
  mkdir -p "$OUT/large" "$work"
  # 2^log rows less room for the public-input rows, so that the domain stays 2^log
  local constraints=$(( (1 << log) - 16 ))
  for curve in bn254 bls12_381; do
    w="$work/${curve}_$log" o="$OUT/large/${curve}_$log" t0=$(date +%s)
    step "large $curve 2^$log synth" 1800 "$o.synth.log" deno run -A cli.ts synth "$w.r1cs" "$w.wtns" \
      --constraints "$constraints" --curve "$curve" --profile porep --public 4 || { tail -3 "$o.synth.log"; continue; }
    step "large $curve 2^$log setup on $(nproc) cores" 3600 "$o.setup.log" deno run -A cli.ts setup --insecure-dev \
      "$w.r1cs" "$w.zkey" "$o.vkey.json" || { tail -3 "$o.setup.log"; continue; }
    echo "large $curve 2^$log: key $(du -h "$w.zkey" | cut -f1), synth + setup $(( $(date +%s) - t0 )) s"
    for r in $(seq 1 "${LARGE_RUNS:-3}"); do
      if step "large $curve 2^$log $LARGE_BACKEND proof $r (whole CLI process)" 600 "$o.prove-$r.log" \
          deno run -A cli.ts prove "$w.zkey" "$w.wtns" "$o.proof.json" "$o.public.json" --backend "$LARGE_BACKEND" \
          --self-check --timings --json-timings "$o.timings-$r.json" --timeline "$o.waterfall.svg"; then
        cat "$o.prove-$r.log"
      else tail -5 "$o.prove-$r.log"; fi
    done
    rm -f "$w.zkey" "$w.r1cs" "$w.wtns"
  done
}

# porep <label> <seconds> <args...>: one porep_batch.ts run, log $OUT/porep-<label>.txt
porep() {
  local label=$1 limit=$2
  shift 2
  # shellcheck disable=SC2086  # POREP_ARGS is a list of flags
  step "porep $label" "$limit" "$OUT/porep-$label.txt" deno run -A bench/gpu/porep_batch.ts ${POREP_ARGS:-} "$@"
}
porep_table() { grep -E '^\| (batch of|per circuit|one proof|key:|peak)' "$OUT/porep-$1.txt"; }
section_porep() {
  local curve mode set log extra
  case $1 in
  sanity)
    gpu_info name,driver_version,clocks.max.sm,memory.total
    for curve in bls12_381 bn254; do
      porep "sanity-$curve" 120 --log2 16 --curve $curve --n 3 --runs 1 --compare --dir /tmp/porep16 --out "$OUT/porep/s16-$curve"
      grep -E "compare|per circuit" "$OUT/porep-sanity-$curve.txt"
    done ;;
  p27)
    df -h /tmp | tail -1; free -g | head -2
    smi_start porep-p27
    porep p27 "${P27_TIMEOUT:-520}" --log2 27 --curve bls12_381 --n 10 --runs "${P27_RUNS:-3}" --dir /tmp/porep27 \
      --timeline "$OUT/porep-p27.svg"
    smi_stop porep-p27
    tail -32 "$OUT/porep-p27.txt" ;;
  p22)
    for curve in bn254 bls12_381; do
      porep "p22-$curve" 200 --log2 22 --curve $curve --n 10 --runs 3 --single --compare --dir /tmp/porep22 --out "$OUT/porep/p22-$curve"
      tail -11 "$OUT/porep-p22-$curve.txt"
    done ;;
  p24)
    smi_start porep-p24
    porep p24 300 --log2 24 --curve bls12_381 --n "${P24_N:-4}" --runs 5 --single --compare --dir /tmp/porep24 \
      --timeline "$OUT/porep-p24.svg" --out "$OUT/porep/p24"
    smi_stop porep-p24
    tail -24 "$OUT/porep-p24.txt" ;;
  stream)
    porep stream-compare 150 --stream-all --log2 22 --curve bls12_381 --n 4 --runs 1 --compare --dir /tmp/porep22
    grep -E 'compare:' "$OUT/porep-stream-compare.txt"
    porep stream-22-group 150 --stream-all --log2 22 --curve bls12_381 --n 10 --runs 3 --dir /tmp/porep22 \
      --timeline "$OUT/porep-stream-22-group.svg"
    porep stream-22-proof 150 --stream-all --stream-per-proof --log2 22 --curve bls12_381 --n 10 --runs 1 --dir /tmp/porep22 \
      --timeline "$OUT/porep-stream-22-proof.svg"
    for mode in group proof; do porep_table "stream-22-$mode"; done
    smi_start porep-stream-24
    porep stream-24-group 240 --stream-all --log2 24 --curve bls12_381 --n 10 --runs 2 --dir /tmp/porep24 \
      --timeline "$OUT/porep-stream-24-group.svg"
    smi_stop porep-stream-24
    tail -14 "$OUT/porep-stream-24-group.txt" ;;
  scale)
    for log in 24 26; do for set in ${SCALE_SETS:-0 0,1}; do
      extra=""; [ $log = 24 ] && extra="--compare"
      smi_start "porep-scale-$log-$set"
      porep "scale-$log-$set" 400 --log2 $log --curve bls12_381 --n "${SCALE_N:-8}" --runs 3 --devices "$set" $extra \
        --dir /tmp/porep-scale --timeline "$OUT/porep-scale-$log-$set.svg"
      smi_stop "porep-scale-$log-$set"
      porep_table "scale-$log-$set"
    done; done ;;
  budgets)
    free -g | head -2
    smi_start porep-budgets
    step "porep budgets" "${BUDGETS_TIMEOUT:-560}" "$OUT/porep-budgets.txt" deno run -A bench/gpu/porep_budgets.ts \
      --log2 "${BUDGETS_LOG:-26}" --curve bls12_381 --n "${BUDGETS_N:-10}" --runs "${BUDGETS_RUNS:-2}" \
      --budgets "${BUDGETS:-0,48GiB,32GiB,24GiB}" --host-budget "${BUDGETS_HOST:-0}" \
      --dir /tmp/porep-budgets --timeline "$OUT/budgets-waterfalls"
    smi_stop porep-budgets
    tail -9 "$OUT/porep-budgets.txt" ;;
  esac
}

# Logs ab-<build>-<round>.txt (not .log: the summary's RESULT table reads *.log).
section_ab() {
  local sec=${1:-ntt-bench:11} bins=() b r i log
  for b in ${AB}; do
    b=$(abspath "$b")
    [ -d "$b" ] && [ ! -x "$b/gpu_bench" ] && unpack "$b"
    [ -d "$b" ] && b="$b/gpu_bench"
    [ -x "$b" ] || { echo "FAIL ab: no gpu_bench at $b"; status=1; return; }
    bins+=("$b")
  done
  local args
  IFS=: read -ra args <<<"$sec"
  for r in $(seq 1 "${AB_ROUNDS:-3}"); do
    for i in "${!bins[@]}"; do
      log="$OUT/ab-$i-$r.txt"
      timeout -k 10 "${AB_TIMEOUT:-300}" "${bins[$i]}" "${args[@]}" >"$log" 2>&1 ||
        { status=1; echo "FAIL ab ${bins[$i]} round $r"; tail -3 "$log"; }
    done
  done
  echo "== ab: ${AB_ROUNDS:-3} rounds of gpu_bench ${args[*]}"
  for i in "${!bins[@]}"; do echo "  build $i: ${bins[$i]}"; done
  for i in "${!bins[@]}"; do
    grep -h '^RESULT' "$OUT/ab-$i-"*.txt | sed "s/^RESULT /$i /"
  done | awk -v nb=${#bins[@]} '
    { b = $1; v = $(NF-1); $1 = ""; $NF = ""; $(NF-1) = ""; gsub(/^ +| +$/, ""); name = $0;
      vals[b, name] = vals[b, name] " " v; if (!(name in seen)) { seen[name] = 1; order[++nn] = name } }
    function med(s,   a, n, i, j, t) { n = split(s, a, " ");
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    END { printf "%-34s", "benchmark (ms, median of rounds)";
      for (b = 0; b < nb; b++) printf " %9s", "build " b; for (b = 1; b < nb; b++) printf " %7s", b "/0"; printf "\n";
      for (k = 1; k <= nn; k++) { n = order[k]; printf "%-34s", n;
        for (b = 0; b < nb; b++) { m[b] = med(vals[b, n]); printf " %9.2f", m[b] }
        for (b = 1; b < nb; b++) printf " %7.3f", (m[0] > 0 ? m[b] / m[0] : 0);
        printf "\n" }
      for (k = 1; k <= nn; k++) for (b = 0; b < nb; b++) printf "  rounds %s build %d:%s\n", order[k], b, vals[b, order[k]] }'
}

# The tests' outcomes, the sections' summary lines, then every gpu_bench RESULT line beside
# sppark's figure on an H200 where there is one (the target these kernels are measured against).
summary() {
  local logs=() f
  echo
  echo "GPU: $(head -1 "$OUT/gpu.txt")"
  for f in "$OUT"/ctest*.txt; do
    [ -f "$f" ] && grep -E "Test +#[0-9]+: |% tests passed" "$f" | sed 's/^ */  /'
  done
  for f in "$OUT"/*.log; do [ -f "$f" ] && logs+=("$f"); done
  [ ${#logs[@]} -gt 0 ] || return 0
  grep -hE "^(SECTION|SKIP|e2e|engine|ntt-check .* WRONG|msm-check .* 0/)" "${logs[@]}" | sed 's/^/  /'
  grep -hq '^RESULT' "${logs[@]}" || return 0
  printf "%-44s %10s %10s\n" "benchmark (median, inputs on the GPU)" "ms" "sppark"
  grep -h "^RESULT" "${logs[@]}" | sed 's/^RESULT //' | awk '
    BEGIN {
      t["msm bls12-381 G1 2^24"] = 150; t["msm bn254 G1 2^24"] = 79; t["msm bls12-381 G2 2^24"] = 447;
      t["ntt bls12-381 2^27 fwd nat"] = 42; t["msm bls12-381 G1 2^24 99%01"] = 33;
      t["msm bls12-381 G1 2^20"] = 21.4; t["msm bls12-381 G1 2^22"] = 52.2; t["msm bls12-381 G1 2^26"] = 555.2;
      t["msm bn254 G1 2^20"] = 12.5; t["msm bn254 G1 2^22"] = 26.8; t["msm bn254 G1 2^26"] = 275.5;
      t["msm bls12-381 G2 2^20"] = 48.5; t["ntt bls12-381 2^24 fwd nat"] = 4.4;
    }
    { unit = $NF; v = $(NF-1); $NF = ""; $(NF-1) = ""; sub(/ +$/, ""); name = $0;
      printf "%-44s %10.2f %10s\n", name, v, (name in t) ? t[name] : "" }'
}

# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------
if [ $need_gpu = 1 ]; then
  gpu_info name,driver_version,clocks.sm,clocks.max.sm,memory.total,temperature.gpu >"$OUT/gpu.txt"
  cat "$OUT/gpu.txt"
fi
summarize=0
for s in "${sections[@]}"; do
  name=${s%%:*} arg=${s#"$name"}; arg=${arg#:}
  case $name in
    pack) section_pack "$arg" ;;
    tests) section_tests "$arg"; summarize=1 ;;
    cli) section_cli ;;
    digests) section_digests ;;
    large) section_large ;;
    porep) arg=${arg//,/ }; for r in ${arg:-sanity p22 p24}; do section_porep "$r"; done ;;
    ab) section_ab "$arg" ;;
    *) section_bench "$name" "$arg"; summarize=1 ;;
  esac
done
if [ $need_gpu = 1 ]; then
  gpu_info clocks.sm,temperature.gpu,power.draw >>"$OUT/gpu.txt"
  [ $summarize = 0 ] || summary
fi
exit $status
