/**
 * @module
 * Promise: the CLI shows a progress bar for `setup` and `prove` on a terminal (redrawn with the
 * phase the library is in and the time), a line per step when stderr is not one, nothing with
 * `--progress none`, and Ctrl-C (SIGINT) cancels cleanly: exit 130, no output file. The terminal is
 * a real one: the CLI runs in a tmux pane and the test reads the screen with `tmux capture-pane -p`.
 * The CLI runs under the runtime that runs this file.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { verify, writeSynthCircuit } from "../mod.ts";
import type { Groth16Proof, VerificationKeyJson } from "../mod.ts";
import { library, needs } from "./support/native.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "cli.ts");
const work = mkdtempSync(join(tmpdir(), "cuzk-cli-progress-"));
const api = ["cuzk_synth_circuit_write", "cuzk_setup_insecure_dev", "cuzk_prove", "cuzk_verify"] as const;
const TMUX_SOCKET = `cuzk-test-${process.pid}`;
const tmuxMissing = spawnSync("tmux", ["-V"]).error !== undefined;
after(() => {
  if (!tmuxMissing) spawnSync("tmux", ["-L", TMUX_SOCKET, "kill-server"], { env: tmuxEnv });
  rmSync(work, { recursive: true, force: true });
});

/** The command line that runs the CLI under this runtime. */
const cliCommand = (): string[] => ("Deno" in globalThis ? [process.execPath, "run", "-A", CLI] : [process.execPath, CLI]);
const env: Record<string, string | undefined> = { ...process.env, CUZK_LIB: process.env.CUZK_LIB ?? library().path };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
/** tmux itself runs without a sanitizer runtime preloaded (.ci/run's ASan step); the CLI in the pane gets it back. */
const { LD_PRELOAD: _preload, ...tmuxEnv } = env;
const paneEnv = ["CUZK_LIB", "LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS"].filter((k) => env[k] !== undefined).map((k) => `${k}=${quote(env[k]!)}`).join(" ");

/** A 2^16-constraint circuit: its CPU setup takes seconds, in chunks of 2^15 key points. */
const big = { r1cs: join(work, "big.r1cs"), wtns: join(work, "big.wtns") };
const small = { r1cs: join(work, "small.r1cs"), wtns: join(work, "small.wtns") };
let circuits: Promise<void> | undefined;
const makeCircuits = () =>
  (circuits ??= Promise.all([
    writeSynthCircuit({ curve: "bn254", profile: "porep", constraints: 1 << 16, publicInputs: 2, seed: 7 }, big),
    writeSynthCircuit({ curve: "bn254", profile: "porep", constraints: 1 << 10, publicInputs: 2, seed: 8 }, small),
  ]).then(() => {}));

/** One command in its own tmux window; the screen read back as text. */
class Pane {
  readonly #target: string;
  constructor(name: string, args: string[]) {
    this.#target = name;
    const line = `cd ${quote(ROOT)} && ${paneEnv} ${args.map(quote).join(" ")}; echo EXIT=$?; sleep 600`;
    execFileSync("tmux", ["-L", TMUX_SOCKET, "new-session", "-d", "-s", name, "-x", "160", "-y", "40", line], { env: tmuxEnv });
  }
  screen(): string {
    return execFileSync("tmux", ["-L", TMUX_SOCKET, "capture-pane", "-p", "-t", this.#target], { encoding: "utf8", env: tmuxEnv });
  }
  /** The screen once `pattern` matches it (and `accept` takes the match). */
  async waitFor(pattern: RegExp, accept: (match: RegExpExecArray) => boolean = () => true, ms = 120_000): Promise<string> {
    const deadline = performance.now() + ms;
    for (;;) {
      const text = this.screen();
      const match = pattern.exec(text);
      if (match && accept(match)) return text;
      if (performance.now() > deadline) throw new Error(`the pane never showed ${pattern}; it shows:\n${text}`);
      await sleep(50);
    }
  }
  keys(...keys: string[]): void {
    execFileSync("tmux", ["-L", TMUX_SOCKET, "send-keys", "-t", this.#target, ...keys], { env: tmuxEnv });
  }
  close(): void {
    spawnSync("tmux", ["-L", TMUX_SOCKET, "kill-session", "-t", this.#target], { env: tmuxEnv });
  }
}

const BAR = (stage: string, units: string) => new RegExp(`cuzk: ${stage} \\[[=> ]+\\] (\\d+)% (\\d+)/(\\d+) ${units}`);

test(
  "in a terminal (tmux), setup and prove draw a progress bar on stderr; Ctrl-C cancels a setup: exit 130, no file",
  { skip: tmuxMissing ? "tmux is not installed (apt-get install -y tmux): the terminal test needs it" : needs(...api).skip },
  async () => {
    await makeCircuits();
    // A session that outlives the others: killing the last one would stop the server under the next.
    execFileSync("tmux", ["-L", TMUX_SOCKET, "new-session", "-d", "-s", "keep", "sleep 3600"], { env: tmuxEnv });
    const dir = join(work, "tty");
    execFileSync("mkdir", ["-p", dir]);

    // Cancelled midway: the bar was drawn with some key points made, then Ctrl-C.
    const cancelled = new Pane("cancel", [...cliCommand(), "setup", "--insecure-dev", big.r1cs, join(dir, "big.zkey"), join(dir, "big-vk.json"), "--cpu"]);
    const running = await cancelled.waitFor(BAR("setup", "key points"), (m) => Number(m[2]) > 0);
    const [, percent, done, total] = BAR("setup", "key points").exec(running)!;
    assert.ok(Number(done) < Number(total) && Number(percent) < 100, `the bar shows a partial setup: ${running}`);
    cancelled.keys("C-c");
    const end = await cancelled.waitFor(/EXIT=\d+/);
    cancelled.close();
    assert.match(end, /EXIT=130/, end);
    assert.match(end, /setup cancelled \(Ctrl-C\); no key written/);
    assert.deepEqual(readdirSync(dir), [], "no key, verification key or temporary file");

    // Run to the end: the bar reaches 100 %; then prove with the key, bar 1/1.
    const zkey = join(dir, "small.zkey"), vkPath = join(dir, "small-vk.json");
    const setup = new Pane("setup", [...cliCommand(), "setup", "--insecure-dev", small.r1cs, zkey, vkPath, "--cpu"]);
    const setupScreen = await setup.waitFor(/EXIT=\d+/);
    setup.close();
    assert.match(setupScreen, /EXIT=0/, setupScreen);
    const final = BAR("setup", "key points").exec(setupScreen);
    assert.ok(final && final[1] === "100" && final[2] === final[3], `the setup bar ends at 100 %: ${setupScreen}`);

    const proofPath = join(dir, "proof.json"), publicPath = join(dir, "public.json");
    const prove = new Pane("prove", [...cliCommand(), "prove", zkey, small.wtns, proofPath, publicPath]);
    const proveScreen = await prove.waitFor(/EXIT=\d+/);
    prove.close();
    assert.match(proveScreen, /EXIT=0/, proveScreen);
    assert.match(proveScreen, /cuzk: prove \[=+\] 100% 1\/1 proofs, (finalize|self-check) \d+\.\d s/, proveScreen);
    const vk = JSON.parse(readFileSync(vkPath, "utf8")) as VerificationKeyJson;
    const proof = JSON.parse(readFileSync(proofPath, "utf8")) as Groth16Proof;
    const publicSignals = JSON.parse(readFileSync(publicPath, "utf8")) as string[];
    assert.equal(await verify(vk, publicSignals, proof), true);
    snarkjsAccepts(vkPath, publicPath, proofPath);
    console.log(`[cli_progress] the pane during the setup:\n${running.trimEnd()}\n[cli_progress] after prove:\n${proveScreen.trimEnd()}`);
  },
);

/** snarkjs's own CLI accepts the proof (and rejects it with a public signal changed). */
function snarkjsAccepts(vkPath: string, publicPath: string, proofPath: string): void {
  const snarkjs = join(ROOT, "node_modules", "snarkjs", "cli.js");
  const run = (pub: string) => spawnSync("node", [snarkjs, "groth16", "verify", vkPath, pub, proofPath], { encoding: "utf8", timeout: 300_000 });
  const ok = run(publicPath);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /OK!/);
  const signals = JSON.parse(readFileSync(publicPath, "utf8")) as string[];
  signals[0] = (BigInt(signals[0]) + 1n).toString();
  const bad = publicPath.replace(/\.json$/, "-bad.json");
  writeFileSync(bad, JSON.stringify(signals));
  assert.notEqual(run(bad).status, 0, "the check can fail");
}

/** Runs the CLI with piped stdio; `interrupt` sends SIGINT once stderr matches it. */
function runPiped(args: string[], interrupt?: RegExp): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const [command, ...rest] = cliCommand();
    const child = spawn(command, [...rest, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "", sent = false;
    child.stdout!.resume();
    child.stderr!.on("data", (chunk: Uint8Array) => {
      stderr += new TextDecoder().decode(chunk);
      if (interrupt && !sent && interrupt.test(stderr)) {
        sent = true;
        setTimeout(() => child.kill("SIGINT"), 500); // into the key points (the warning comes first)
      }
    });
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

test("not on a terminal: a line per step, no bar (nothing with --progress none); SIGINT still cancels a setup (exit 130, no file)", needs(...api), async () => {
  await makeCircuits();
  const dir = join(work, "pipe");
  execFileSync("mkdir", ["-p", dir]);
  const zkey = join(dir, "small.zkey"), vkPath = join(dir, "small-vk.json");
  const setup = await runPiped(["setup", "--insecure-dev", small.r1cs, zkey, vkPath, "--cpu"]);
  assert.equal(setup.code, 0, setup.stderr);
  const proofPath = join(dir, "proof.json"), publicPath = join(dir, "public.json");
  const prove = await runPiped(["prove", zkey, small.wtns, proofPath, publicPath]);
  assert.equal(prove.code, 0, prove.stderr);
  for (const { stderr } of [setup, prove]) {
    assert.ok(!stderr.includes("\r") && !/\d+% \d+\//.test(stderr), `no bar in ${JSON.stringify(stderr)}`);
  }
  // The last step of a proof, as a plain line with its time.
  assert.match(prove.stderr, /^cuzk: prove 1\/1 proofs, (finalize|self-check) \(\d+\.\d s\)$/m, prove.stderr);
  assert.match(setup.stderr, /^cuzk: setup (\d+)\/\1 key points \(\d+\.\d s\)$/m, setup.stderr);
  const quiet = await runPiped(["prove", zkey, small.wtns, proofPath, publicPath, "--progress", "none"]);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.equal(quiet.stderr, "", "--progress none: nothing on success");
  const wrong = await runPiped(["prove", zkey, small.wtns, proofPath, publicPath, "--progress", "loud"]);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /--progress must be bar, plain or none, not loud/);
  snarkjsAccepts(vkPath, publicPath, proofPath);

  const bigZkey = join(dir, "big.zkey");
  const cancelled = await runPiped(["setup", "--insecure-dev", big.r1cs, bigZkey, join(dir, "big-vk.json"), "--cpu"], /FOR TESTING AND BENCHMARKS ONLY[\s\S]*\*{20,}\n/);
  // Deno's node:child_process reports a child it signalled as killed (code null) even when the
  // child handled the signal and exited (see service_test.ts): there the message is the evidence.
  if (!("Deno" in globalThis) || cancelled.code !== null) assert.equal(cancelled.code, 130, cancelled.stderr);
  assert.match(cancelled.stderr, /setup cancelled \(Ctrl-C\); no key written/);
  assert.ok(!existsSync(bigZkey) && !existsSync(join(dir, "big-vk.json")), "no key or verification key written");
  assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith("big")), [], "no temporary file either");
});
