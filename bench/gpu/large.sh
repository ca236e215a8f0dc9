#!/usr/bin/env bash
# Whole proofs on real large keys on a GPU host: for each curve, a synthetic PoRep-profile circuit
# of 2^LOG constraints (cuzk synth), an INSECURE development key for it (cuzk setup --insecure-dev,
# all CPU cores), then GPU proofs through the CLI with phase timings and an SVG waterfall. The
# proofs, public signals and verification keys land in $OUT/large/ so that a machine with Node
# can check them with `snarkjs groth16 verify` (bench/gpu/verify-proofs.mjs --large).
#
#   bench/gpu/large.sh [build-dir]        LOG=22 (default), RUNS=3 proofs per curve
# Needs deno on PATH (../shared/tools/gpu-bundle) and the build's libcuzk.so.
set -u
BUILD=${1:-build}
OUT=${OUT:-$PWD/gpu-out}
LOG=${LOG:-22}
RUNS=${RUNS:-3}
BACKEND=${BACKEND:-cuda}  # cpu: a dry run on a machine without a GPU
WORK=${WORK:-/tmp/cuzk-large}
mkdir -p "$OUT/large" "$WORK"
export CUZK_LIB="$BUILD/libcuzk.so"
cuzk() { deno run -A cli.ts "$@"; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }
status=0
# 2^LOG rows minus room for the public-input rows, so the domain stays 2^LOG
constraints=$(( (1 << LOG) - 16 ))
for curve in bn254 bls12_381; do
  w="$WORK/${curve}_$LOG"
  o="$OUT/large/${curve}_$LOG"
  t0=$(ms)
  cuzk synth "$w.r1cs" "$w.wtns" --constraints "$constraints" --curve "$curve" --profile porep --public 4 >"$o.synth.log" 2>&1 || { status=1; tail -3 "$o.synth.log"; continue; }
  t1=$(ms)
  cuzk setup --insecure-dev "$w.r1cs" "$w.zkey" "$o.vkey.json" >"$o.setup.log" 2>&1 || { status=1; tail -3 "$o.setup.log"; continue; }
  t2=$(ms)
  echo "large $curve 2^$LOG: synth $(secs $t0 $t1) s, setup $(secs $t1 $t2) s on $(nproc) cores, key $(du -h "$w.zkey" | cut -f1)"
  for r in $(seq 1 "$RUNS"); do
    s0=$(ms)
    if cuzk prove "$w.zkey" "$w.wtns" "$o.proof.json" "$o.public.json" --backend "$BACKEND" --self-check \
        --timings --json-timings "$o.timings-$r.json" --timeline "$o.waterfall.svg" >"$o.prove-$r.log" 2>&1; then
      s1=$(ms)
      echo "large $curve 2^$LOG $BACKEND proof $r: whole CLI process $(secs $s0 $s1) s"
      cat "$o.prove-$r.log"
    else
      status=1; echo "FAIL large $curve prove $r"; tail -5 "$o.prove-$r.log"
    fi
  done
  rm -f "$w.zkey" "$w.r1cs" "$w.wtns"
done
exit $status
