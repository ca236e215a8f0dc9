/**
 * @module
 * The options of a long call (setup, prove) run by a command: a signal that Ctrl-C aborts and its
 * progress on stderr (a redrawn bar, lines, or nothing: `--progress`).
 */
import process from "node:process";

import { CuzkError } from "../mod.ts";
import type { LongCallOptions, Progress } from "../mod.ts";
import { EXIT, UsageError } from "./io.ts";

const UNITS: Record<Progress["stage"], string> = { idle: "", key_upload: "bytes", prove: "proofs", setup: "key points" };
const STAGE_WORDS: Record<Progress["stage"], string> = { idle: "", key_upload: "key upload", prove: "prove", setup: "setup" };
const PHASE_WORDS: Partial<Record<string, string>> = {
  abc: "a, b, c", ntt_h: "NTTs (H)", msm_a: "MSM A", msm_b1: "MSM B1", msm_b2: "MSM B2 (G2)", msm_c: "MSM C",
  msm_h: "MSM H", finalize: "finalize", self_check: "self-check",
};

/** How a long call shows its progress on stderr (`--progress`). */
export type ProgressMode = "bar" | "plain" | "none";
export const PROGRESS_MODES: readonly ProgressMode[] = ["bar", "plain", "none"];

/** How often the bar is drawn again (its clock moves even when the work reports nothing new). */
const REDRAW_MS = 250;

/** The default: a bar on a terminal, a line per step where stderr is a file or a pipe. */
export function defaultProgressMode(): ProgressMode {
  return process.stderr.isTTY === true ? "bar" : "plain";
}

/** The phase the proof in work is in, in words (", MSM H"), or nothing. */
function phaseText(p: Progress): string {
  return p.phase ? `, ${PHASE_WORDS[p.phase] ?? p.phase}` : "";
}

/**
 * A signal that SIGINT aborts (a second Ctrl-C exits at once), and the call's progress on stderr:
 * `bar` draws a bar with the phase the library is in and the elapsed time, again every 250 ms;
 * `plain` writes a line when the stage or the phase changes or the work passes a tenth of its
 * total; `none` writes nothing.
 * `done()` ends the bar's line, stops the timer and removes the SIGINT handler.
 */
export function longCall(mode: ProgressMode = defaultProgressMode()): LongCallOptions & { done(): void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(EXIT.cancelled);
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
  let last: Progress | undefined;
  let drawn = false;
  const draw = () => {
    const p = last;
    if (!p || p.total === 0) return; // nothing to show yet (or nothing to do: a CPU key upload)
    const width = Math.max(10, Math.min(40, (process.stderr.columns ?? 80) - 70));
    const fraction = Math.min(1, p.done / p.total);
    const filled = Math.round(fraction * width);
    const bar = "=".repeat(filled) + (filled < width ? ">" + " ".repeat(width - filled - 1) : "");
    process.stderr.write(
      `\r\x1b[2Kcuzk: ${STAGE_WORDS[p.stage]} [${bar}] ${Math.floor(fraction * 100)}% ${p.done}/${p.total} ${UNITS[p.stage]}${phaseText(p)} ${seconds()} s`,
    );
    drawn = true;
  };
  // A line when the stage or the phase changes, or the work passes a tenth of its total.
  let lastStep = "";
  const line = (p: Progress) => {
    if (p.total === 0) return;
    const step = `${p.stage} ${p.phase ?? ""} ${Math.floor((10 * p.done) / p.total)}`;
    if (step === lastStep) return;
    lastStep = step;
    process.stderr.write(`cuzk: ${STAGE_WORDS[p.stage]} ${p.done}/${p.total} ${UNITS[p.stage]}${phaseText(p)} (${seconds()} s)\n`);
  };
  const timer = mode === "bar" ? setInterval(draw, REDRAW_MS) : undefined;
  (timer as { unref?: () => void } | undefined)?.unref?.();
  const onProgress = mode === "none" ? undefined : (p: Progress) => {
    last = p;
    if (mode === "bar") draw();
    else line(p);
  };
  return {
    signal: controller.signal,
    onProgress,
    done() {
      clearInterval(timer);
      process.off("SIGINT", onSigint);
      if (drawn) process.stderr.write("\n");
      drawn = false;
    },
  };
}

/**
 * Progress of work reported as steps in words (witness compile: circom, each compiler run):
 * `bar` shows the step in work on one line redrawn with the time, `plain` a line per step, `none`
 * nothing. `done()` ends the bar's line and stops its timer.
 */
export function stepReporter(mode: ProgressMode): { onStep(line: string): void; done(): void } {
  const started = performance.now();
  let step = "";
  let drawn = false;
  const draw = () => {
    if (!step) return;
    const room = Math.max(20, (process.stderr.columns ?? 80) - 20);
    const text = step.length > room ? `${step.slice(0, room - 3)}...` : step;
    process.stderr.write(`\r\x1b[2Kcuzk: ${text} ${((performance.now() - started) / 1000).toFixed(1)} s`);
    drawn = true;
  };
  const timer = mode === "bar" ? setInterval(draw, REDRAW_MS) : undefined;
  (timer as { unref?: () => void } | undefined)?.unref?.();
  return {
    onStep(line: string) {
      if (mode === "plain") process.stderr.write(`cuzk: ${line}\n`);
      else if (mode === "bar") {
        step = line;
        draw();
      }
    },
    done() {
      clearInterval(timer);
      if (drawn) process.stderr.write("\n");
      drawn = false;
    },
  };
}

/** The `--progress` flag of a command (bar, plain or none; default as `defaultProgressMode`). */
export function progressFlag(value: string | true | undefined): ProgressMode {
  if (value === undefined) return defaultProgressMode();
  if (typeof value === "string" && (PROGRESS_MODES as readonly string[]).includes(value)) return value as ProgressMode;
  throw new UsageError(`--progress must be bar, plain or none, not ${value === true ? "nothing" : value}`);
}

/** Whether `error` is the cancellation a Ctrl-C asked for. */
export function cancelled(error: unknown, call: LongCallOptions): boolean {
  return call.signal?.aborted === true && error instanceof CuzkError && error.code === "CANCELLED";
}
