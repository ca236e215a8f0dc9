/**
 * @module
 * Finds and opens the native library with the FFI of the runtime we run in, and wraps it in
 * `Native`: calls by C name that throw `MISSING_SYMBOL` for functions the library does not export
 * yet, encode `cstring` arguments, and keep `callAsync` the one way to run a long call off the JS
 * thread. The library is looked for at: an explicit path (authoritative), else `$CUZK_LIB`, then
 * `build/libcuzk.so` under the package root; a failure lists what was tried and how to build it.
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { CuzkError } from "../errors.ts";
import { openBunLibrary, importBunFfi } from "./bun.ts";
import type { BunFfi } from "./bun.ts";
import { openDenoLibrary } from "./deno.ts";
import { exportedFunctions } from "./elf.ts";
import { openNodeLibrary } from "./node.ts";
import { ABI, symbolTable } from "./symbols.ts";
import type { SymbolName } from "./symbols.ts";
import type { NativeArgument, NativeLibrary, NativeResult, Pointer, RuntimeName } from "./types.ts";
import { encodeCString } from "./types.ts";

/** The runtime this code runs in. */
export const runtime: RuntimeName = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined"
  ? "deno"
  : typeof (process.versions as Record<string, string | undefined>).bun === "string"
  ? "bun"
  : "node";

// bun:ffi can only be imported dynamically (Deno and Node cannot resolve it); do it once, up front.
const bunFfi: BunFfi | undefined = runtime === "bun" ? await importBunFfi() : undefined;

/** The package root (where package.json and build/ live). */
export const packageRoot: string = fileURLToPath(new URL("../../", import.meta.url));

/** The command that builds the library, quoted in load errors. */
export const BUILD_COMMAND = "npm run build   (or: npm run build:cmake)";

/** Where to find the library. */
export interface LoadOptions {
  /** Path of libcuzk.so; overrides $CUZK_LIB and the build/ folder. */
  path?: string;
}

/** The library path that `options` selects, or a LOAD CuzkError listing what was tried. */
export function resolveLibraryPath(options: LoadOptions = {}): string {
  const tried: string[] = [];
  if (options.path) {
    // An explicit path is authoritative: falling back silently would load another build.
    if (existsSync(options.path)) return options.path;
    throw new CuzkError(
      "LOAD",
      `cuzk native library not found at ${options.path} (the path option). ` +
        `Build it from the package root with: ${BUILD_COMMAND}, or pass the path of an existing libcuzk.so.`,
      { operation: "load" },
    );
  }
  const fromEnv = process.env.CUZK_LIB;
  if (fromEnv) {
    if (existsSync(fromEnv)) return fromEnv;
    tried.push(`${fromEnv} ($CUZK_LIB)`);
  }
  const built = fileURLToPath(new URL("../../build/libcuzk.so", import.meta.url));
  if (existsSync(built)) return built;
  tried.push(`${built} (the package's build folder)`);
  throw new CuzkError(
    "LOAD",
    `cuzk native library not found. Tried:\n  ${tried.join("\n  ")}\n` +
      `Build it from the package root with: ${BUILD_COMMAND}, or set CUZK_LIB to the path of libcuzk.so.`,
    { operation: "load" },
  );
}

/** The opened library: calls by C name, with missing symbols reported as CuzkErrors. */
export class Native {
  readonly #library: NativeLibrary;
  /** Functions of cuzk.h that this library does not export. */
  readonly missing: readonly string[];

  constructor(library: NativeLibrary) {
    this.#library = library;
    this.missing = Object.keys(symbolTable).filter((name) => !library.available.has(name));
  }

  /** Path the library was loaded from. */
  get path(): string {
    return this.#library.path;
  }

  /** The runtime whose FFI loaded it. */
  get runtime(): RuntimeName {
    return this.#library.runtime;
  }

  /** Whether the library exports `name`. */
  has(name: SymbolName): boolean {
    return this.#library.available.has(name);
  }

  /** Throws MISSING_SYMBOL unless every name is exported. */
  require(...names: SymbolName[]): void {
    const absent = names.filter((name) => !this.#library.available.has(name));
    if (absent.length > 0) {
      throw new CuzkError(
        "MISSING_SYMBOL",
        `${this.#library.path} does not export ${absent.join(", ")} (not implemented in this build of the library yet?). ` +
          `Rebuild it with: ${BUILD_COMMAND}`,
        { operation: absent.join(", ") },
      );
    }
  }

  #prepare(name: SymbolName, args: NativeArgument[]): NativeArgument[] {
    this.require(name);
    const parameters = symbolTable[name].parameters;
    if (args.length !== parameters.length) {
      throw new TypeError(`${name} takes ${parameters.length} arguments, got ${args.length}`);
    }
    return args.map((value, i) => (parameters[i] === "cstring" && typeof value === "string" ? encodeCString(value) : value));
  }

  /** Calls `name` on the JS thread. */
  call(name: SymbolName, ...args: NativeArgument[]): NativeResult {
    return this.#library.call(name, this.#prepare(name, args));
  }

  /**
   * Calls `name`; when the table marks it nonblocking the call runs off the JS thread (Deno
   * nonblocking, koffi async, a Bun worker) and every argument stays referenced until it settles.
   */
  callAsync(name: SymbolName, ...args: NativeArgument[]): Promise<NativeResult> {
    let prepared: NativeArgument[];
    try {
      prepared = this.#prepare(name, args);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#library.callAsync(name, prepared);
  }

  /** A zero-copy ArrayBuffer over native memory. */
  view(pointer: Pointer, byteLength: number): ArrayBuffer {
    return this.#library.view(pointer, byteLength);
  }
}

const opened = new Map<string, Native>();

/**
 * Opens the library (once per path and process) with this runtime's FFI and checks its ABI
 * version. Throws a LOAD CuzkError that says how to fix the problem.
 */
export function openNative(options: LoadOptions = {}): Native {
  const path = resolveLibraryPath(options);
  const cached = opened.get(path);
  if (cached) return cached;
  let available: Set<string>;
  try {
    const exported = exportedFunctions(path);
    available = new Set(Object.keys(symbolTable).filter((name) => exported.has(name)));
  } catch (cause) {
    if (!/not an ELF|not ELF64/.test(String((cause as Error)?.message))) {
      throw new CuzkError("LOAD", `cannot read ${path}: ${(cause as Error)?.message ?? cause}`, { cause, operation: "load" });
    }
    available = new Set(Object.keys(symbolTable)); // not ELF (macOS): bind everything, let the FFI complain
  }
  let library: NativeLibrary;
  try {
    library = runtime === "deno"
      ? openDenoLibrary(path, symbolTable, available)
      : runtime === "bun"
      ? openBunLibrary(bunFfi!, path, symbolTable, available)
      : openNodeLibrary(path, symbolTable, available);
  } catch (cause) {
    const hint = runtime === "deno" ? " (Deno needs --allow-ffi, or -A)" : "";
    throw new CuzkError(
      "LOAD",
      `cannot load ${path} with ${runtime}'s FFI${hint}: ${(cause as Error)?.message ?? cause}\n` +
        `If the file is stale or built for another machine, rebuild it with: ${BUILD_COMMAND}`,
      { cause, operation: "load" },
    );
  }
  const native = new Native(library);
  if (native.has("cuzk_abi_version")) {
    const version = native.call("cuzk_abi_version") as number;
    if (version !== ABI.ABI_VERSION) {
      throw new CuzkError(
        "ABI_MISMATCH",
        `${path} implements cuzk ABI ${version}, these bindings ABI ${ABI.ABI_VERSION}: rebuild it with ${BUILD_COMMAND}`,
        { operation: "load" },
      );
    }
  }
  opened.set(path, native);
  return native;
}
