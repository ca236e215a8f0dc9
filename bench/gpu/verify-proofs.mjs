#!/usr/bin/env node
/**
 * @module
 * Verifies with `snarkjs groth16 verify` every proof that bench/gpu/run.sh wrote on the GPU host
 * (which has no Node): section cli's <out>/proofs/<curve>_<name>.{proof,public}.json against the
 * fixture's verification_key.json, section large's <out>/large/ and section porep's
 * <out>/porep/<run>/ against the verification keys made there. Prints one line per proof and a
 * count; exits non-zero if any fails or there is none.
 *
 *   node bench/gpu/verify-proofs.mjs <out dir of run.sh>
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SNARKJS = join(ROOT, "node_modules", "snarkjs", "cli.js");
const out = process.argv[2] ?? "gpu-out";
const proofs = join(out, "proofs");
const large = join(out, "large");
const porep = join(out, "porep");
if (![proofs, large, porep].some(existsSync)) throw new Error(`no proofs under ${out}`);
let ok = 0, bad = 0;
const check = (label, vkey, pub, proof) => {
  const r = spawnSync("node", [SNARKJS, "groth16", "verify", vkey, pub, proof], { encoding: "utf8" });
  const verified = r.status === 0 && r.stdout.includes("OK!");
  verified ? ok++ : bad++;
  console.log(`${label}: ${verified ? "snarkjs OK" : "REJECTED " + r.stdout + r.stderr}`);
};
for (const entry of existsSync(large) ? readdirSync(large).filter((f) => f.endsWith(".proof.json")).sort() : []) {
  const stem = entry.slice(0, -".proof.json".length);
  check(`large ${stem}`, join(large, `${stem}.vkey.json`), join(large, `${stem}.public.json`), join(large, entry));
}
// porep_batch.ts --out DIR: proof_<i>.json, public_<i>.json and one verification_key.json
for (const run of existsSync(porep) ? readdirSync(porep).sort() : []) {
  const dir = join(porep, run);
  for (const entry of readdirSync(dir).filter((f) => /^proof_\d+\.json$/.test(f)).sort()) {
    const i = entry.slice("proof_".length, -".json".length);
    check(`porep ${run} #${i}`, join(dir, "verification_key.json"), join(dir, `public_${i}.json`), join(dir, entry));
  }
}
for (const entry of (existsSync(proofs) ? readdirSync(proofs) : []).filter((f) => f.endsWith(".proof.json")).sort()) {
  const stem = entry.slice(0, -".proof.json".length);
  const [curve, name] = stem.startsWith("bls12_381_") ? ["bls12_381", stem.slice(10)] : ["bn254", stem.slice(6)];
  const vkey = join(ROOT, "tests", "fixtures", curve, name, "verification_key.json");
  check(`${curve}/${name}`, vkey, join(proofs, `${stem}.public.json`), join(proofs, entry));
}
console.log(`${ok} proofs accepted by snarkjs groth16 verify, ${bad} not`);
process.exitCode = bad || ok === 0 ? 1 : 0;
