/**
 * @module
 * Node adapter: translates the neutral symbol table into koffi 3 declarations. Koffi already
 * represents pointers as bigint and accepts typed arrays wherever a pointer is expected, so the
 * translation is short; long calls use koffi's `.async`, which runs them on koffi's worker threads.
 */
import { createRequire } from "node:module";
import type { NativeArgument, NativeLibrary, NativeResult, NativeType, Pointer, ResultReaders } from "./types.ts";
import { asPointer, decodeResult } from "./types.ts";
import type { SymbolDefinition } from "./types.ts";

// koffi is CommonJS with a native addon; createRequire keeps this file loadable as plain ESM (made
// when Node first opens a library: other runtimes, and imports from non-file URLs, never need it).
let nodeRequire: NodeRequire | undefined;

interface KoffiFunction {
  (...args: unknown[]): unknown;
  async(...args: unknown[]): void;
}
interface KoffiLibrary {
  func(name: string, result: string, parameters: string[]): KoffiFunction;
  unload(): void;
}
interface Koffi {
  load(path: string): KoffiLibrary;
  view(pointer: bigint, length: number): ArrayBuffer;
}

const KOFFI_TYPES: Record<NativeType, string> = {
  void: "void",
  u8: "uint8_t",
  u32: "uint32_t",
  i32: "int32_t",
  u64: "uint64_t",
  usize: "size_t",
  pointer: "void *",
  buffer: "void *",
  cstring: "const char *",
};

/** koffi returns addresses as bigints (null for NULL) and C strings as JS strings. */
const KOFFI_RESULTS: ResultReaders = {
  pointer: (value) => asPointer(value as bigint | null),
  cstring: (value) => (value === null ? "" : String(value)),
};

function toKoffiArgument(type: NativeType, value: NativeArgument): unknown {
  if (type === "pointer" || type === "buffer") {
    if (value === null || value === undefined || value === 0n) return null;
    return value; // bigint address, or a typed array / ArrayBuffer koffi passes in place
  }
  return value;
}

/** Opens `path` with koffi and binds the `available` symbols of `table`. */
export function openNodeLibrary(
  path: string,
  table: Readonly<Record<string, SymbolDefinition>>,
  available: ReadonlySet<string>,
): NativeLibrary {
  const koffi = (nodeRequire ??= createRequire(import.meta.url))("koffi") as Koffi;
  const library = koffi.load(path);
  const functions = new Map<string, KoffiFunction>();
  for (const name of available) {
    const definition = table[name];
    functions.set(name, library.func(name, KOFFI_TYPES[definition.result], definition.parameters.map((p) => KOFFI_TYPES[p])));
  }
  // Arguments of calls in flight, kept reachable until the call settles.
  const inFlight = new Set<unknown[]>();

  const prepare = (name: string, args: readonly NativeArgument[]) => {
    const fn = functions.get(name);
    if (!fn) throw new Error(`symbol ${name} is not bound`);
    const definition = table[name];
    return { fn, definition, converted: definition.parameters.map((type, i) => toKoffiArgument(type, args[i])) };
  };

  return {
    path,
    runtime: "node",
    available,
    call(name, args) {
      const { fn, definition, converted } = prepare(name, args);
      return decodeResult(definition.result, fn(...converted), KOFFI_RESULTS);
    },
    callAsync(name, args) {
      const { fn, definition, converted } = prepare(name, args);
      if (!definition.nonblocking) {
        try {
          return Promise.resolve(decodeResult(definition.result, fn(...converted), KOFFI_RESULTS));
        } catch (error) {
          return Promise.reject(error);
        }
      }
      const keep = [args, converted];
      inFlight.add(keep);
      return new Promise<NativeResult>((resolve, reject) => {
        fn.async(...converted, (error: unknown, result: unknown) => {
          inFlight.delete(keep);
          if (error) reject(error);
          else resolve(decodeResult(definition.result, result, KOFFI_RESULTS));
        });
      });
    },
    view(pointer: Pointer, byteLength: number) {
      if (byteLength === 0) return new ArrayBuffer(0);
      return koffi.view(pointer, byteLength);
    },
    close() {
      // koffi cannot unload while async calls run; the library stays mapped for the process.
      if (inFlight.size === 0) library.unload();
    },
  };
}
