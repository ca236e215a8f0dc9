/**
 * @module Section-level surgery on .ptau files for tools/ptau_dev/selftest.sh (formats.md 0):
 *   strip   <in> <out>              keep sections 1-7 (undo "prepare phase2")
 *   compare <a> <b> <id>...         exit 0 when those sections are byte-identical
 *   swap    <in> <out> <id> <size>  swap the first two <size>-byte records of a section
 */
import { readFileSync, writeFileSync } from "node:fs";

function sections(buf) {
  const out = new Map();
  let pos = 12;
  const n = buf.readUInt32LE(8);
  for (let i = 0; i < n; i++) {
    const id = buf.readUInt32LE(pos);
    const size = Number(buf.readBigUInt64LE(pos + 4));
    out.set(id, { header: pos, start: pos + 12, end: pos + 12 + size });
    pos += 12 + size;
  }
  if (pos !== buf.length) throw new Error("trailing bytes after the last section");
  return out;
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "strip") {
  const buf = readFileSync(args[0]);
  const s = sections(buf);
  const keep = [...s.entries()].filter(([id]) => id <= 7);
  const head = Buffer.from(buf.subarray(0, 12));
  head.writeUInt32LE(keep.length, 8);
  writeFileSync(args[1], Buffer.concat([head, ...keep.map(([, e]) => buf.subarray(e.header, e.end))]));
} else if (cmd === "compare") {
  const [a, b] = [readFileSync(args[0]), readFileSync(args[1])];
  const [sa, sb] = [sections(a), sections(b)];
  let same = true;
  for (const id of args.slice(2).map(Number)) {
    const [ea, eb] = [sa.get(id), sb.get(id)];
    const ok = ea && eb && a.subarray(ea.start, ea.end).equals(b.subarray(eb.start, eb.end));
    console.log(`section ${id}: ${ok ? "identical" : "DIFFERENT"} (${ea ? ea.end - ea.start : "-"} bytes)`);
    same &&= !!ok;
  }
  process.exit(same ? 0 : 1);
} else if (cmd === "swap") {
  const buf = readFileSync(args[0]);
  const e = sections(buf).get(Number(args[2]));
  const size = Number(args[3]);
  const first = Buffer.from(buf.subarray(e.start, e.start + size));
  buf.copy(buf, e.start, e.start + size, e.start + 2 * size);
  first.copy(buf, e.start + size);
  writeFileSync(args[1], buf);
} else {
  console.error("usage: ptau_sections.mjs strip|compare|swap ...");
  process.exit(2);
}
