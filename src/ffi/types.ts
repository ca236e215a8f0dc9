/**
 * @module
 * The vocabulary shared by the symbol table and the three runtime adapters: neutral native types,
 * the one branded `Pointer` type, and the `NativeLibrary` interface that the rest of the code
 * calls. Nothing here touches a runtime API, so every other file can stay runtime-agnostic.
 */

/** A native address (handle or memory). Always a `bigint`; `0n` is NULL. */
export type Pointer = bigint & { readonly __cuzkPointer: unique symbol };

/** The NULL pointer. */
export const NULL_POINTER = 0n as Pointer;

/** Brands a bigint as a `Pointer` (only `src/ffi/` and `src/memory/` should need this). */
export function asPointer(value: bigint | number | null | undefined): Pointer {
  if (value === null || value === undefined) return NULL_POINTER;
  return BigInt(value) as Pointer;
}

/**
 * Neutral native types of the symbol table.
 * - `u8`, `u32`, `i32`: numbers. `u64`, `usize`: bigint results, number or bigint arguments.
 * - `pointer`: an opaque handle or native address, passed and returned as a `Pointer`.
 * - `buffer`: memory the call reads or writes: a typed array / ArrayBuffer (JS memory), a
 *   `Pointer` (native memory, e.g. a PinnedBuffer), or null.
 * - `cstring`: a JS string as argument (encoded NUL-terminated UTF-8); a JS string as result.
 */
export type NativeType = "void" | "u8" | "u32" | "i32" | "u64" | "usize" | "pointer" | "buffer" | "cstring";

/** One entry of the symbol table. */
export interface SymbolDefinition {
  readonly parameters: readonly NativeType[];
  readonly result: NativeType;
  /** Long call: `callAsync` runs it off the JS thread. */
  readonly nonblocking?: boolean;
}

/** What may be passed for a `buffer` parameter. */
export type BufferArgument = ArrayBufferView | ArrayBuffer | Pointer | null;

/** A value passed to a native function. */
export type NativeArgument = number | bigint | string | BufferArgument;

/** A value returned by a native function, after normalisation. */
export type NativeResult = number | bigint | string | Pointer | undefined;

/** How one runtime's FFI hands back a returned pointer and a returned C string. */
export interface ResultReaders {
  pointer(value: unknown): Pointer;
  cstring(value: unknown): string;
}

/**
 * A native function's return value in the form the bindings use (`NativeResult`), the same on every
 * runtime: 64-bit integers as bigint, addresses as `Pointer`, C strings read (NULL as "").
 */
export function decodeResult(type: NativeType, value: unknown, read: ResultReaders): NativeResult {
  switch (type) {
    case "void":
      return undefined;
    case "u64":
    case "usize":
      return BigInt(value as number | bigint);
    case "pointer":
    case "buffer":
      return read.pointer(value);
    case "cstring":
      return read.cstring(value);
    default:
      return value as number;
  }
}

/** The runtime an adapter serves. */
export type RuntimeName = "deno" | "bun" | "node";

/** What every runtime adapter provides once a library is open. */
export interface NativeLibrary {
  /** Path the library was loaded from. */
  readonly path: string;
  /** Which FFI did the loading. */
  readonly runtime: RuntimeName;
  /** Symbols of the table that the library exports (others throw MISSING_SYMBOL when called). */
  readonly available: ReadonlySet<string>;
  /** Calls `name` on the JS thread. */
  call(name: string, args: readonly NativeArgument[]): NativeResult;
  /** Calls `name` off the JS thread when the table marks it nonblocking; resolves when it returns. */
  callAsync(name: string, args: readonly NativeArgument[]): Promise<NativeResult>;
  /** A zero-copy ArrayBuffer over `byteLength` bytes of native memory at `pointer`. */
  view(pointer: Pointer, byteLength: number): ArrayBuffer;
  /** Releases the runtime's handle on the library (and the Bun call workers). */
  close(): void;
}

/** Encodes a JS string as NUL-terminated UTF-8, the form `cstring` arguments take natively. */
export function encodeCString(text: string): Uint8Array {
  const encoded = new TextEncoder().encode(text);
  const bytes = new Uint8Array(encoded.length + 1);
  bytes.set(encoded);
  return bytes;
}
