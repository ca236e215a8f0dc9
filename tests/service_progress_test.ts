/**
 * @module
 * Promise: the service shows a running job's progress (proofs done of its batch) in the job's
 * status, and DELETE of a running job cancels its batch when it is alone in it (the job is final
 * at once, state cancelled, no result; the next job proves), while a running job that shares its
 * batch is not interrupted (409 JOB_RUNNING) and its batch's proofs all come back, accepted by
 * snarkjs. The service runs as a real Bun process on loopback, under each runtime's fetch.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { setupInsecureDev, writeSynthCircuit } from "../mod.ts";
import { library, needs } from "./support/native.ts";
import { assertSnarkjsAccepts } from "./support/snarkjs.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BUN = join(ROOT, "node_modules/.bin/bun");
const work = mkdtempSync(join(tmpdir(), "cuzk-service-progress-"));
const stops: Array<() => void> = [];
after(() => {
  for (const stop of stops) stop();
  rmSync(work, { recursive: true, force: true });
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FINAL = new Set(["succeeded", "failed", "cancelled"]);

/** Starts the service on a free loopback port; resolves its URL. */
async function start(args: string[]): Promise<string> {
  const child = spawn(BUN, ["service/main.ts", "--host", "127.0.0.1", "--port", "0", ...args], {
    cwd: ROOT,
    env: { ...process.env, CUZK_LIB: process.env.CUZK_LIB ?? library().path },
    stdio: ["ignore", "pipe", "pipe"],
  });
  stops.push(() => child.kill("SIGKILL"));
  let out = "", err = "";
  child.stderr!.on("data", (c: Uint8Array) => (err += new TextDecoder().decode(c)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (c: Uint8Array) => {
      out += new TextDecoder().decode(c);
      const listening = out.split("\n").map((l) => {
        try {
          return JSON.parse(l);
        } catch {
          return undefined;
        }
      }).find((e) => e?.event === "listening");
      if (listening) resolve(listening.url);
    });
    child.on("exit", (code) => reject(new Error(`the service exited (${code}): ${err}`)));
  });
  for (let i = 0; i < 200 && (await fetch(url + "/readyz")).status !== 200; i++) await sleep(50);
  return url;
}

// deno-lint-ignore no-explicit-any
async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const base64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));

test("a running job's status shows its batch's progress; DELETE cancels a running job alone in its batch, not one that shares it", needs("cuzk_setup_insecure_dev", "cuzk_prove"), async () => {
  // A key whose proofs take a while on the CPU: 2^15 constraints.
  const keys = join(work, "keys");
  execFileSync("mkdir", ["-p", keys]);
  const r1cs = join(work, "c.r1cs"), wtnsPath = join(work, "c.wtns");
  await writeSynthCircuit({ curve: "bn254", profile: "porep", constraints: 1 << 15, publicInputs: 2, seed: 11 }, { r1cs, wtns: wtnsPath });
  const setup = await setupInsecureDev(r1cs, join(keys, "big.zkey"), { cpuOnly: true });
  const vkPath = join(work, "vk.json");
  writeFileSync(vkPath, JSON.stringify(setup.verificationKey));
  const witness = base64(new Uint8Array(readFileSync(wtnsPath)));

  const url = await start(["--keys-dir", keys, "--batch-size", "4", "--batch-wait-ms", "3000", "--drain-s", "0"]);
  assert.equal((await call(url, "POST", "/v1/keys", { name: "big" })).status, 201);
  const submit = async () => {
    const reply = await call(url, "POST", "/v1/jobs", { key: "big", witness });
    assert.equal(reply.status, 202, JSON.stringify(reply.body));
    return reply.body.id as string;
  };
  const until = async (id: string, done: (view: Record<string, unknown>) => boolean) => {
    for (;;) {
      const { body } = await call(url, "GET", `/v1/jobs/${id}`);
      if (done(body) || FINAL.has(body.state)) return body;
      await sleep(20);
    }
  };

  // A batch of four: progress counts its proofs; a DELETE of one of them is refused.
  const ids = await Promise.all([submit(), submit(), submit(), submit()]);
  // deno-lint-ignore no-explicit-any
  const midway: any = await until(ids[3], (v) => (v.progress as { done: number } | undefined)?.done! >= 1);
  assert.equal(midway.state, "running", JSON.stringify(midway));
  assert.equal(midway.progress.stage, "prove");
  assert.equal(midway.progress.total, 4);
  assert.ok(midway.progress.done >= 1 && midway.progress.done < 4, JSON.stringify(midway.progress));
  const refused = await call(url, "DELETE", `/v1/jobs/${ids[0]}`);
  assert.equal(refused.status, 409);
  assert.equal(refused.body.error.code, "JOB_RUNNING");
  assert.match(refused.body.error.message, /batch of 4 jobs/);
  const proofs = [];
  for (const id of ids) {
    const view = await until(id, () => false);
    assert.equal(view.state, "succeeded", JSON.stringify(view));
    assert.equal(view.progress, undefined, "no progress once final");
    proofs.push({ name: id, vkey: vkPath, ...(await call(url, "GET", `/v1/jobs/${id}/result`)).body });
  }

  // A job alone in its batch: DELETE while it runs makes it final at once, cancelled, without a result.
  const alone = await submit();
  const runningAlone = await until(alone, (v) => v.state === "running");
  assert.equal(runningAlone.state, "running");
  const cancelled = await call(url, "DELETE", `/v1/jobs/${alone}`);
  assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
  assert.equal(cancelled.body.state, "cancelled");
  assert.equal(cancelled.body.error.code, "CANCELLED");
  assert.equal((await call(url, "GET", `/v1/jobs/${alone}/result`)).status, 409);
  await sleep(1500);
  assert.equal((await call(url, "GET", `/v1/jobs/${alone}`)).body.state, "cancelled", "the finished call does not revive it");

  // The service proves on afterwards.
  const next = await submit();
  const view = await until(next, () => false);
  assert.equal(view.state, "succeeded", JSON.stringify(view));
  proofs.push({ name: next, vkey: vkPath, ...(await call(url, "GET", `/v1/jobs/${next}/result`)).body });

  assert.equal(proofs.length, 5);
  assertSnarkjsAccepts(proofs);
});
