#!/usr/bin/env bash
# Regenerates the small fixtures of native/tests/formats_test.cpp with the repo's own circom2 and
# snarkjs (node_modules), and expected.txt: the counts as snarkjs itself reads them, so that the
# test checks our readers against the reference rather than against themselves.
# Writes <curve>/ beside this script. Needs node; takes ~20 s.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
bin="$root/node_modules/.bin"
power=6  # 2^6 is plenty for chain.circom (domain 16)

for curve in bn254 bls12_381; do
  case $curve in
    bn254) circom_prime=bn128; ptau_curve=bn128 ;;
    bls12_381) circom_prime=bls12381; ptau_curve=bls12-381 ;;
  esac
  out="$here/$curve"
  work="$(mktemp -d)"
  mkdir -p "$out"
  "$bin/circom2" "$here/chain.circom" --r1cs --wasm --prime "$circom_prime" -o "$work" >/dev/null
  "$bin/snarkjs" powersoftau new "$ptau_curve" "$power" "$work/pot_0.ptau" >/dev/null
  "$bin/snarkjs" powersoftau prepare phase2 "$work/pot_0.ptau" "$work/pot.ptau" >/dev/null
  # setup writes sections as 1,2,4,3,9,8,5,6,7,10; contribute rewrites them as 1..10: keep both.
  "$bin/snarkjs" groth16 setup "$work/chain.r1cs" "$work/pot.ptau" "$out/circuit.zkey" >/dev/null
  "$bin/snarkjs" zkey contribute "$out/circuit.zkey" "$out/contributed.zkey" -e="cuzk fixture" >/dev/null
  echo '{"x": "3", "k": "5", "y": "11"}' > "$work/input.json"
  "$bin/snarkjs" wtns calculate "$work/chain_js/chain.wasm" "$work/input.json" "$out/witness.wtns" >/dev/null
  cp "$work/chain.r1cs" "$out/circuit.r1cs"

  "$bin/snarkjs" r1cs info "$out/circuit.r1cs" | sed 's/\x1b\[[0-9;]*m//g' > "$work/r1cs_info.txt"
  "$bin/snarkjs" zkey export json "$out/circuit.zkey" "$work/zkey.json" >/dev/null
  "$bin/snarkjs" wtns export json "$out/witness.wtns" "$work/wtns.json" >/dev/null
  info() { grep "# of $1:" "$work/r1cs_info.txt" | sed 's/.*: //'; }
  {
    echo "r1cs_n_wires $(info Wires)"
    echo "r1cs_n_constraints $(info Constraints)"
    echo "r1cs_n_prv_in $(info 'Private Inputs')"
    echo "r1cs_n_pub_in $(info 'Public Inputs')"
    echo "r1cs_n_labels $(info Labels)"
    echo "r1cs_n_pub_out $(info Outputs)"
    node -e '
      const fs = require("fs");
      const z = JSON.parse(fs.readFileSync(process.argv[1]));
      const w = JSON.parse(fs.readFileSync(process.argv[2]));
      console.log(`zkey_n8q ${z.n8q}`);
      console.log(`zkey_n_vars ${z.nVars}`);
      console.log(`zkey_n_public ${z.nPublic}`);
      console.log(`zkey_domain_size ${z.domainSize}`);
      console.log(`zkey_log_domain ${z.power}`);
      console.log(`zkey_n_coefs ${z.ccoefs.length}`);
      console.log(`wtns_n_witness ${w.length}`);
      w.forEach((v, i) => console.log(`wtns_value_hex ${i} ${BigInt(v).toString(16)}`));
    ' "$work/zkey.json" "$work/wtns.json"
  } > "$out/expected.txt"
  rm -rf "$work"
done
