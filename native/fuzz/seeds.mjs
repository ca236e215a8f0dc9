// Seed corpora for the fuzz targets, from the committed fixtures (nothing generated is committed):
//   node native/fuzz/seeds.mjs <out-dir>
// writes <out-dir>/<target>/<name> for the targets key_open, wtns, r1cs, verify and input_json. Keys and
// constraint systems above 64 KB are left out (larger inputs only slow every execution down);
// verify's seeds are the fixtures' snarkjs proofs in fuzz_verify.cpp's layout.
import { mkdirSync, readFileSync, writeFileSync, statSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error("usage: node native/fuzz/seeds.mjs <out-dir>");
  process.exit(2);
}
const MAX_SEED_BYTES = 64 * 1024;
const CURVES = { bn254: { id: 1, n8q: 32 }, bls12_381: { id: 2, n8q: 48 } };

const manifest = JSON.parse(readFileSync(join(root, "tests/fixtures/manifest.json"), "utf8"));
const fixtures = manifest.fixtures
  .filter((f) => f.committed)
  .map((f) => ({ name: `${f.curve}-${f.name}`, curve: f.curve, dir: join(root, f.dir) }));
for (const curve of Object.keys(CURVES)) fixtures.push({ name: `${curve}-native-data`, curve, dir: join(root, "native/tests/data", curve) });

const counts = {};
function seed(target, name, bytes) {
  mkdirSync(join(out, target), { recursive: true });
  writeFileSync(join(out, target, name), bytes);
  counts[target] = (counts[target] ?? 0) + 1;
}
function copySmall(target, name, path) {
  if (existsSync(path) && statSync(path).size <= MAX_SEED_BYTES) seed(target, name, readFileSync(path));
}

// Little-endian bytes of a decimal string, width n.
function le(decimal, n) {
  let v = BigInt(decimal);
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++, v >>= 8n) b[i] = Number(v & 0xffn);
  return b;
}
const g1 = (p, n) => [le(p[0], n), le(p[1], n)];
const g2 = (p, n) => [le(p[0][0], n), le(p[0][1], n), le(p[1][0], n), le(p[1][1], n)];
function concat(parts) {
  const flat = parts.flat();
  const bytes = new Uint8Array(flat.reduce((s, b) => s + b.length, 0));
  let at = 0;
  for (const b of flat) bytes.set(b, (at += b.length) - b.length);
  return bytes;
}
function u32(v) {
  return new Uint8Array([v & 255, (v >>> 8) & 255, (v >>> 16) & 255, (v >>> 24) & 255]);
}

for (const f of fixtures) {
  copySmall("key_open", `${f.name}.zkey`, join(f.dir, "circuit.zkey"));
  copySmall("key_open", `${f.name}-contributed.zkey`, join(f.dir, "contributed.zkey"));
  copySmall("wtns", `${f.name}.wtns`, join(f.dir, "witness.wtns"));
  copySmall("r1cs", `${f.name}.r1cs`, join(f.dir, "circuit.r1cs"));
  copySmall("input_json", `${f.name}.json`, join(f.dir, "input.json"));
  const vkPath = join(f.dir, "verification_key.json");
  if (!existsSync(vkPath)) continue;
  const { id, n8q } = CURVES[f.curve];
  const vk = JSON.parse(readFileSync(vkPath, "utf8"));
  const proof = JSON.parse(readFileSync(join(f.dir, "proof.json"), "utf8"));
  const pub = JSON.parse(readFileSync(join(f.dir, "public.json"), "utf8"));
  const vkBytes = concat([
    g1(vk.vk_alpha_1, n8q), g2(vk.vk_beta_2, n8q), g2(vk.vk_gamma_2, n8q), g2(vk.vk_delta_2, n8q),
    ...vk.IC.map((p) => g1(p, n8q)),
  ]);
  const proofBytes = concat([g1(proof.pi_a, n8q), g2(proof.pi_b, n8q), g1(proof.pi_c, n8q)]);
  const signals = concat(pub.map((s) => [le(s, 32)]));
  seed("verify", `${f.name}.bin`, concat([[new Uint8Array([id]), u32(vkBytes.length), u32(proofBytes.length), vkBytes, proofBytes, signals]]));
}
console.log(Object.entries(counts).map(([t, n]) => `${t}: ${n} seeds`).join(", "));
