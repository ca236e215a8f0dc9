/**
 * @module
 * The cost of the default-on self-check (issue 12): one resident key, RUNS proofs with the check
 * (its time is the self_check phase) and RUNS without (`selfCheck: false`), medians. Prints one line.
 *
 *   deno run -A bench/gpu/selfcheck.ts <circuit.zkey> <witness.wtns> [cpu|cuda] [runs]
 */
import { readFileSync } from "node:fs";
import process from "node:process";
import { Prover } from "../../mod.ts";
import type { BackendName } from "../../mod.ts";

const [zkey, wtns, backend = "cuda", runsArg = "7"] = process.argv.slice(2);
if (!zkey || !wtns) {
  console.error("usage: selfcheck.ts <circuit.zkey> <witness.wtns> [cpu|cuda] [runs]");
  process.exit(2);
}
const runs = Number(runsArg);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const witness = new Uint8Array(readFileSync(wtns));
using prover = await Prover.open({ zkey, backend: backend as BackendName });
await prover.prove(witness); // warm-up
const check: number[] = [], withCheck: number[] = [], without: number[] = [];
for (let r = 0; r < runs; r++) {
  const on = await prover.prove(witness);
  const span = on.timings.phases.self_check;
  if (!span) throw new Error("no self_check phase in a default proof");
  check.push(span.end - span.start);
  withCheck.push(on.timings.totalMs);
  const off = await prover.prove(witness, { selfCheck: false });
  if (off.timings.phases.self_check) throw new Error("selfCheck: false still ran the self-check");
  without.push(off.timings.totalMs);
}
console.log(`${backend}: self_check ${median(check).toFixed(2)} ms; proof ${median(withCheck).toFixed(2)} ms with it, ${median(without).toFixed(2)} ms without (medians of ${runs})`);
