// Prints the NTT vectors pinned in native/tests/msm_ntt_test.cpp, computed by ffjavascript (the
// library snarkjs builds its keys and proofs with), so our root-of-unity convention is checked
// against theirs: forward FFT of a = [1, 2, ..., 8] and its coset version (a_k scaled by
// Fr.w[4]^k first, as snarkjs's groth16 prover does), for both scalar fields.
// Run: node tools/gen_ntt_vectors.mjs
import { F1Field } from "ffjavascript";

const fields = {
  bn254: 21888242871839275222246405745257275088548364400416034343698204186575808495617n,
  bls12_381: 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n,
};

const hex = (v) => "0x" + v.toString(16);
for (const [name, r] of Object.entries(fields)) {
  const F = new F1Field(r);
  const a = [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n].map((x) => F.e(x));
  const fwd = F.fft(a);
  const g = F.w[4];
  let gk = F.one;
  const b = a.map((x) => { const y = F.mul(x, gk); gk = F.mul(gk, g); return y; });
  const coset = F.fft(b);
  console.log(`${name} forward: ${fwd.map((x) => hex(F.toObject(x))).join(" ")}`);
  console.log(`${name} coset:   ${coset.map((x) => hex(F.toObject(x))).join(" ")}`);
}
