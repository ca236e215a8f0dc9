/**
 * @module
 * Finds and opens the native library with the FFI of the runtime we run in, and wraps it in
 * `Native`: calls by C name that throw `MISSING_SYMBOL` for functions the library does not export
 * yet, encode `cstring` arguments, and keep `callAsync` the one way to run a long call off the JS
 * thread. The library is looked for at: an explicit path, else `$CUZK_LIB` (both authoritative: a
 * missing file is an error), then `build/libcuzk.so` under the package root (a source build), then
 * the prebuilt platform packages (`cuzk-linux-x64-cuda` first where an NVIDIA driver and a GPU are
 * present, else `cuzk-linux-x64`); a failure lists what was tried and ends with the command that fixes it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { CuzkError } from "../errors.ts";
import { loadBunFfi, openBunLibrary } from "./bun.ts";
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

// bun:ffi, loaded when the first library is opened under Bun (Deno and Node cannot resolve it).
let bunFfi: BunFfi | undefined;

/**
 * A path under the package root (where package.json and build/ live), or undefined when this code
 * was not loaded from files (a JSR or https import: then only an explicit path or $CUZK_LIB finds
 * the library).
 */
function packagePath(relative: string): string | undefined {
  return import.meta.url.startsWith("file:") ? fileURLToPath(new URL(`../../${relative}`, import.meta.url)) : undefined;
}

/** The package root, or undefined for code not loaded from files. */
export const packageRoot: string | undefined = packagePath("");

/** The command that builds the library in a checkout (the package root holds CMakeLists.txt). */
export const BUILD_COMMAND = "npm run build:cmake";

/** The prebuilt library packages of this platform, by what they run on (none off linux-x64). */
export const PLATFORM_PACKAGES: { cpu: string; cuda: string } | undefined =
  process.platform === "linux" && process.arch === "x64" ? { cpu: "cuzk-linux-x64", cuda: "cuzk-linux-x64-cuda" } : undefined;

/** Whether an NVIDIA driver is loaded and a GPU node exists (what the CUDA package needs to be worth it). */
export function nvidiaGpuPresent(): boolean {
  try {
    return existsSync("/proc/driver/nvidia/version") && readdirSync("/dev").some((name) => /^nvidia\d+$/.test(name));
  } catch {
    return false; // e.g. Deno without read permission for /dev
  }
}

/** The platform packages to look in, the one this machine should use first. */
function platformPackageOrder(): string[] {
  if (!PLATFORM_PACKAGES) return [];
  const { cpu, cuda } = PLATFORM_PACKAGES;
  // The CUDA library holds the CPU backend too: without a GPU it is used when it is all there is.
  return nvidiaGpuPresent() ? [cuda, cpu] : [cpu, cuda];
}

/** libcuzk.so of an installed platform package, or undefined when that package is not installed. */
function platformPackageLibrary(name: string): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(`${name}/libcuzk.so`); // throws off file: URLs too
  } catch {
    return undefined;
  }
}

/** This package's version (the platform packages are published with the same one). */
function packageVersion(): string | undefined {
  try {
    return (JSON.parse(readFileSync(`${packageRoot ?? ""}package.json`, "utf8")) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** The command that installs `name` at this package's version, for the runtime we run in. */
function installCommand(name: string): string {
  const version = packageVersion();
  const spec = version ? `${name}@${version}` : name;
  return runtime === "deno" ? `deno add npm:${spec}` : runtime === "bun" ? `bun add ${spec}` : `npm install ${spec}`;
}

/** The command that gives this machine a working library: a source build in a checkout, else the platform package. */
export function fixCommand(): string {
  if (packageRoot && existsSync(`${packageRoot}CMakeLists.txt`)) return `cd ${packageRoot} && ${BUILD_COMMAND}`;
  const order = platformPackageOrder();
  if (order.length > 0) return installCommand(order[0]);
  return `no prebuilt library for ${process.platform}-${process.arch}: build libcuzk.so from the cuzk sources ` +
    `(README, "Build from source") and run with: CUZK_LIB=/path/to/libcuzk.so`;
}

/** The command that replaces the library at `path` (stale, or built for another ABI). */
function replaceCommand(path: string): string {
  const fromPackage = platformPackageOrder().find((name) => platformPackageLibrary(name) === path);
  if (fromPackage) return installCommand(fromPackage);
  const buildDir = dirname(path);
  // A CMake build folder (of a checkout or not) rebuilds itself.
  if (existsSync(join(buildDir, "CMakeCache.txt"))) return `cmake --build ${buildDir} --target cuzk`;
  return fixCommand();
}

/** Where to find the library. */
export interface LoadOptions {
  /** Path of libcuzk.so; overrides $CUZK_LIB, the build/ folder and the platform packages. */
  path?: string;
}

/** The library path that `options` selects, or a LOAD CuzkError listing what was tried. */
export function resolveLibraryPath(options: LoadOptions = {}): string {
  if (options.path) {
    // An explicit path is authoritative: falling back silently would load another build.
    if (existsSync(options.path)) return options.path;
    throw new CuzkError(
      "LOAD",
      `cuzk native library not found at ${options.path} (the path option). ` +
        `Pass the path of an existing libcuzk.so, or get one with: ${fixCommand()}`,
      { operation: "load" },
    );
  }
  const fromEnv = process.env.CUZK_LIB;
  if (fromEnv) {
    // As authoritative as the option: a typo must not load some other library.
    if (existsSync(fromEnv)) return fromEnv;
    throw new CuzkError(
      "LOAD",
      `cuzk native library not found at ${fromEnv} ($CUZK_LIB). ` +
        `Point CUZK_LIB at an existing libcuzk.so, or use the default search with: unset CUZK_LIB`,
      { operation: "load" },
    );
  }
  const tried: string[] = [];
  const built = packagePath("build/libcuzk.so");
  if (built && existsSync(built)) return built;
  if (built) tried.push(`${built} (a source build)`);
  else tried.push(`${import.meta.url} is not a file: give the library's path (CUZK_LIB=/path/to/libcuzk.so)`);
  for (const name of platformPackageOrder()) {
    const fromPackage = platformPackageLibrary(name);
    if (fromPackage && existsSync(fromPackage)) return fromPackage;
    tried.push(`${fromPackage ?? name} (the package ${name}${fromPackage ? "" : ": not installed"})`);
  }
  throw new CuzkError(
    "LOAD",
    `cuzk native library not found. Tried:\n  ${tried.join("\n  ")}\n` +
      `Set CUZK_LIB to the path of a libcuzk.so, or get one with: ${fixCommand()}`,
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
          `Replace it with: ${replaceCommand(this.#library.path)}`,
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
      ? openBunLibrary(bunFfi ??= loadBunFfi(), path, symbolTable, available)
      : openNodeLibrary(path, symbolTable, available);
  } catch (cause) {
    if (runtime === "node" && (cause as { code?: string })?.code === "MODULE_NOT_FOUND" && /koffi/.test(String((cause as Error).message))) {
      throw new CuzkError("LOAD", "Node loads the library through the npm package koffi, which is not installed; install it with: npm install koffi", {
        cause,
        operation: "load",
      });
    }
    const hint = runtime === "deno" ? " (Deno needs --allow-ffi, or -A)" : "";
    throw new CuzkError(
      "LOAD",
      `cannot load ${path} with ${runtime}'s FFI${hint}: ${(cause as Error)?.message ?? cause}\n` +
        `If the file is stale or built for another machine, replace it with: ${replaceCommand(path)}`,
      { cause, operation: "load" },
    );
  }
  const native = new Native(library);
  if (native.has("cuzk_abi_version")) {
    const version = native.call("cuzk_abi_version") as number;
    if (version !== ABI.ABI_VERSION) {
      throw new CuzkError(
        "ABI_MISMATCH",
        `${path} implements cuzk ABI ${version}, these bindings ABI ${ABI.ABI_VERSION}: replace it with: ${replaceCommand(path)}`,
        { operation: "load" },
      );
    }
  }
  opened.set(path, native);
  return native;
}
