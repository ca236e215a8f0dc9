/**
 * @module
 * What the test files share about the native library: the loaded Library (or the load error, so
 * that tests needing it fail with the fix in the message rather than being skipped), and `needs`,
 * which skips a test only while the library lacks the functions it exercises. The ABI test is the
 * one that fails on a missing function; feature tests start running the day the symbol appears.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Library } from "../../src/library.ts";
import type { SymbolName } from "../../src/ffi/symbols.ts";

let loadError: unknown;
let loaded: Library | undefined;
try {
  loaded = Library.open();
} catch (error) {
  loadError = error;
}

/** The library under test; throws the load error (which says how to build it) when there is none. */
export function library(): Library {
  if (!loaded) throw loadError;
  return loaded;
}

/** The load error, if the library could not be loaded. */
export const libraryLoadError: unknown = loadError;

/**
 * A `skip` option for node:test: a reason while the loaded library lacks one of `symbols`, else
 * false. When no library loads at all the test is not skipped: it runs and fails with the load
 * error.
 */
export function needs(...symbols: SymbolName[]): { skip: string | false } {
  if (!loaded) return { skip: false };
  const missing = symbols.filter((name) => loaded!.missingSymbols.includes(name));
  return { skip: missing.length > 0 ? `waiting for native symbol(s): ${missing.join(", ")}` : false };
}

/** A fixture of tests/fixtures/<curve>/<name>/ (see tests/fixtures/README.md). */
export interface Fixture {
  curve: string;
  name: string;
  dir: string;
  file(name: string): string;
  json<T = unknown>(name: string): T;
  bytes(name: string): Uint8Array;
  manifest: Record<string, unknown> | undefined;
}

export const FIXTURES_DIR = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** Every fixture directory with a circuit.zkey, witness.wtns and verification_key.json. */
export function fixtures(): Fixture[] {
  if (!existsSync(FIXTURES_DIR)) return [];
  let manifest: Array<Record<string, unknown>> = [];
  try {
    manifest = JSON.parse(readFileSync(FIXTURES_DIR + "manifest.json", "utf8")).fixtures ?? [];
  } catch {
    // no manifest: fixtures are still found by walking the folders
  }
  const out: Fixture[] = [];
  for (const curve of readdirSync(FIXTURES_DIR, { withFileTypes: true })) {
    if (!curve.isDirectory()) continue;
    for (const entry of readdirSync(FIXTURES_DIR + curve.name, { withFileTypes: true })) {
      const dir = `${FIXTURES_DIR}${curve.name}/${entry.name}/`;
      if (!entry.isDirectory() || !["circuit.zkey", "witness.wtns", "verification_key.json"].every((f) => existsSync(dir + f))) continue;
      out.push({
        curve: curve.name,
        name: entry.name,
        dir,
        file: (name) => dir + name,
        json: (name) => JSON.parse(readFileSync(dir + name, "utf8")),
        bytes: (name) => new Uint8Array(readFileSync(dir + name)),
        manifest: manifest.find((m) => m.name === entry.name && m.curve === curve.name),
      });
    }
  }
  return out.sort((a, b) => `${a.curve}/${a.name}`.localeCompare(`${b.curve}/${b.name}`));
}
