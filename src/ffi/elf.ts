/**
 * @module
 * Lists the functions a Linux shared library exports by reading its ELF dynamic symbol table.
 * The loader uses it to bind only the symbols that exist (Deno.dlopen and bun:ffi refuse a table
 * with one missing symbol), and the ABI test uses it to compare the library with the TS table.
 * Reads only the headers and the two sections it needs, not the whole (possibly large) file.
 */
import { closeSync, openSync, readSync } from "node:fs";

const SHT_DYNSYM = 11;
const STB_GLOBAL = 1;
const STB_WEAK = 2;
const STT_FUNC = 2;

function readAt(fd: number, offset: number, length: number): DataView {
  const bytes = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, bytes, done, length - done, offset + done);
    if (n <= 0) throw new Error(`unexpected end of file at byte ${offset + done}`);
    done += n;
  }
  return new DataView(bytes.buffer);
}

/**
 * Names of the functions defined and exported by the ELF64 little-endian library at `path`.
 * Throws when the file is not such a library (the caller then falls back to probing).
 */
export function exportedFunctions(path: string): Set<string> {
  const fd = openSync(path, "r");
  try {
    const header = readAt(fd, 0, 64);
    const magic = header.getUint32(0, false);
    if (magic !== 0x7f454c46) throw new Error(`${path} is not an ELF file`);
    if (header.getUint8(4) !== 2 || header.getUint8(5) !== 1) throw new Error(`${path} is not ELF64 little-endian`);
    const sectionsAt = Number(header.getBigUint64(0x28, true));
    const sectionSize = header.getUint16(0x3a, true);
    const sectionCount = header.getUint16(0x3c, true);
    const sections = readAt(fd, sectionsAt, sectionSize * sectionCount);
    const section = (i: number) => {
      const base = i * sectionSize;
      return {
        type: sections.getUint32(base + 4, true),
        offset: Number(sections.getBigUint64(base + 24, true)),
        size: Number(sections.getBigUint64(base + 32, true)),
        link: sections.getUint32(base + 40, true),
        entrySize: Number(sections.getBigUint64(base + 56, true)),
      };
    };
    const names = new Set<string>();
    for (let i = 0; i < sectionCount; i++) {
      const dynsym = section(i);
      if (dynsym.type !== SHT_DYNSYM) continue;
      const strtab = section(dynsym.link);
      const strings = new Uint8Array(readAt(fd, strtab.offset, strtab.size).buffer);
      const table = readAt(fd, dynsym.offset, dynsym.size);
      const entrySize = dynsym.entrySize || 24;
      for (let at = 0; at + entrySize <= dynsym.size; at += entrySize) {
        const nameAt = table.getUint32(at, true);
        const info = table.getUint8(at + 4);
        const visibility = table.getUint8(at + 5) & 3;
        const sectionIndex = table.getUint16(at + 6, true);
        const binding = info >> 4;
        if (sectionIndex === 0 || (info & 0xf) !== STT_FUNC || visibility !== 0) continue;
        if (binding !== STB_GLOBAL && binding !== STB_WEAK) continue;
        const end = strings.indexOf(0, nameAt);
        names.add(new TextDecoder().decode(strings.subarray(nameAt, end < 0 ? undefined : end)));
      }
    }
    return names;
  } finally {
    closeSync(fd);
  }
}
