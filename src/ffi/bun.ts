/**
 * @module
 * Bun adapter: translates the neutral symbol table into `bun:ffi` definitions. bun:ffi has no
 * asynchronous calls, so `callAsync` of a nonblocking symbol posts the call to a Worker
 * (bun_worker.ts) that has opened the same library itself. Only numbers cross to the worker: the
 * addresses of typed arrays (taken with `ptr`) and of native buffers, which stay referenced here
 * until the call settles.
 */
import { createRequire } from "node:module";
import type { NativeArgument, NativeLibrary, NativeResult, NativeType, Pointer, ResultReaders, SymbolDefinition } from "./types.ts";
import { asPointer, decodeResult } from "./types.ts";

/** The part of bun:ffi used here (typed locally so that Deno and Node type-checks need no Bun types). */
export interface BunFfi {
  dlopen(path: string, symbols: Record<string, { args: string[]; returns: string }>): {
    symbols: Record<string, (...args: unknown[]) => unknown>;
    close(): void;
  };
  ptr(view: ArrayBufferView | ArrayBuffer, byteOffset?: number): number;
  toArrayBuffer(pointer: number, byteOffset: number, byteLength: number): ArrayBuffer;
}

interface BunWorker {
  postMessage(message: unknown): void;
  addEventListener(type: "message" | "error", listener: (event: { data?: unknown; message?: string }) => void): void;
  terminate(): void;
  ref(): void;
  unref(): void;
}

const BUN_TYPES: Record<NativeType, string> = {
  void: "void",
  u8: "u8",
  u32: "u32",
  i32: "i32",
  u64: "u64",
  usize: "usize",
  pointer: "ptr",
  buffer: "ptr",
  cstring: "ptr",
};

/** bun:ffi definitions for `names` of `table` (the worker gets them in its init message). */
export function bunDefinitions(table: Readonly<Record<string, SymbolDefinition>>, names: Iterable<string>) {
  const definitions: Record<string, { args: string[]; returns: string }> = {};
  for (const name of names) {
    const { parameters, result } = table[name];
    definitions[name] = {
      args: parameters.map((p) => BUN_TYPES[p]),
      // cstring results come back as an address and are read with toArrayBuffer below.
      returns: BUN_TYPES[result],
    };
  }
  return definitions;
}

/**
 * Loads bun:ffi without a static import, which Deno and Node could not resolve, and without an
 * `await`: a module graph with a top-level await cannot be `require`d, and CommonJS projects load
 * this package with `require`.
 */
export function loadBunFfi(): BunFfi {
  return createRequire(import.meta.url)("bun:ffi") as BunFfi;
}

function toBunPointer(ffi: BunFfi, value: NativeArgument): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint" || typeof value === "number") return value == 0 ? null : Number(value);
  if (value instanceof ArrayBuffer) return value.byteLength === 0 ? null : ffi.ptr(value);
  if (ArrayBuffer.isView(value)) return value.byteLength === 0 ? null : ffi.ptr(value);
  throw new TypeError(`cannot pass ${typeof value} as a pointer`);
}

function readCString(ffi: BunFfi, address: number): string {
  // Status names are short; read up to the NUL in growing windows.
  for (let window = 64; ; window *= 4) {
    const bytes = new Uint8Array(ffi.toArrayBuffer(address, 0, window));
    const end = bytes.indexOf(0);
    if (end >= 0) return new TextDecoder().decode(bytes.subarray(0, end));
    if (window > 1 << 20) throw new Error("unterminated C string");
  }
}

/** bun:ffi returns addresses as numbers; a C string is read through `ffi`. */
const bunResults = (ffi: BunFfi): ResultReaders => ({
  pointer: (value) => asPointer(value as number | null),
  cstring: (value) => (value === null || value === 0 ? "" : readCString(ffi, value as number)),
});

/** Opens `path` with bun:ffi (as loaded by `loadBunFfi`) and binds the `available` symbols of `table`. */
export function openBunLibrary(
  ffi: BunFfi,
  path: string,
  table: Readonly<Record<string, SymbolDefinition>>,
  available: ReadonlySet<string>,
): NativeLibrary {
  const library = ffi.dlopen(path, bunDefinitions(table, available));
  const fns = library.symbols;
  const results = bunResults(ffi);
  const nonblocking = [...available].filter((name) => table[name].nonblocking);

  const idle: BunWorker[] = [];
  const all = new Set<BunWorker>();
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void; keep: unknown }>();
  let nextId = 1;

  const spawn = (): BunWorker => {
    const WorkerClass = (globalThis as unknown as { Worker: new (url: URL) => BunWorker }).Worker;
    const worker = new WorkerClass(new URL(import.meta.url.endsWith(".ts") ? "./bun_worker.ts" : "./bun_worker.js", import.meta.url)); // .js: the compiled package
    worker.addEventListener("message", (event) => {
      const { id, result, error } = event.data as { id: number; result?: unknown; error?: string };
      const call = pending.get(id);
      if (!call) return;
      pending.delete(id);
      worker.unref();
      idle.push(worker);
      if (error !== undefined) call.reject(new Error(error));
      else call.resolve(result);
    });
    worker.addEventListener("error", (event) => {
      // A worker that fails is dropped; its pending call (if any) is rejected by id below.
      all.delete(worker);
      for (const [id, call] of pending) {
        if ((call.keep as { worker?: BunWorker }).worker === worker) {
          pending.delete(id);
          call.reject(new Error(`cuzk call worker failed: ${event.message ?? "unknown error"}`));
        }
      }
    });
    worker.postMessage({ type: "init", path, definitions: bunDefinitions(table, nonblocking) });
    all.add(worker);
    return worker;
  };

  const convert = (name: string, args: readonly NativeArgument[]) => {
    const definition = table[name];
    if (!fns[name]) throw new Error(`symbol ${name} is not bound`);
    const converted = definition.parameters.map((type, i) =>
      type === "pointer" || type === "buffer" || type === "cstring" ? toBunPointer(ffi, args[i]) : args[i]
    );
    return { definition, converted };
  };

  return {
    path,
    runtime: "bun",
    available,
    call(name, args) {
      const { definition, converted } = convert(name, args);
      return decodeResult(definition.result, fns[name](...converted), results);
    },
    callAsync(name, args) {
      let prepared;
      try {
        prepared = convert(name, args);
        if (!prepared.definition.nonblocking) {
          return Promise.resolve(decodeResult(prepared.definition.result, fns[name](...prepared.converted), results));
        }
      } catch (error) {
        return Promise.reject(error);
      }
      const { definition, converted } = prepared;
      const worker = idle.pop() ?? spawn();
      worker.ref();
      const id = nextId++;
      return new Promise<NativeResult>((resolve, reject) => {
        // `keep` holds the JS memory whose addresses the worker uses until the call settles.
        pending.set(id, {
          resolve: (value) => resolve(decodeResult(definition.result, value, results)),
          reject,
          keep: { args, worker },
        });
        worker.postMessage({ type: "call", id, name, args: converted });
      });
    },
    view(pointer: Pointer, byteLength: number) {
      if (byteLength === 0) return new ArrayBuffer(0);
      return ffi.toArrayBuffer(Number(pointer), 0, byteLength);
    },
    close() {
      if (pending.size > 0) return;
      for (const worker of all) worker.terminate();
      all.clear();
      idle.length = 0;
      library.close();
    },
  };
}
