/**
 * @module
 * The mutation cases over the committed fixtures (tests/fixtures/manifest.json): each case is a
 * list of byte operations on one fixture's circuit.zkey and witness.wtns, generated from a seed so
 * that a case id always names the same bytes. Kinds:
 *   zkey.truncate, wtns.truncate   cut at offsets around every section header and inside each section
 *   zkey.flip.sN, wtns.flip.sN     bit flips inside section N's payload; *.flip.table in its {id, size}
 *   zkey.header, wtns.header       header fields (magic, version, counts, n8, primes, protocol)
 *   zkey.coef                      a coefficient changed to another value < r, or moved to another signal
 *   zkey.point                     two points of one section swapped, or one set to infinity (on the curve: only the self-check sees it)
 *   wtns.value                     unsatisfied witnesses (w[0] != 1, a value + 1), values >= r
 *   wtns.length, wtns.curve        extra bytes, another circuit's witness, the other curve's witness
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The scalar field r of each curve. */
export const PRIMES = {
  bn254: 21888242871839275222246405745257275088548364400416034343698204186575808495617n,
  bls12_381: 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n,
};

/** The committed fixtures, with their bytes. */
export function loadFixtures() {
  const manifest = JSON.parse(readFileSync(join(ROOT, "tests/fixtures/manifest.json"), "utf8"));
  return manifest.fixtures
    .filter((f) => f.committed)
    .map((f) => {
      const dir = join(ROOT, f.dir);
      return {
        id: `${f.curve}/${f.name}`,
        curve: f.curve,
        name: f.name,
        dir,
        zkey: new Uint8Array(readFileSync(join(dir, "circuit.zkey"))),
        wtns: new Uint8Array(readFileSync(join(dir, "witness.wtns"))),
        vkey: join(dir, "verification_key.json"),
      };
    });
}

/** A small deterministic generator (mulberry32) seeded from a string. */
function rng(seedText) {
  let h = 1779033703 ^ seedText.length;
  for (let i = 0; i < seedText.length; i++) h = Math.imul(h ^ seedText.charCodeAt(i), 3432918353), h = (h << 13) | (h >>> 19);
  let a = h >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * n | 0;
  };
}

const u32 = (b, at) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;

/** The section table of an iden3 binfile: [{ id, header, payload, size }]. */
export function sections(bytes) {
  const out = [];
  let at = 12;
  for (let i = 0; i < u32(bytes, 8) && at + 12 <= bytes.length; i++) {
    const size = u32(bytes, at + 4) + u32(bytes, at + 8) * 2 ** 32;
    out.push({ id: u32(bytes, at), header: at, payload: at + 12, size });
    at += 12 + size;
  }
  return out;
}

function leBytes(value, n) {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++, value >>= 8n) b[i] = Number(value & 0xffn);
  return b;
}
function readLe(bytes, at, n) {
  let v = 0n;
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[at + i]);
  return v;
}
const hex = (b) => Buffer.from(b).toString("hex");

/** Applies a case's operations to copies of its fixture's bytes: { zkey, wtns }. */
export function materialize(c, fixtures) {
  const byId = new Map(fixtures.map((f) => [f.id, f]));
  const f = byId.get(c.fixture);
  let zkey = f.zkey;
  let wtns = c.wtnsFrom ? byId.get(c.wtnsFrom).wtns : f.wtns;
  const apply = (bytes, ops) => {
    let b = new Uint8Array(bytes);
    for (const op of ops ?? []) {
      if (op.op === "truncate") b = b.slice(0, op.at);
      else if (op.op === "flip") b[op.at] ^= 1 << op.bit;
      else if (op.op === "write") b.set(Buffer.from(op.hex, "hex"), op.at);
      else if (op.op === "append") b = new Uint8Array([...b, ...new Uint8Array(op.n).fill(op.fill ?? 0)]);
      else if (op.op === "swap") {
        const x = b.slice(op.a, op.a + op.len);
        b.copyWithin(op.a, op.b, op.b + op.len);
        b.set(x, op.b);
      } else throw new Error(`unknown op ${op.op}`);
    }
    return b;
  };
  zkey = apply(zkey, c.zkeyOps);
  wtns = apply(wtns, c.wtnsOps);
  return { zkey, wtns };
}

function truncations(bytes) {
  const at = new Set([0, 1, 3, 4, 8, 11, 12, bytes.length - 1]);
  for (const s of sections(bytes)) for (const o of [s.header, s.header + 6, s.payload, s.payload + (s.size >> 1), s.payload + s.size - 1]) at.add(o);
  return [...at].filter((o) => o >= 0 && o < bytes.length).sort((a, b) => a - b);
}

function flips(bytes, file, next, perSection) {
  const out = [];
  for (const s of sections(bytes)) {
    if (s.size === 0) continue;
    for (let k = 0; k < perSection; k++) {
      const at = s.payload + next(s.size);
      out.push({ kind: `${file}.flip.s${s.id}`, ops: [{ op: "flip", at, bit: next(8) }] });
    }
    out.push({ kind: `${file}.flip.table`, ops: [{ op: "flip", at: s.header + next(12), bit: next(8) }] });
  }
  return out;
}

/** Every case for the fixtures, in a fixed order; ids are "<fixture>#<n>". */
export function buildCases(fixtures, { seed = 1, flipsPerSection = 6 } = {}) {
  const cases = [];
  for (const f of fixtures) {
    const next = rng(`${seed}:${f.id}`);
    const r = PRIMES[f.curve];
    const add = (kind, desc, fields) => cases.push({ id: `${f.id}#${cases.filter((c) => c.fixture === f.id).length}`, fixture: f.id, kind, desc, ...fields });
    const zs = sections(f.zkey);
    const ws = sections(f.wtns);
    const sec = (list, id) => list.find((s) => s.id === id);

    // .zkey
    for (const at of truncations(f.zkey)) add("zkey.truncate", `zkey cut to ${at} bytes`, { zkeyOps: [{ op: "truncate", at }] });
    for (const m of flips(f.zkey, "zkey", next, flipsPerSection)) add(m.kind, `zkey bit ${m.ops[0].bit} of byte ${m.ops[0].at} flipped`, { zkeyOps: m.ops });
    const h = sec(zs, 2).payload;
    const n8q = u32(f.zkey, h);
    const rAt = h + 4 + n8q + 4; // r, after n8q, q, n8r
    const counts = rAt + 32; // nVars, nPublic, domainSize
    const w32 = (at, v) => ({ op: "write", at, hex: hex(leBytes(BigInt(v >>> 0), 4)) });
    const headerEdits = [
      ["magic", [{ op: "write", at: 0, hex: hex(new TextEncoder().encode("wtns")) }]],
      ["version 2", [w32(4, 2)]],
      ["one section fewer", [w32(8, u32(f.zkey, 8) - 1)]],
      ["protocol 2 (plonk)", [w32(sec(zs, 1).payload, 2)]],
      ["n8q 0", [w32(h, 0)]],
      ["n8q 64", [w32(h, 64)]],
      ["q + 2", [{ op: "write", at: h + 4, hex: hex(leBytes(readLe(f.zkey, h + 4, n8q) + 2n, n8q)) }]],
      ["r of the other curve", [{ op: "write", at: rAt, hex: hex(leBytes(PRIMES[f.curve === "bn254" ? "bls12_381" : "bn254"], 32)) }]],
      ["nVars + 1", [w32(counts, u32(f.zkey, counts) + 1)]],
      ["nVars - 1", [w32(counts, u32(f.zkey, counts) - 1)]],
      ["nPublic + 1", [w32(counts + 4, u32(f.zkey, counts + 4) + 1)]],
      ["nPublic = nVars", [w32(counts + 4, u32(f.zkey, counts))]],
      ["domainSize * 2", [w32(counts + 8, u32(f.zkey, counts + 8) * 2)]],
      ["domainSize / 2", [w32(counts + 8, u32(f.zkey, counts + 8) >>> 1)]],
      ["domainSize 3", [w32(counts + 8, 3)]],
      ["domainSize 2^31", [w32(counts + 8, 2 ** 31)]],
      ["coefficient count + 1", [w32(sec(zs, 4).payload, u32(f.zkey, sec(zs, 4).payload) + 1)]],
      ["coefficient count 0xffffffff", [w32(sec(zs, 4).payload, 0xffffffff)]],
      ["section 5 size + 1", [w32(sec(zs, 5).header + 4, sec(zs, 5).size + 1)]],
    ];
    for (const [what, ops] of headerEdits) add("zkey.header", `zkey header: ${what}`, { zkeyOps: ops });
    // coefficients: another value < r, another signal, another constraint (still well-formed)
    const coefs = sec(zs, 4);
    const nCoefs = u32(f.zkey, coefs.payload);
    const nVars = u32(f.zkey, counts);
    for (let k = 0; k < 4 && nCoefs > 0; k++) {
      const rec = coefs.payload + 4 + next(nCoefs) * 44;
      const v = readLe(f.zkey, rec + 12, 32);
      add("zkey.coef", `zkey coefficient at ${rec}: value + 1 mod r`, { zkeyOps: [{ op: "write", at: rec + 12, hex: hex(leBytes((v + 1n) % r, 32)) }] });
      const signal = u32(f.zkey, rec + 8);
      add("zkey.coef", `zkey coefficient at ${rec}: signal ${signal} -> ${(signal + 1) % nVars}`, { zkeyOps: [w32(rec + 8, (signal + 1) % nVars)] });
    }
    // points: two swapped (both on the curve), one set to infinity
    for (const id of [3, 5, 6, 7, 8, 9]) {
      const s = sec(zs, id);
      const size = (id === 7 ? 4 : 2) * n8q;
      const n = Math.floor(s.size / size);
      if (n < 2) continue;
      const a = next(n);
      const b = (a + 1 + next(n - 1)) % n;
      add("zkey.point", `zkey section ${id}: points ${a} and ${b} swapped`, { zkeyOps: [{ op: "swap", a: s.payload + a * size, b: s.payload + b * size, len: size }] });
      add("zkey.point", `zkey section ${id}: point ${a} set to infinity`, { zkeyOps: [{ op: "write", at: s.payload + a * size, hex: "00".repeat(size) }] });
    }

    // .wtns
    for (const at of truncations(f.wtns)) add("wtns.truncate", `wtns cut to ${at} bytes`, { wtnsOps: [{ op: "truncate", at }] });
    for (const m of flips(f.wtns, "wtns", next, flipsPerSection)) add(m.kind, `wtns bit ${m.ops[0].bit} of byte ${m.ops[0].at} flipped`, { wtnsOps: m.ops });
    const wh = sec(ws, 1).payload;
    const values = sec(ws, 2).payload;
    const nWitness = u32(f.wtns, wh + 36);
    const wEdits = [
      ["magic", [{ op: "write", at: 0, hex: hex(new TextEncoder().encode("zkey")) }]],
      ["version 3", [w32(4, 3)]],
      ["n8 0", [w32(wh, 0)]],
      ["n8 48", [w32(wh, 48)]],
      ["prime of the other curve", [{ op: "write", at: wh + 4, hex: hex(leBytes(PRIMES[f.curve === "bn254" ? "bls12_381" : "bn254"], 32)) }]],
      ["nWitness + 1", [w32(wh + 36, nWitness + 1)]],
      ["nWitness - 1", [w32(wh + 36, nWitness - 1)]],
      ["nWitness 0xffffffff", [w32(wh + 36, 0xffffffff)]],
    ];
    for (const [what, ops] of wEdits) add("wtns.header", `wtns header: ${what}`, { wtnsOps: ops });
    const value = (i, v) => ({ op: "write", at: values + 32 * i, hex: hex(leBytes(v, 32)) });
    add("wtns.value", "wtns w[0] = 0", { wtnsOps: [value(0, 0n)] });
    add("wtns.value", "wtns w[0] = 2", { wtnsOps: [value(0, 2n)] });
    for (const i of new Set([1, 1 + next(nWitness - 1), 1 + next(nWitness - 1), nWitness - 1])) {
      if (i <= 0 || i >= nWitness) continue;
      add("wtns.value", `wtns w[${i}] + 1 mod r (unsatisfied)`, { wtnsOps: [value(i, (readLe(f.wtns, values + 32 * i, 32) + 1n) % r)] });
    }
    add("wtns.value", `wtns w[${nWitness - 1}] = r`, { wtnsOps: [value(nWitness - 1, r)] });
    add("wtns.value", `wtns w[1] = 2^256 - 1`, { wtnsOps: [value(1, (1n << 256n) - 1n)] });
    add("wtns.length", "wtns + 1 byte", { wtnsOps: [{ op: "append", n: 1 }] });
    add("wtns.length", "wtns + 32 bytes (one value more, header unchanged)", { wtnsOps: [{ op: "append", n: 32 }] });
    const sameCurve = fixtures.filter((g) => g.curve === f.curve && g.id !== f.id);
    add("wtns.length", "another circuit's witness", { wtnsFrom: sameCurve[next(sameCurve.length)].id });
    const twin = fixtures.find((g) => g.curve !== f.curve && g.name === f.name);
    if (twin) add("wtns.curve", "the same circuit's witness on the other curve", { wtnsFrom: twin.id });
  }
  return cases;
}
