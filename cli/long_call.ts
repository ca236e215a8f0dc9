/**
 * @module
 * The options of a long call (setup, prove) run by a command: a signal that Ctrl-C aborts and a
 * progress bar on stderr when it is a terminal.
 */
import process from "node:process";

import { CuzkError } from "../mod.ts";
import type { LongCallOptions, Progress } from "../mod.ts";
import { EXIT } from "./io.ts";

const UNITS: Record<Progress["stage"], string> = { idle: "", key_upload: "bytes", prove: "proofs", setup: "key points" };
const STAGE_WORDS: Record<Progress["stage"], string> = { idle: "", key_upload: "key upload", prove: "prove", setup: "setup" };

/**
 * A signal that SIGINT aborts (a second Ctrl-C exits at once), and a progress bar on stderr when it
 * is a terminal. `done()` ends the bar's line and removes the SIGINT handler.
 */
export function longCall(): LongCallOptions & { done(): void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(EXIT.cancelled);
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  const tty = process.stderr.isTTY === true;
  const started = performance.now();
  let drawn = false;
  const onProgress = (p: Progress) => {
    if (p.total === 0) return; // nothing to show yet (or nothing to do: a CPU key upload)
    const width = Math.max(10, Math.min(40, (process.stderr.columns ?? 80) - 60));
    const fraction = Math.min(1, p.done / p.total);
    const filled = Math.round(fraction * width);
    const bar = "=".repeat(filled) + (filled < width ? ">" + " ".repeat(width - filled - 1) : "");
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stderr.write(`\r\x1b[2Kcuzk: ${STAGE_WORDS[p.stage]} [${bar}] ${Math.floor(fraction * 100)}% ${p.done}/${p.total} ${UNITS[p.stage]} ${seconds} s`);
    drawn = true;
  };
  return {
    signal: controller.signal,
    onProgress: tty ? onProgress : undefined,
    done() {
      process.off("SIGINT", onSigint);
      if (drawn) process.stderr.write("\n");
      drawn = false;
    },
  };
}

/** Whether `error` is the cancellation a Ctrl-C asked for. */
export function cancelled(error: unknown, call: LongCallOptions): boolean {
  return call.signal?.aborted === true && error instanceof CuzkError && error.code === "CANCELLED";
}
