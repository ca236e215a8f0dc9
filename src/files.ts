/**
 * @module
 * Files given by path are refused before anything is read unless they are regular files of at
 * most a stated size: a FIFO would block the reader and /dev/zero would be read without end. A
 * file is opened non-blocking and checked again on its descriptor, so a path swapped after the
 * first check gains nothing; reading stops at the size seen (a file that grows meanwhile is refused).
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import type { Stats } from "node:fs";
import { CuzkError } from "./errors.ts";

function refuseUnlessRegular(stats: Stats, path: string, what: string, maxBytes: number): void {
  if (!stats.isFile()) {
    throw new CuzkError("INVALID_ARGUMENT", `${what} ${path} is not a regular file (a device, FIFO, socket or directory); give the path of a file`);
  }
  if (stats.size > maxBytes) {
    throw new CuzkError("INVALID_ARGUMENT", `${what} ${path} has ${stats.size} bytes, more than the ${maxBytes} it may have`);
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
export function readRegularFile(path: string, what: string, maxBytes: number): Uint8Array {
  requireRegularFile(path, what, maxBytes);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (cause) {
    throw new CuzkError("IO", `cannot read ${what} ${path}: ${(cause as Error).message}`, { cause });
  }
  try {
    const stats = fstatSync(fd);
    refuseUnlessRegular(stats, path, what, maxBytes);
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
