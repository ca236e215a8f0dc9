/**
 * @module
 * Deno adapter: translates the neutral symbol table into `Deno.dlopen` definitions. Deno's
 * pointers are opaque objects; they are converted to and from the `Pointer` bigint here so that
 * nothing else sees them. Nonblocking symbols are bound twice: once blocking (for `call`) and once
 * with `nonblocking: true` (for `callAsync`, which Deno runs on its own thread pool).
 */
import type { NativeArgument, NativeLibrary, NativeResult, NativeType, Pointer, ResultReaders, SymbolDefinition } from "./types.ts";
import { asPointer, decodeResult } from "./types.ts";

type DenoType = "void" | "u8" | "u32" | "i32" | "u64" | "usize" | "pointer";

const DENO_TYPES: Record<NativeType, DenoType> = {
  void: "void",
  u8: "u8",
  u32: "u32",
  i32: "i32",
  u64: "u64",
  usize: "usize",
  pointer: "pointer",
  buffer: "pointer",
  cstring: "pointer",
};

const ASYNC_SUFFIX = "__nonblocking";

/** Deno returns pointers as opaque objects (null for NULL): their addresses, and C strings read. */
const DENO_RESULTS: ResultReaders = {
  pointer: (value) => asPointer(value === null ? 0n : Deno.UnsafePointer.value(value as Deno.PointerObject)),
  cstring: (value) => (value === null ? "" : Deno.UnsafePointerView.getCString(value as Deno.PointerObject)),
};

function toDenoPointer(value: NativeArgument): Deno.PointerValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return value === 0n ? null : Deno.UnsafePointer.create(value);
  if (typeof value === "number") return value === 0 ? null : Deno.UnsafePointer.create(BigInt(value));
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    // UnsafePointer.of points at the view's first byte (byteOffset included).
    return Deno.UnsafePointer.of(value as BufferSource);
  }
  throw new TypeError(`cannot pass ${typeof value} as a pointer`);
}

function toDenoArgument(type: NativeType, value: NativeArgument): unknown {
  return type === "pointer" || type === "buffer" || type === "cstring" ? toDenoPointer(value) : value;
}

/** Opens `path` with Deno.dlopen and binds the `available` symbols of `table`. */
export function openDenoLibrary(
  path: string,
  table: Readonly<Record<string, SymbolDefinition>>,
  available: ReadonlySet<string>,
): NativeLibrary {
  const definitions: Record<string, Deno.ForeignFunction> = {};
  for (const name of available) {
    const { parameters, result, nonblocking } = table[name];
    const denoParameters = parameters.map((p) => DENO_TYPES[p]) as Deno.NativeType[];
    const denoResult = DENO_TYPES[result] as Deno.NativeResultType;
    definitions[name] = { parameters: denoParameters, result: denoResult };
    if (nonblocking) {
      definitions[name + ASYNC_SUFFIX] = { name, parameters: denoParameters, result: denoResult, nonblocking: true };
    }
  }
  const library = Deno.dlopen(path, definitions);
  const fns = library.symbols as unknown as Record<string, (...args: unknown[]) => unknown>;
  // Arguments of nonblocking calls in flight: Deno must not collect buffers a running call uses.
  const inFlight = new Set<unknown[]>();

  const convert = (name: string, args: readonly NativeArgument[]) => {
    const definition = table[name];
    if (!fns[name]) throw new Error(`symbol ${name} is not bound`);
    return { definition, converted: definition.parameters.map((type, i) => toDenoArgument(type, args[i])) };
  };

  return {
    path,
    runtime: "deno",
    available,
    call(name, args) {
      const { definition, converted } = convert(name, args);
      return decodeResult(definition.result, fns[name](...converted), DENO_RESULTS);
    },
    async callAsync(name, args) {
      const { definition, converted } = convert(name, args);
      if (!definition.nonblocking) return decodeResult(definition.result, fns[name](...converted), DENO_RESULTS);
      const keep = [args, converted];
      inFlight.add(keep);
      try {
        return decodeResult(definition.result, await (fns[name + ASYNC_SUFFIX](...converted) as Promise<unknown>), DENO_RESULTS);
      } finally {
        inFlight.delete(keep);
      }
    },
    view(pointer: Pointer, byteLength: number) {
      if (byteLength === 0) return new ArrayBuffer(0);
      const p = Deno.UnsafePointer.create(pointer);
      if (p === null) throw new TypeError("cannot view a NULL pointer");
      return Deno.UnsafePointerView.getArrayBuffer(p, byteLength);
    },
    close() {
      if (inFlight.size === 0) library.close();
    },
  };
}
