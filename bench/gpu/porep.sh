#!/usr/bin/env bash
# The seed's workload's figures on a GPU host, in one call (bench/gpu/porep_batch.ts does the work; keys are
# made in memory, INSECURE, so nothing of the key goes to disk). Run from the repository root with
# Deno on PATH and CUZK_LIB naming a CUDA build of the library; logs and proofs go to $OUT.
#
#   OUT=dir CUZK_LIB=build-cuda/libcuzk.so bench/gpu/porep.sh sanity p27 p22 p24
#
#   sanity  2^16 PoRep profile, both curves, batch of 3 compared with the same witnesses proved
#           alone (same r, s): equal proofs, every proof self-checked (catches a broken pipeline in
#           seconds, before the long runs)
#   p27     BLS12-381 2^27 PoRep profile, batch of 10 (the seed's workload): per-circuit phase
#           medians, batch wall time, peak GPU (nvidia-smi, every 100 ms) and host memory, waterfall
#           ($OUT/p27.svg). P27_RUNS (3), P27_TIMEOUT (520 s). Host: ~80 GB RSS at peak, ~30 GB disk
#           for the .r1cs (removed once the key is made); device: ~130 GiB by the memory plan
#   p22     both curves 2^22, batch of 10 against single proofs (--single), batch == single proofs
#           (--compare); proofs and vk in $OUT/p22-<curve> for `snarkjs groth16 verify`
#   p24     BLS12-381 2^24, batch of P24_N (4) against single proofs; waterfall $OUT/p24.svg
#   stream  every section streamed (--stream-all; a key made in memory makes
#           a streamed section's points again for each read): BLS12-381 2^22, a batch of 4 against
#           the same witnesses alone (equal proofs), batches of 10 read once per group against
#           --stream-per-proof (read per proof), and 2^24 batches of 10 read once per group
#   scale   hosts with several GPUs: BLS12-381 2^24 and 2^26, a batch of SCALE_N (8) on
#           each device set of SCALE_SETS ("0 0,1" by default; "0 0,1 0,1,2,3" on four), every batch
#           compared with single proofs at 2^24; lanes waterfall per set ($OUT/scale-<log>-<set>.svg);
#           peak memory per GPU from nvidia-smi (each device's memory only on its own GPU)
# Prints each section's table; the last lines of every log are in $OUT/<section>.txt.
set -u
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
: "${CUZK_LIB:?CUZK_LIB must name a CUDA build of libcuzk.so}"
BENCH="deno run -A bench/gpu/porep_batch.ts"  # a command, not a function: timeout runs it
smi_start() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$OUT/$1-gpumem.csv" 2>/dev/null & smi=$!; }
smi_stop() { kill "$smi" 2>/dev/null; echo "$1: peak GPU memory used (nvidia-smi): $(sort -n "$OUT/$1-gpumem.csv" | tail -1) MiB"; }
status=0
for section in "$@"; do case $section in
sanity)
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
  for curve in bls12_381 bn254; do
    timeout 120 $BENCH --log2 16 --curve $curve --n 3 --runs 1 --compare --dir /tmp/porep16 --out "$OUT/s16-$curve" > "$OUT/sanity-$curve.txt" 2>&1
    rc=$?; echo "sanity $curve exit $rc"; [ $rc = 0 ] || status=1; grep -E "compare|per circuit" "$OUT/sanity-$curve.txt"
  done ;;
p27)
  df -h /tmp | tail -1; free -g | head -2
  smi_start p27
  timeout "${P27_TIMEOUT:-520}" deno run -A bench/gpu/porep_batch.ts --log2 27 --curve bls12_381 --n 10 --runs "${P27_RUNS:-3}" \
    --dir /tmp/porep27 --timeline "$OUT/p27.svg" > "$OUT/p27.txt" 2>&1
  rc=$?; echo "p27 exit $rc"; [ $rc = 0 ] || status=1
  smi_stop p27
  tail -32 "$OUT/p27.txt" ;;
p22)
  for curve in bn254 bls12_381; do
    timeout 200 $BENCH --log2 22 --curve $curve --n 10 --runs 3 --single --compare --dir /tmp/porep22 --out "$OUT/p22-$curve" > "$OUT/p22-$curve.txt" 2>&1
    rc=$?; echo "p22 $curve exit $rc"; [ $rc = 0 ] || status=1; tail -11 "$OUT/p22-$curve.txt"
  done ;;
p24)
  smi_start p24
  timeout 300 $BENCH --log2 24 --curve bls12_381 --n "${P24_N:-4}" --runs 5 --single --compare --dir /tmp/porep24 --timeline "$OUT/p24.svg" \
    --out "$OUT/p24" > "$OUT/p24.txt" 2>&1
  rc=$?; echo "p24 exit $rc"; [ $rc = 0 ] || status=1
  smi_stop p24
  tail -24 "$OUT/p24.txt" ;;
stream)
  timeout 150 $BENCH --stream-all --log2 22 --curve bls12_381 --n 4 --runs 1 --compare --dir /tmp/porep22 > "$OUT/stream-compare.txt" 2>&1
  rc=$?; echo "stream compare exit $rc: $(grep -E 'compare:' "$OUT/stream-compare.txt")"; [ $rc = 0 ] || status=1
  for mode in group proof; do
    per=0; [ $mode = proof ] && per=1
    timeout 150 $BENCH --stream-all $([ "$per" = 1 ] && echo --stream-per-proof) --log2 22 --curve bls12_381 --n 10 --runs $((per ? 1 : 3)) \
      --dir /tmp/porep22 --timeline "$OUT/stream-22-$mode.svg" > "$OUT/stream-22-$mode.txt" 2>&1
    rc=$?; echo "stream 2^22 read once per $mode exit $rc"; [ $rc = 0 ] || status=1; grep -E '^\| (batch of|per circuit|key:)' "$OUT/stream-22-$mode.txt"
  done
  smi_start stream-24
  timeout 240 $BENCH --stream-all --log2 24 --curve bls12_381 --n 10 --runs 2 --dir /tmp/porep24 --timeline "$OUT/stream-24-group.svg" \
    > "$OUT/stream-24-group.txt" 2>&1
  rc=$?; echo "stream 2^24 read once per group exit $rc"; [ $rc = 0 ] || status=1
  smi_stop stream-24
  tail -14 "$OUT/stream-24-group.txt" ;;
scale)
  for log in 24 26; do for set in ${SCALE_SETS:-0 0,1}; do
    nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 200 > "$OUT/scale-$log-$set-gpumem.csv" 2>/dev/null & smi=$!
    extra=""; [ $log = 24 ] && extra="--compare"
    timeout 400 $BENCH --log2 $log --curve bls12_381 --n "${SCALE_N:-8}" --runs 3 --devices $set $extra --dir /tmp/porep-scale \
      --timeline "$OUT/scale-$log-$set.svg" > "$OUT/scale-$log-$set.txt" 2>&1
    rc=$?; kill $smi 2>/dev/null; [ $rc = 0 ] || status=1
    echo "scale 2^$log devices $set exit $rc: $(grep -E '^\| batch of' "$OUT/scale-$log-$set.txt"); per GPU peak MiB: $(sort -t, -k1,1n -k2,2n "$OUT/scale-$log-$set-gpumem.csv" | awk -F', ' '{m[$1]=$2} END {for (g in m) printf "%s:%s ", g, m[g]}')"
  done; done ;;
*) echo "unknown section $section (sanity p27 p22 p24 stream scale)"; status=2 ;;
esac; done
exit $status
