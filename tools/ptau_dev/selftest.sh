#!/usr/bin/env bash
# Checks build/ptau-dev against snarkjs on both curves (see README.md). For every power given
# (default: 8 15) and each curve:
#   1. write the file with ptau-dev (timed);
#   2. `snarkjs powersoftau verify` must accept it (contribution proof of knowledge, transcript
#      hashes, powers, and every Lagrange section);
#   3. for powers <= 10 only (snarkjs is slow beyond): strip sections 12-15, let
#      `snarkjs powersoftau prepare phase2` recompute them, and require the result to be
#      byte-identical to our file; then swap two points of section 15 and require verify to fail;
#   4. Groth16 end to end on a multiplication chain of 3*2^(power-2) constraints, which needs the
#      largest domain the file supports (2^power, so `groth16 setup` also reads the 2^(power+1)
#      slice of section 12): circom2 -> groth16 setup -> zkey contribute -> export
#      verificationkey -> wtns calculate -> groth16 prove -> groth16 verify must print OK.
# Usage: tools/ptau_dev/selftest.sh [power...]   (KEEP=1 keeps the work directory)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
POWERS=("$@")
[ ${#POWERS[@]} -eq 0 ] && POWERS=(8 15)
SNARKJS=(node "$ROOT/node_modules/snarkjs/build/cli.cjs")
CIRCOM=(node "$ROOT/node_modules/circom2/cli.js")
SECTIONS=(node "$ROOT/tools/ptau_dev/ptau_sections.mjs")
WORK="$(mktemp -d "${TMPDIR:-/tmp}/ptau_dev_selftest.XXXXXX")"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT

"$ROOT/tools/ptau_dev/build.sh"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# step <label> <log> <cmd...>: runs cmd, keeps its output in <log>, reports the time.
step() {
  local label="$1" log="$2"; shift 2
  local t0; t0=$(now)
  if "$@" >"$log" 2>&1; then
    printf '  %-34s ok   %6s s\n' "$label" "$(elapsed "$t0")"
  else
    printf '  %-34s FAILED (%s s); last lines of %s:\n' "$label" "$(elapsed "$t0")" "$log"
    tail -n 20 "$log" | sed 's/^/    /'
    exit 1
  fi
}

# expect_output <pattern> <log>: the step succeeded but must also have said <pattern>.
expect_output() {
  grep -q "$1" "$2" || { echo "  expected '$1' in $2:"; tail -n 20 "$2" | sed 's/^/    /'; exit 1; }
}

mulchain() {  # mulchain <constraints>: x public, out public, constraints rows in total
  cat <<EOF
pragma circom 2.1.0;
template MulChain(N) {
    signal input x;
    signal input w;
    signal output out;
    signal c[N - 1];
    c[0] <== x * w;
    for (var i = 1; i < N - 1; i++) {
        c[i] <== c[i - 1] * w;
    }
    out <== c[N - 2] * x;
}
component main {public [x]} = MulChain($1);
EOF
}

for P in "${POWERS[@]}"; do
  for CURVE in bn254 bls12_381; do
    case $CURVE in bn254) PRIME=bn128 ;; bls12_381) PRIME=bls12381 ;; esac
    D="$WORK/${CURVE}_p$P"
    mkdir -p "$D"
    echo "== $CURVE, power $P"
    PTAU="$D/dev.ptau"
    step "ptau-dev $CURVE $P" "$D/ptau-dev.log" "$ROOT/build/ptau-dev" "$CURVE" "$P" "$PTAU"
    grep "written in" "$D/ptau-dev.log" | sed 's/^/    /'

    step "powersoftau verify" "$D/verify.log" "${SNARKJS[@]}" powersoftau verify "$PTAU"
    expect_output "Powers of Tau Ok!" "$D/verify.log"

    if [ "$P" -le 10 ]; then
      step "strip sections 12-15" "$D/strip.log" "${SECTIONS[@]}" strip "$PTAU" "$D/raw.ptau"
      step "snarkjs prepare phase2" "$D/prepare.log" "${SNARKJS[@]}" powersoftau prepare phase2 "$D/raw.ptau" "$D/snarkjs.ptau"
      step "sections 1-15 byte-identical" "$D/compare.log" "${SECTIONS[@]}" compare "$PTAU" "$D/snarkjs.ptau" 1 2 3 4 5 6 7 12 13 14 15
      step "tampered copy" "$D/swap.log" "${SECTIONS[@]}" swap "$PTAU" "$D/bad.ptau" 15 $([ $CURVE = bn254 ] && echo 64 || echo 96)
      if "${SNARKJS[@]}" powersoftau verify "$D/bad.ptau" >"$D/verify_bad.log" 2>&1; then
        echo "  tampered copy was ACCEPTED by powersoftau verify"; exit 1
      fi
      expect_output "does not match" "$D/verify_bad.log"
      printf '  %-34s ok\n' "tampered copy rejected by verify"
    fi

    N=$(( 3 * (1 << (P - 2)) ))
    mulchain "$N" >"$D/chain.circom"
    echo "{\"x\": \"3\", \"w\": \"5\"}" >"$D/input.json"
    # circom2 runs under WASI and only sees its working directory's subtree.
    step "circom2 ($N constraints)" "$D/circom.log" \
      bash -c "cd '$D' && ${CIRCOM[*]} chain.circom --r1cs --wasm --prime $PRIME -o ."
    step "groth16 setup" "$D/setup.log" "${SNARKJS[@]}" groth16 setup "$D/chain.r1cs" "$PTAU" "$D/chain_0.zkey"
    step "zkey contribute" "$D/contribute.log" "${SNARKJS[@]}" zkey contribute "$D/chain_0.zkey" "$D/chain.zkey" \
      --name=selftest -e="ptau-dev selftest $RANDOM"
    step "zkey export verificationkey" "$D/vk.log" "${SNARKJS[@]}" zkey export verificationkey "$D/chain.zkey" "$D/vk.json"
    step "wtns calculate" "$D/wtns.log" "${SNARKJS[@]}" wtns calculate "$D/chain_js/chain.wasm" "$D/input.json" "$D/chain.wtns"
    step "groth16 prove" "$D/prove.log" "${SNARKJS[@]}" groth16 prove "$D/chain.zkey" "$D/chain.wtns" "$D/proof.json" "$D/public.json"
    step "groth16 verify" "$D/gverify.log" "${SNARKJS[@]}" groth16 verify "$D/vk.json" "$D/public.json" "$D/proof.json"
    expect_output "OK!" "$D/gverify.log"
  done
done
echo "selftest passed (powers ${POWERS[*]})"
