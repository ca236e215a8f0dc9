/**
 * @module
 * Files given by path are refused before anything is read unless they are regular files of at
 * most a stated size: a FIFO would block the reader and /dev/zero would be read without end. A
 * file is opened non-blocking and checked again on its descriptor, so a path swapped after the
 * first check gains nothing; reading stops at the size seen (a file that grows meanwhile is refused).
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import type { Stats } from "node:fs";
import { LIMITS } from "./bounds.ts";
import { CuzkError } from "./errors.ts";
import { ABI } from "./ffi/symbols.ts";

/** Says why a file of `size` bytes is too large (the default names the limit). */
type TooLarge = (size: number) => string;

function refuseUnlessRegular(stats: Stats, path: string, what: string, maxBytes: number, tooLarge?: TooLarge): void {
  if (!stats.isFile()) {
    throw new CuzkError("INVALID_ARGUMENT", `${what} ${path} is not a regular file (a device, FIFO, socket or directory); give the path of a file`);
  }
  if (stats.size > maxBytes) {
    throw new CuzkError("INVALID_ARGUMENT", tooLarge ? tooLarge(stats.size) : `${what} ${path} has ${stats.size} bytes, more than the ${maxBytes} it may have`);
  }
}

/**
 * Refuses `path` unless it is a regular file of at most `maxBytes` (default: any size). A path
 * that cannot be examined is left to the reader, which reports it in its own words.
 */
export function requireRegularFile(path: string, what: string, maxBytes = Number.MAX_SAFE_INTEGER): void {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch {
    return;
  }
  refuseUnlessRegular(stats, path, what, maxBytes);
}

/** The bytes of the regular file at `path` (at most `maxBytes`); IO for a file that cannot be read. */
export function readRegularFile(path: string, what: string, maxBytes: number, tooLarge?: TooLarge): Uint8Array {
  let first: Stats | undefined;
  try {
    first = statSync(path);
  } catch {
    // left to the open below, which reports it in its own words
  }
  if (first) refuseUnlessRegular(first, path, what, maxBytes, tooLarge);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (cause) {
    throw new CuzkError("IO", `cannot read ${what} ${path}: ${(cause as Error).message}`, { cause });
  }
  try {
    const stats = fstatSync(fd);
    refuseUnlessRegular(stats, path, what, maxBytes, tooLarge);
    const bytes = new Uint8Array(stats.size);
    let filled = 0;
    while (filled < bytes.length) {
      const n = readSync(fd, bytes, filled, bytes.length - filled, filled);
      if (n === 0) throw new CuzkError("IO", `${what} ${path} shrank while it was read`);
      filled += n;
    }
    if (readSync(fd, new Uint8Array(1), 0, 1, filled) !== 0) throw new CuzkError("IO", `${what} ${path} grew while it was read`);
    return bytes;
  } catch (cause) {
    if (cause instanceof CuzkError) throw cause;
    throw new CuzkError("IO", `cannot read ${what} ${path}: ${(cause as Error).message}`, { cause });
  } finally {
    closeSync(fd);
  }
}

/**
 * The .wtns file at `path` for a key whose circuit has `nVars` wires: one larger than such a
 * witness can be is refused naming both counts (the usual cause: the witness of another circuit).
 */
export function readWitnessFile(path: string, nVars: number): Uint8Array {
  const valueBytes = ABI.FR_BYTES;
  const maxBytes = nVars * valueBytes + LIMITS.witnessFileSlack;
  return readRegularFile(path, "witness", maxBytes, (size) =>
    `witness ${path} has ${size} bytes, room for about ${Math.floor(size / valueBytes)} values, but the key's circuit has ` +
    `${nVars} wires (its witness is at most ${maxBytes} bytes): is it the witness of another circuit?`);
}
