/**
 * @module
 * A child process that turns circuit inputs into .wtns bytes with a key's circuit.wasm (the
 * module's WitnessCalculator, i.e. circom_runtime), so that circom's generator, which runs
 * synchronously for as long as the circuit takes, never holds the server's event loop. It is a
 * process rather than a Worker because circom_runtime's dependencies (web-worker, through
 * ffjavascript) take any worker thread that imports them for one of their own and fail there.
 * Messages arrive over Bun's IPC channel; generators are compiled once per path and kept.
 * WitnessCalculator.load picks the circuit's native witness library when one lies beside the
 * .wasm (`cuzk witness compile`, docs/witness.md): it computes off this process's JS thread, gives
 * the same bytes, and this process keeps computing the next input job's witness while the server
 * proves a batch (src/witness/pipeline.ts).
 */
import process from "node:process";
import { WitnessCalculator } from "../mod.ts";

const calculators = new Map<string, Promise<WitnessCalculator>>();

/** Requests are handled one at a time, in order (a generator instance is not reentrant). */
let chain: Promise<void> = Promise.resolve();

process.on("message", (message: unknown) => {
  const { id, wasm, input } = message as { id: number; wasm: string; input: Record<string, unknown> };
  chain = chain.then(async () => {
    try {
      let calculator = calculators.get(wasm);
      if (!calculator) {
        calculator = WitnessCalculator.load(wasm);
        calculators.set(wasm, calculator);
        calculator.catch(() => calculators.delete(wasm));
      }
      const started = performance.now();
      const wtns = await (await calculator).wtns(input);
      process.send!({ id, wtns, ms: performance.now() - started });
    } catch (error) {
      const e = error as { code?: string; message?: string };
      process.send!({ id, error: { code: e.code ?? "INVALID_INPUT", message: String(e.message ?? error) } });
    }
  });
});
// The parent going away closes the channel: leave with it.
process.on("disconnect", () => process.exit(0));
