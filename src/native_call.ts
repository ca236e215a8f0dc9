/**
 * @module
 * The one way the object layer calls a function of cuzk.h that reports errors: `invoke` and
 * `invokeAsync` append a fresh error buffer (the `char* err, size_t err_cap` every such function
 * ends with), and turn a failed status into a CuzkError whose operation names the function and
 * whose message says in words what could not be done (no C names: users read it). The arguments
 * are typed from the symbol table, so a wrong count or type does not compile.
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

/** What each checked function does, as the start of a refusal: "cannot <phrase>[ <detail>]: <why>". */
const CALL_PHRASES: Record<CheckedSymbol, string> = {
  cuzk_library_info_get: "read the library's facts",
  cuzk_device_info_get: "read the GPU's facts",
  cuzk_key_open: "open the key",
  cuzk_key_open_memory: "open the key",
  cuzk_key_get_info: "read the key's facts",
  cuzk_key_attach_r1cs: "use the circuit",
  cuzk_key_export_vk: "export the verification key",
  cuzk_key_export_vk_alphabeta: "export the verification key",
  cuzk_key_check_witness: "use the witness",
  cuzk_key_close: "close the key",
  cuzk_context_create: "start the backend",
  cuzk_context_destroy: "close the backend",
  cuzk_prover_create: "make a prover",
  cuzk_prover_create_with: "make a prover",
  cuzk_prover_destroy: "close the prover",
  cuzk_prover_memory_plan: "plan the prover's memory",
  cuzk_plan_memory: "plan the memory",
  cuzk_prove: "prove",
  cuzk_verify: "verify",
  cuzk_msm: "run the MSM",
  cuzk_ntt: "run the NTT",
  cuzk_host_alloc: "allocate host memory",
  cuzk_host_free: "free host memory",
  cuzk_host_register: "register host memory",
  cuzk_host_unregister: "unregister host memory",
  cuzk_synth_circuit: "make the synthetic circuit",
  cuzk_synth_circuit_write: "write the synthetic circuit",
  cuzk_synth_witnesses: "make the synthetic witnesses",
  cuzk_setup_insecure_dev: "make the development key",
  cuzk_setup_insecure_dev_key: "make the development key",
};

/**
 * The message of a refused call: what could not be done, then the library's reason, less a
 * leading copy of `detail` (the library names the path too, for C callers).
 */
function refusalMessage(name: CheckedSymbol, options: CallOptions, reason: string): string {
  const detail = options.detail;
  let why = reason;
  if (detail !== undefined) {
    for (const spelled of [`'${detail}': `, `${detail}: `]) if (why.startsWith(spelled)) why = why.slice(spelled.length);
  }
  return `cannot ${CALL_PHRASES[name]}${detail === undefined ? "" : ` ${detail}`}: ${why}`;
}

function settle(status: number, err: Uint8Array, name: CheckedSymbol, options: CallOptions): number {
  if (status === 0 || (options.accept !== undefined && statusCode(status) === options.accept)) return status;
  check(status, err, operationOf(name, options), (reason) => refusalMessage(name, options, reason));
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
