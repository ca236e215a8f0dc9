/**
 * @module
 * Several devices of one host behind one object: a ProverSet opens one Context per
 * device index (each context's work runs on its device only: cuzk.h) and one Prover on each, all
 * over one Key (its host memory is shared; the points are resident, or streamed, per device), and
 * divides a batch between them: contiguous shares, one `proveBatch` per device, run at once. Each
 * circuit is proved on exactly one device, named in its result; every proof is self-checked by its
 * prover (the default) before it is returned, so a proof made on the wrong device's data can never
 * leave. On the CPU backend the "devices" are lanes that share the host's cores (for tests).
 */
import { integerIn, LIMITS } from "./bounds.ts";
import { Context } from "./context.ts";
import { CuzkError } from "./errors.ts";
import { Key } from "./key.ts";
import type { KeyInfo } from "./key.ts";
import type { BackendName } from "./library.ts";
import type { MemoryPlan } from "./memory_plan.ts";
import type { Progress } from "./progress.ts";
import { Prover } from "./prover.ts";
import type { ProofResult, ProveOptions, ProverOptions, Randomness, Witness } from "./prover.ts";

/** Options of ProverSet.open: those of Prover.open, with a list of devices instead of one. */
export interface ProverSetOptions extends Omit<ProverOptions, "device" | "context"> {
  /** Device indices, each at most once (1 to 64 of them); default [0]. The set makes a context on each. */
  devices?: number[];
  /**
   * Contexts made already, one per device (shared, e.g. by a service's keys, and not closed by the
   * set); then `devices` is theirs and backend/cpuThreads are not used.
   */
  contexts?: Context[];
}

/** A proof of a ProverSet batch: which device made it, and where its call started. */
export interface DeviceProofResult extends ProofResult {
  /** The device index (as given to ProverSet.open) whose prover made this proof. */
  device: number;
  /** When that device's call started, in ms after the whole batch started (the timings are relative to it). */
  callOffsetMs: number;
}

/** The most devices one set takes (LIMITS would name a host larger than any sold). */
export const MAX_SET_DEVICES = 64;

/** One prover per device, over one key. */
export class ProverSet {
  readonly #provers: Prover[];
  readonly #devices: number[];
  readonly #key: Key;
  readonly #ownsKey: boolean;
  readonly #ownsContexts: boolean;
  readonly #backend: BackendName;
  readonly #info: KeyInfo;
  #closed = false;

  private constructor(provers: Prover[], devices: number[], key: Key, ownsKey: boolean, ownsContexts: boolean) {
    this.#provers = provers;
    this.#devices = devices;
    this.#key = key;
    this.#ownsKey = ownsKey;
    this.#ownsContexts = ownsContexts;
    this.#backend = provers[0].backend;
    this.#info = provers[0].info;
  }

  /**
   * Opens the key once (when given a path), then a context and a prover per device, one after
   * another (each prover uploads the key to its device). On any failure every prover and context
   * made so far is closed and the error is thrown.
   */
  static async open(options: ProverSetOptions): Promise<ProverSet> {
    const shared = options.contexts;
    if (shared && options.devices) throw new CuzkError("INVALID_ARGUMENT", "give devices or contexts, not both");
    const devices = shared ? shared.map((c) => c.device) : options.devices ?? [0];
    integerIn(devices.length, "devices (count)", 1, MAX_SET_DEVICES);
    if (new Set(devices).size !== devices.length) {
      throw new CuzkError("INVALID_ARGUMENT", `devices ${JSON.stringify(devices)} name a device twice: each device holds one prover`);
    }
    const ownsKey = typeof options.zkey === "string";
    const key = typeof options.zkey === "string"
      ? await Key.open(options.zkey, { library: options.library, skipPointChecks: options.skipPointChecks, pointsOnDemand: options.pointsOnDemand })
      : options.zkey;
    const provers: Prover[] = [];
    try {
      if (options.r1cs) key.attachR1cs(options.r1cs); // once, for every device's prover
      for (const [k, device] of devices.entries()) {
        const context = shared?.[k] ?? Context.create({ backend: options.backend, device, cpuThreads: options.cpuThreads, g2OnCpu: options.g2OnCpu, library: options.library });
        try {
          provers.push(await Prover.open({ ...options, zkey: key, context, r1cs: undefined }));
        } catch (error) {
          if (!shared) context.close();
          throw error;
        }
      }
    } catch (error) {
      for (const p of provers) closeProver(p, !shared);
      if (ownsKey) key.close();
      throw error;
    }
    return new ProverSet(provers, [...devices], key, ownsKey, !shared);
  }

  /** The key the provers share. */
  get key(): Key {
    return this.#key;
  }

  /** The device indices, in the order batches are divided. */
  get devices(): number[] {
    return [...this.#devices];
  }

  /** The provers, one per device (same order). */
  get provers(): readonly Prover[] {
    return this.#provers;
  }

  /** The backend of the devices' contexts (also after close). */
  get backend(): BackendName {
    return this.#backend;
  }

  /** The key's sizes and curve (also after close). */
  get info(): KeyInfo {
    return { ...this.#info };
  }

  /** Each device's memory plan (same order as `devices`). */
  memoryPlans(): MemoryPlan[] {
    return this.#live().map((p) => p.memoryPlan());
  }

  /**
   * Proves a batch across the devices: device k takes the k-th of as many contiguous, equal shares
   * (the first ones one witness more when it does not divide), one proveBatch per device, all at
   * once; results in the witnesses' order. `onProgress` sums the devices' proofs. When any device's
   * call fails, the others are let finish (nothing they read is released early) and the first
   * failure is thrown, naming its device; no proof of the batch is returned.
   */
  async proveBatch(
    witnesses: ReadonlyArray<Witness>,
    options: ProveOptions & { randomness?: ReadonlyArray<Randomness> } = {},
  ): Promise<DeviceProofResult[]> {
    const provers = this.#live();
    integerIn(witnesses.length, "witnesses per batch", 0, LIMITS.batchWitnesses);
    if (options.randomness && options.randomness.length !== witnesses.length) {
      throw new CuzkError("INVALID_ARGUMENT", `randomness has ${options.randomness.length} entries for ${witnesses.length} witnesses`);
    }
    const shares = batchShares(witnesses.length, provers.length);
    const done = new Array<number>(provers.length).fill(0);
    const report = options.onProgress
      ? () => options.onProgress!({ stage: "prove", done: done.reduce((a, b) => a + b, 0), total: witnesses.length } satisfies Progress)
      : undefined;
    const started = performance.now();
    const calls = shares.map(({ from, to }, k) => {
      if (from === to) return Promise.resolve([] as ProofResult[]);
      const offset = performance.now() - started;
      const call = provers[k].proveBatch(witnesses.slice(from, to), {
        ...options,
        randomness: options.randomness?.slice(from, to),
        onProgress: report && ((p: Progress) => {
          done[k] = p.done;
          report();
        }),
      });
      return call.then((results) => results.map((r) => ({ ...r, device: this.#devices[k], callOffsetMs: offset })));
    });
    const settled = await Promise.allSettled(calls);
    const failed = settled.findIndex((s) => s.status === "rejected");
    if (failed >= 0) {
      const reason = (settled[failed] as PromiseRejectedResult).reason;
      if (reason instanceof CuzkError) {
        throw new CuzkError(reason.code, `device ${this.#devices[failed]}: ${reason.message}`, {
          status: reason.status,
          nativeMessage: reason.nativeMessage,
          operation: reason.operation,
          cause: reason,
        });
      }
      throw reason;
    }
    return settled.flatMap((s) => (s as PromiseFulfilledResult<DeviceProofResult[]>).value);
  }

  /** Closes every prover and context (and the key when the set opened it). Idempotent; BUSY while a call runs. */
  close(): void {
    if (this.#closed) return;
    for (const p of this.#provers) closeProver(p, this.#ownsContexts);
    if (this.#ownsKey) this.#key.close();
    this.#closed = true;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #live(): Prover[] {
    if (this.#closed) throw new CuzkError("CLOSED", "this ProverSet was closed");
    return this.#provers;
  }
}

/** Contiguous shares of n items over k lanes, as equal as they can be, the first ones larger. */
export function batchShares(n: number, k: number): Array<{ from: number; to: number }> {
  const base = Math.floor(n / k), extra = n % k;
  const out: Array<{ from: number; to: number }> = [];
  let at = 0;
  for (let i = 0; i < k; i++) {
    const size = base + (i < extra ? 1 : 0);
    out.push({ from: at, to: at + size });
    at += size;
  }
  return out;
}

function closeProver(prover: Prover, andContext: boolean): void {
  const context = prover.context;
  prover.close();
  if (andContext) context.close();
}
