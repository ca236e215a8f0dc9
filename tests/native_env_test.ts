/**
 * @module
 * setNativeEnv reaches the native library's getenv on every runtime (under Bun, process.env alone
 * does not): CUZK_CPU_STREAM=1, which the CPU engine reads when a prover is made, set through it
 * streams every section of the next prover's plan (a key read on demand), and "0" restores the
 * resident plan. Bad names are refused.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { CuzkError, Prover, setNativeEnv } from "../mod.ts";
import { needs } from "./support/native.ts";

const ZKEY = join(fileURLToPath(new URL("..", import.meta.url)), "tests/fixtures/bn254/poseidon_10/circuit.zkey");

test("setNativeEnv: CUZK_CPU_STREAM set through it changes the next CPU prover's plan; bad names refused", needs("cuzk_prover_create", "cuzk_prover_memory_plan"), async () => {
  const placements = async () => {
    const prover = await Prover.open({ zkey: ZKEY, backend: "cpu", pointsOnDemand: true });
    try {
      return Object.values(prover.memoryPlan().sections).map((s) => s.placement);
    } finally {
      prover.close();
    }
  };
  try {
    setNativeEnv("CUZK_CPU_STREAM", "1");
    assert.ok((await placements()).every((p) => p === "streamed"), "every section streamed");
    setNativeEnv("CUZK_CPU_STREAM", "0");
    assert.ok((await placements()).every((p) => p === "resident"), "every section resident");
  } finally {
    setNativeEnv("CUZK_CPU_STREAM", "0");
  }
  for (const name of ["", "1X", "A=B", "A B"]) {
    assert.throws(() => setNativeEnv(name, "1"), (e: unknown) => e instanceof CuzkError && e.code === "INVALID_ARGUMENT", name);
  }
  assert.throws(() => setNativeEnv("CUZK_X", "a\0b"), (e: unknown) => e instanceof CuzkError && e.code === "INVALID_ARGUMENT");
});
