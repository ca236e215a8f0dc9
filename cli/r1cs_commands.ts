/**
 * @module
 * `r1cs info` and `wtns check`, snarkjs's commands that read a circuit's .r1cs without a key: the
 * same facts and lines as snarkjs (node_modules/snarkjs/src/r1cs_info.js, wtns_check.js), printed
 * without its logger's `[INFO]  snarkJS: ` prefix and colours (as `groth16 verify` prints `OK!`).
 * The library's constraint check needs a key (cuzk_key_attach_r1cs), so the check is done here
 * over the .r1cs, streamed a section at a time with BigInt arithmetic: about as fast as snarkjs's.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import process from "node:process";

import { CuzkError, requireRegularFile } from "../mod.ts";
import { EXIT } from "./io.ts";

/** Scalar fields snarkjs knows by name: its r1cs info name and its curve name (wtns check). */
const CURVES = [
  { r: 21888242871839275222246405745257275088548364400416034343698204186575808495617n, info: "bn-128", name: "bn128" },
  { r: 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n, info: "bls12-381", name: "bls12381" },
];

/** snarkjs's binary files (@iden3/binfileutils): magic, version, then sections of (type u32, size u64, bytes). */
class BinFile {
  readonly path: string;
  readonly what: string;
  readonly fd: number;
  readonly size: number;
  /** Each section type's (offset, size) in the order they appear. */
  readonly sections = new Map<number, Array<{ offset: number; size: number }>>();

  constructor(path: string, what: string, magic: string, maxVersion: number) {
    this.path = path;
    this.what = what;
    requireRegularFile(path, what);
    try {
      this.fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (cause) {
      throw new CuzkError("IO", `cannot read ${what} ${path}: ${(cause as Error).message}`, { cause });
    }
    try {
      const stats = fstatSync(this.fd);
      if (!stats.isFile()) throw new CuzkError("INVALID_ARGUMENT", `${what} ${path} is not a regular file (a device, FIFO, socket or directory); give the path of a file`);
      this.size = stats.size;
      const head = this.read(0, 12, "its header");
      const found = new TextDecoder().decode(head.subarray(0, 4));
      if (found !== magic) throw this.malformed(`it does not start with "${magic}" (is it a .${magic} file?)`);
      const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
      const version = view.getUint32(4, true);
      if (version < 1 || version > maxVersion) throw this.malformed(`version ${version}; snarkjs reads versions 1 to ${maxVersion}`);
      const count = view.getUint32(8, true);
      let at = 12;
      for (let i = 0; i < count; i++) {
        const entry = this.read(at, 12, `the header of section ${i + 1} of ${count}`);
        const ev = new DataView(entry.buffer, entry.byteOffset, entry.byteLength);
        const type = ev.getUint32(0, true);
        const size = Number(ev.getBigUint64(4, true));
        if (at + 12 + size > this.size) throw this.malformed(`section ${i + 1} (type ${type}) has ${size} bytes, past the end of the file`);
        const list = this.sections.get(type) ?? [];
        list.push({ offset: at + 12, size });
        this.sections.set(type, list);
        at += 12 + size;
      }
    } catch (error) {
      closeSync(this.fd);
      throw error;
    }
  }

  malformed(why: string): CuzkError {
    return new CuzkError("FORMAT", `${this.what} ${this.path} is malformed: ${why}`);
  }

  /** `length` bytes at `offset`, which must lie within the file. */
  read(offset: number, length: number, what: string): Uint8Array {
    if (offset + length > this.size) throw this.malformed(`the file ends before ${what}`);
    const bytes = new Uint8Array(length);
    for (let filled = 0; filled < length;) {
      let n: number;
      try {
        n = readSync(this.fd, bytes, filled, length - filled, offset + filled);
      } catch (cause) {
        throw new CuzkError("IO", `cannot read ${this.what} ${this.path}: ${(cause as Error).message}`, { cause });
      }
      if (n === 0) throw new CuzkError("IO", `${this.what} ${this.path} shrank while it was read`);
      filled += n;
    }
    return bytes;
  }

  /** The one section of `type` (binfileutils refuses a missing or repeated one). */
  section(type: number, name: string): { offset: number; size: number } {
    const list = this.sections.get(type);
    if (!list) throw this.malformed(`it has no ${name} section (${type})`);
    if (list.length > 1) throw this.malformed(`its ${name} section (${type}) appears ${list.length} times`);
    return list[0];
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** An unsigned little-endian integer of `n8` bytes (a multiple of 8). */
function readBig(view: DataView, offset: number, n8: number): bigint {
  let value = 0n;
  for (let i = n8 - 8; i >= 0; i -= 8) value = (value << 64n) | view.getBigUint64(offset + i, true);
  return value;
}

/** The header of a .r1cs file (section 1), as r1csfile's readR1csHeader reads it. */
export interface R1csHeader {
  n8: number;
  prime: bigint;
  nVars: number;
  nOutputs: number;
  nPubInputs: number;
  nPrvInputs: number;
  nLabels: bigint;
  nConstraints: number;
  /** Both custom gate sections (4 and 5) are present. */
  useCustomGates: boolean;
}

function readR1csHeader(file: BinFile): R1csHeader {
  const { offset, size } = file.section(1, "header");
  if (size < 4) throw file.malformed(`its header section has ${size} bytes`);
  const n8 = new DataView(file.read(offset, 4, "the header's field size").buffer).getUint32(0, true);
  if (n8 === 0 || n8 % 8 !== 0 || n8 > 1024) throw file.malformed(`a field element of ${n8} bytes (snarkjs's fields take a multiple of 8)`);
  if (size !== n8 + 32) throw file.malformed(`its header section has ${size} bytes, not the ${n8 + 32} of a header with ${n8}-byte field elements`);
  const bytes = file.read(offset, size, "the end of the header");
  const view = new DataView(bytes.buffer);
  const at = 4 + n8;
  return {
    n8,
    prime: readBig(view, 4, n8),
    nVars: view.getUint32(at, true),
    nOutputs: view.getUint32(at + 4, true),
    nPubInputs: view.getUint32(at + 8, true),
    nPrvInputs: view.getUint32(at + 12, true),
    nLabels: view.getBigUint64(at + 16, true),
    nConstraints: view.getUint32(at + 24, true),
    useCustomGates: file.sections.has(4) && file.sections.has(5),
  };
}

/** Opens a .r1cs and reads its header. The caller closes the file. */
function openR1cs(path: string): { file: BinFile; header: R1csHeader } {
  const file = new BinFile(path, "circuit .r1cs", "r1cs", 1);
  try {
    return { file, header: readR1csHeader(file) };
  } catch (error) {
    file.close();
    throw error;
  }
}

const print = (line: string) => process.stdout.write(line + "\n");

/** The lines snarkjs's `r1cs info` prints for the .r1cs at `path`. */
export function r1csInfoLines(path: string): string[] {
  const { file, header } = openR1cs(path);
  file.close();
  const curve = CURVES.find((c) => c.r === header.prime);
  return [
    curve ? `Curve: ${curve.info}` : `Unknown Curve. Prime: ${header.prime}`,
    `# of Wires: ${header.nVars}`,
    `# of Constraints: ${header.nConstraints}`,
    `# of Private Inputs: ${header.nPrvInputs}`,
    `# of Public Inputs: ${header.nPubInputs}`,
    `# of Labels: ${header.nLabels}`,
    `# of Outputs: ${header.nOutputs}`,
  ];
}

/** `r1cs info [circuit.r1cs]`: snarkjs's statistics of a circuit, on stdout. */
export function r1csInfo(path: string): number {
  for (const line of r1csInfoLines(path)) print(line);
  return EXIT.ok;
}

/** Reads a section front to back in chunks (a constraints section may be larger than one buffer should be). */
class SectionReader {
  private buffer = new Uint8Array(1 << 22);
  private view = new DataView(this.buffer.buffer);
  private readonly file: BinFile;
  private readonly offset: number;
  private readonly size: number;
  private readonly name: string;
  /** File offset of buffer[0]; bytes buffer[0, filled) are valid; `at` is the cursor in the buffer. */
  private base: number;
  private filled = 0;
  at = 0;

  constructor(file: BinFile, offset: number, size: number, name: string) {
    this.file = file;
    this.offset = offset;
    this.size = size;
    this.name = name;
    this.base = offset;
  }

  /** Bytes of the section not yet consumed. */
  get left(): number {
    return this.offset + this.size - (this.base + this.at);
  }

  /** Makes `n` bytes available at `at`; returns the view over the buffer. */
  need(n: number): DataView {
    if (this.at + n <= this.filled) return this.view;
    if (n > this.left) throw this.file.malformed(`its ${this.name} section ends early (${this.left} bytes left, ${n} needed)`);
    const kept = this.filled - this.at;
    if (n > this.buffer.length) {
      const grown = new Uint8Array(n);
      grown.set(this.buffer.subarray(this.at, this.filled));
      this.buffer = grown;
      this.view = new DataView(grown.buffer);
    } else {
      this.buffer.copyWithin(0, this.at, this.filled);
    }
    this.base += this.at;
    this.at = 0;
    this.filled = kept;
    const want = Math.min(this.buffer.length, this.offset + this.size - this.base) - kept;
    this.buffer.set(this.file.read(this.base + kept, want, `the end of its ${this.name} section`), kept);
    this.filled += want;
    return this.view;
  }
}

/**
 * `wtns check [circuit.r1cs] [witness.wtns]`: whether the witness satisfies every constraint
 * A·B = C of the circuit, with snarkjs's lines on stdout; exit 0 if it does, 1 at the first that
 * fails. As snarkjs, values are taken modulo r and w[0] is not required to be 1; unlike snarkjs, a
 * witness whose count differs from the circuit's wires is refused (it is another circuit's).
 */
export function wtnsCheck(r1csPath: string, wtnsPath: string): number {
  print("WITNESS CHECKING STARTED");
  print("> Reading r1cs file");
  const { file: r1cs, header } = openR1cs(r1csPath);
  try {
    print("> Reading witness file");
    const witness = readWitnessValues(wtnsPath, header);
    const curve = CURVES.find((c) => c.r === header.prime)!;
    const r = header.prime;
    print("----------------------------");
    print("  WITNESS CHECK");
    print(`  Curve:          ${curve.name}`);
    print(`  Vars (wires):   ${header.nVars}`);
    print(`  Outputs:        ${header.nOutputs}`);
    print(`  Public Inputs:  ${header.nPubInputs}`);
    print(`  Private Inputs: ${header.nPrvInputs}`);
    print(`  Labels:         ${header.nLabels}`);
    print(`  Constraints:    ${header.nConstraints}`);
    print(`  Custom Gates:   ${header.useCustomGates}`);
    print("----------------------------");
    print("> Checking witness correctness");

    const { offset, size } = r1cs.section(2, "constraints");
    const reader = new SectionReader(r1cs, offset, size, "constraints");
    const n8 = header.n8, term = 4 + n8, nVars = header.nVars;
    const wv = new DataView(witness.buffer, witness.byteOffset, witness.byteLength);
    /** One linear combination's value, modulo r. */
    const evaluate = (constraint: number): bigint => {
      const count = reader.need(4).getUint32(reader.at, true);
      reader.at += 4;
      const view = reader.need(count * term);
      let sum = 0n;
      for (let i = 0, at = reader.at; i < count; i++, at += term) {
        const wire = view.getUint32(at, true);
        if (wire >= nVars) throw r1cs.malformed(`constraint ${constraint} names wire ${wire}, but the circuit has ${nVars} wires`);
        sum += readBig(view, at + 4, n8) * readBig(wv, wire * n8, n8);
      }
      reader.at += count * term;
      return sum % r;
    };
    let satisfied = true;
    for (let i = 0; i < header.nConstraints; i++) {
      if (i !== 0 && i % 500000 === 0) print(`··· processing r1cs constraints ${i}/${header.nConstraints}`);
      const a = evaluate(i), b = evaluate(i), c = evaluate(i);
      if ((a * b - c) % r !== 0n) {
        print(`··· aborting checking process at constraint ${i}`);
        satisfied = false;
        break;
      }
    }
    if (satisfied && reader.left !== 0) throw r1cs.malformed(`its constraints section has ${reader.left} bytes after its ${header.nConstraints} constraints`);
    if (satisfied) {
      print("WITNESS IS CORRECT");
      print("WITNESS CHECKING FINISHED SUCCESSFULLY");
      return EXIT.ok;
    }
    print("WITNESS IS NOT CORRECT");
    print("WITNESS CHECKING FINISHED UNSUCCESSFULLY");
    return EXIT.failed;
  } finally {
    r1cs.close();
  }
}

/** The values of the .wtns at `path` (section 2, n8 bytes each), checked against the circuit's header. */
function readWitnessValues(path: string, header: R1csHeader): Uint8Array {
  const file = new BinFile(path, "witness", "wtns", 2);
  try {
    const { offset, size } = file.section(1, "header");
    if (size < 4) throw file.malformed(`its header section has ${size} bytes`);
    const n8 = new DataView(file.read(offset, 4, "the header's field size").buffer).getUint32(0, true);
    if (n8 === 0 || n8 % 8 !== 0 || n8 > 1024 || size !== n8 + 8) throw file.malformed(`its header section has ${size} bytes for ${n8}-byte field elements`);
    const bytes = file.read(offset, size, "the end of its header");
    const view = new DataView(bytes.buffer);
    const q = readBig(view, 4, n8);
    const count = view.getUint32(4 + n8, true);
    const name = (prime: bigint) => CURVES.find((c) => c.r === prime)?.name ?? `the field of prime ${prime}`;
    if (q !== header.prime || n8 !== header.n8) {
      throw new CuzkError("CURVE_MISMATCH", `witness ${path} is of ${name(q)}, the circuit of ${name(header.prime)}: give the witness of this circuit`);
    }
    if (!CURVES.some((c) => c.r === header.prime)) {
      throw new CuzkError("UNSUPPORTED", `the circuit's field (prime ${header.prime}) is not of a curve snarkjs knows (bn128, bls12381)`);
    }
    if (count !== header.nVars) {
      throw new CuzkError("WITNESS_LENGTH", `witness ${path} has ${count} values, but the circuit has ${header.nVars} wires: is it the witness of another circuit?`);
    }
    const values = file.section(2, "values");
    if (values.size !== count * n8) throw file.malformed(`its values section has ${values.size} bytes, not the ${count * n8} of ${count} values`);
    return file.read(values.offset, values.size, "the end of its values");
  } finally {
    file.close();
  }
}
