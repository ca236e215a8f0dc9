/**
 * @module
 * The one way the object layer calls a function of cuzk.h that reports errors: `invoke` and
 * `invokeAsync` append a fresh error buffer (the `char* err, size_t err_cap` every such function
 * ends with), and turn a failed status into a CuzkError whose operation names the function. The
 * arguments are typed from the symbol table, so a wrong count or type does not compile.
 */
import { check, errorBuffer, statusCode } from "./errors.ts";
import type { NativeErrorCode } from "./errors.ts";
import type { Native } from "./ffi/load.ts";
import type { SymbolName, symbols } from "./ffi/symbols.ts";
import type { BufferArgument, NativeArgument, NativeType, Pointer } from "./ffi/types.ts";

type ArgumentOf<T> = T extends "u8" | "u32" | "i32" ? number
  : T extends "u64" | "usize" ? number | bigint
  : T extends "pointer" ? Pointer
  : T extends "buffer" ? BufferArgument
  : T extends "cstring" ? string
  : never;

type ParametersOf<N extends SymbolName> = (typeof symbols)[N]["parameters"];

/** The functions that end with `char* err, size_t err_cap` and return a cuzk_status. */
export type CheckedSymbol = {
  [N in SymbolName]: ParametersOf<N> extends readonly [...NativeType[], "buffer", "usize"] ? N : never;
}[SymbolName];

/** The arguments of `N` that precede its error buffer, typed from the symbol table. */
export type CallArguments<N extends CheckedSymbol> = ParametersOf<N> extends readonly [...infer Head, "buffer", "usize"]
  ? { [K in keyof Head]: ArgumentOf<Head[K]> }
  : never;

/** Options of one call. */
export interface CallOptions {
  /** Shown after the function's name in the error's operation, e.g. the path: `cuzk_key_open(path)`. */
  detail?: string;
  /** A status that is an answer rather than a failure (e.g. SHORT_BUFFER of a size query): returned, not thrown. */
  accept?: NativeErrorCode;
}

function operationOf(name: string, options: CallOptions): string {
  return options.detail === undefined ? name : `${name}(${options.detail})`;
}

function settle(status: number, err: Uint8Array, name: string, options: CallOptions): number {
  if (status !== 0 && options.accept !== undefined && statusCode(status) === options.accept) return status;
  check(status, err, operationOf(name, options));
  return status;
}

/** Calls `name` on the JS thread; throws its CuzkError on failure; returns the status (0, or `accept`). */
export function invoke<N extends CheckedSymbol>(native: Native, name: N, args: CallArguments<N>, options: CallOptions = {}): number {
  const err = errorBuffer();
  const status = native.call(name, ...(args as readonly NativeArgument[]), err, err.length) as number;
  return settle(status, err, name, options);
}

/** Like `invoke`, off the JS thread for the functions the table marks nonblocking. */
export async function invokeAsync<N extends CheckedSymbol>(
  native: Native,
  name: N,
  args: CallArguments<N>,
  options: CallOptions = {},
): Promise<number> {
  const err = errorBuffer();
  const status = (await native.callAsync(name, ...(args as readonly NativeArgument[]), err, err.length)) as number;
  return settle(status, err, name, options);
}
