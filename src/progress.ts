/**
 * @module
 * Progress and cancellation of the library's long calls (key upload, proving batches, the dev
 * setup): a `cuzk_progress` struct in library-owned host memory that the library updates with
 * atomic stores while the call runs off the JS thread. A timer reads it through typed-array views
 * (the same in Deno, Bun and Node: no callback crosses the FFI), and an AbortSignal sets its
 * `cancel` field; the library then stops at the next unit boundary and the call fails with
 * CANCELLED, having freed what it allocated and left no output.
 */
import { CuzkError } from "./errors.ts";
import { PROGRESS_LAYOUT } from "./ffi/structs.ts";
import { ABI, PHASE_NAMES } from "./ffi/symbols.ts";
import type { Pointer } from "./ffi/types.ts";
import type { Library } from "./library.ts";
import type { PhaseName } from "./timings.ts";
import { HostBuffer } from "./memory/buffer.ts";

/** What a long call is doing (`enum cuzk_stage`, lower-case). */
export type ProgressStage = "idle" | "key_upload" | "prove" | "setup";

const STAGES: Record<number, ProgressStage> = {
  [ABI.STAGE_IDLE]: "idle",
  [ABI.STAGE_KEY_UPLOAD]: "key_upload",
  [ABI.STAGE_PROVE]: "prove",
  [ABI.STAGE_SETUP]: "setup",
};

/**
 * A long call's progress: `done` of `total` units (bytes of key uploaded, proofs of the batch, key
 * points made). `total` is 0 until the library knows it.
 */
export interface Progress {
  stage: ProgressStage;
  done: number;
  total: number;
  /** While proving: the phase the proof in work is in (a, b, c, the NTTs, an MSM, finalize, self-check). */
  phase?: PhaseName;
}

/** Options every long call takes. */
export interface LongCallOptions {
  /** Aborting it stops the call at the next unit boundary: it rejects with a CuzkError of code CANCELLED. */
  signal?: AbortSignal;
  /** Called from a timer (every `PROGRESS_POLL_MS`) when the progress (or the phase) changed, and once when the call settles. */
  onProgress?: (progress: Progress) => void;
}

/** How often a running call's progress is read. */
export const PROGRESS_POLL_MS = 100;

const CANCEL_WORD = PROGRESS_LAYOUT.fields.cancel.offset / 4;
const STAGE_WORD = PROGRESS_LAYOUT.fields.stage.offset / 4;
const PHASE_WORD = PROGRESS_LAYOUT.fields.phase.offset / 4;
const DONE_WORD = PROGRESS_LAYOUT.fields.done.offset / 8;
const TOTAL_WORD = PROGRESS_LAYOUT.fields.total.offset / 8;

/**
 * One `cuzk_progress` in library memory (cuzk_host_alloc: 8-byte aligned, as the library
 * requires), for one call at a time; its owner (a Prover, or one setup call) reuses it across
 * calls and frees it with itself.
 */
export class ProgressSlot {
  readonly #buffer: HostBuffer;
  #words32: Uint32Array | undefined;
  #words64: BigUint64Array | undefined;
  #inUse = false;

  private constructor(buffer: HostBuffer) {
    this.#buffer = buffer;
  }

  /** Allocates the struct (32 bytes of library host memory). */
  static alloc(library?: Library): ProgressSlot {
    return new ProgressSlot(HostBuffer.alloc(PROGRESS_LAYOUT.size, { library }));
  }

  /** Whether `options` ask for progress or cancellation (else the call passes NULL and no timer runs). */
  static wanted(options: LongCallOptions): boolean {
    return options.signal !== undefined || options.onProgress !== undefined;
  }

  /**
   * Runs `call` with the struct's address (or NULL when `options` want neither progress nor
   * cancellation): resets the struct, polls it for `onProgress` while the call runs, and sets
   * `cancel` when the signal aborts (also when it aborted before: the library then stops before
   * any work). The timer and the listener are gone when the returned promise settles.
   */
  async run<T>(options: LongCallOptions, call: (progress: Pointer | null) => Promise<T>): Promise<T> {
    if (!ProgressSlot.wanted(options)) return call(null);
    if (this.#inUse) throw new CuzkError("BUSY", "a progress struct serves one call at a time");
    this.#inUse = true;
    const release = this.#buffer.acquire();
    const { signal, onProgress } = options;
    const words32 = (this.#words32 ??= new Uint32Array(this.#buffer.bytes.buffer, this.#buffer.bytes.byteOffset, PROGRESS_LAYOUT.size / 4));
    const words64 = (this.#words64 ??= new BigUint64Array(this.#buffer.bytes.buffer, this.#buffer.bytes.byteOffset, PROGRESS_LAYOUT.size / 8));
    words32.fill(0);
    words64.fill(0n);
    words32[0] = PROGRESS_LAYOUT.size;
    const cancel = () => {
      words32[CANCEL_WORD] = 1;
    };
    if (signal?.aborted) cancel();
    signal?.addEventListener("abort", cancel);
    let last = "";
    const report = () => {
      const progress: Progress = {
        stage: STAGES[words32[STAGE_WORD]] ?? "idle",
        done: Number(words64[DONE_WORD]),
        total: Number(words64[TOTAL_WORD]),
      };
      const phase = words32[PHASE_WORD];
      if (progress.stage === "prove" && phase > 0) progress.phase = (PHASE_NAMES[phase - 1] ?? `phase_${phase - 1}`) as PhaseName;
      const seen = `${progress.stage} ${progress.phase ?? ""} ${progress.done} ${progress.total}`;
      if (seen === last || progress.stage === "idle") return;
      last = seen;
      onProgress!(progress);
    };
    const timer = onProgress ? setInterval(report, PROGRESS_POLL_MS) : undefined;
    (timer as { unref?: () => void } | undefined)?.unref?.();
    try {
      const result = await call(this.#buffer.unsafePointer);
      if (onProgress) report();
      return result;
    } finally {
      clearInterval(timer);
      signal?.removeEventListener("abort", cancel);
      release();
      this.#inUse = false;
    }
  }

  /** Returns the memory to the library. Idempotent; BUSY while a call uses it. */
  free(): void {
    this.#buffer.free();
    this.#words32 = this.#words64 = undefined;
  }
}
