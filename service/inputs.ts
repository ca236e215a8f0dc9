/**
 * @module
 * Circuit inputs -> witness, for keys registered with a circuit.wasm: the calls go to one child
 * process (witness_process.ts, over Bun's IPC) so the generator never runs on the server's event
 * loop. A failed constraint of the circuit (circom's assert) and inputs the generator refuses are
 * 422s that quote it.
 */
import process from "node:process";
import { ServiceError } from "./errors.ts";

interface Subprocess {
  send(message: unknown): void;
  kill(): void;
  unref(): void;
  exited: Promise<number>;
}

interface BunSpawn {
  spawn(options: {
    cmd: string[];
    ipc(message: unknown): void;
    serialization: "advanced" | "json";
    stdio: ["ignore", "inherit", "inherit"];
  }): Subprocess;
}

/** The witness of some inputs and how long the generator took. */
export interface ComputedWitness {
  wtns: Uint8Array;
  ms: number;
}

/** Computes witnesses from circuit inputs in a child process. */
export class InputWitnesses {
  #child: Subprocess | undefined;
  readonly #pending = new Map<number, { resolve(value: ComputedWitness): void; reject(error: unknown): void }>();
  #nextId = 1;

  #spawn(): Subprocess {
    if (this.#child) return this.#child;
    const bun = (globalThis as unknown as { Bun: BunSpawn }).Bun;
    const script = new URL("./witness_process.ts", import.meta.url).pathname;
    const child = bun.spawn({
      cmd: [process.execPath, script],
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit"],
      ipc: (message) => {
        const { id, wtns, ms, error } = message as { id: number; wtns?: Uint8Array; ms?: number; error?: { code: string; message: string } };
        const call = this.#pending.get(id);
        if (!call) return;
        this.#pending.delete(id);
        if (error) {
          const code = error.code === "UNSATISFIED" ? "INPUT_UNSATISFIED" : "INVALID_INPUT";
          call.reject(new ServiceError(422, code, error.message, "/input"));
        } else {
          call.resolve({ wtns: new Uint8Array(wtns!), ms: ms! });
        }
      },
    });
    child.exited.then((code) => {
      // The process died (or was stopped): fail what it held; the next call starts a fresh one.
      if (this.#child === child) this.#child = undefined;
      for (const [id, call] of this.#pending) {
        this.#pending.delete(id);
        call.reject(new ServiceError(500, "WITNESS_PROCESS", `the witness process exited (${code}) while computing`));
      }
    });
    child.unref();
    this.#child = child;
    return child;
  }

  /** The .wtns of `input` for the circuit at `wasmPath`. */
  compute(wasmPath: string, input: Record<string, unknown>): Promise<ComputedWitness> {
    const child = this.#spawn();
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      child.send({ id, wasm: wasmPath, input });
    });
  }

  /** Stops the child process. */
  close(): void {
    const child = this.#child;
    this.#child = undefined;
    child?.kill();
  }
}
