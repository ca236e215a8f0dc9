/**
 * @module
 * Promise: with PostgreSQL the service does what it does in one process for a running job and for
 * large witnesses. A real PostgreSQL (tests/support/postgres.ts), the API
 * and workers as processes (`bun service/main.ts --role ...`), driven over HTTP with fetch, so the
 * test runs the same under Deno, Bun and Node:
 *
 * 1. A running job's `progress` is shown (values with done < total seen while it runs). A job
 *    cancelled while it runs in a batch of two is `cancelled` at once, stays so when the worker
 *    settles (attempt `cancelled`), and its batch partner succeeds; a job alone in its batch,
 *    cancelled while it runs, is `cancelled` and never `succeeded`, the worker sets the call's
 *    cancel flag, and proves the next job; a batch of two both cancelled at their claim stops
 *    before its second proof (the library's CANCELLED). snarkjs accepts every proof.
 * 2. With the row limit lowered (--db-witness-max-bytes 1024), a witness goes through the shared
 *    directory (--witness-dir): its file is there while it is queued, the worker proves it
 *    (snarkjs accepts), and the file is gone once the job is final; a cancelled queued job's file
 *    goes at once; a worker without the directory fails such a job alone (WITNESS_UNAVAILABLE); an
 *    API without --witness-dir answers 413 WITNESS_TOO_LARGE naming --witness-dir.
 * 3. The directory itself: reads refuse a file of another size than the key's witness and names
 *    that are not a job's; the sweep removes old files of inactive jobs only.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { setupInsecureDev, writeSynthCircuit } from "../mod.ts";
import { loadConfig } from "../service/config.ts";
import { SWEEP_GRACE_MS, WitnessDir } from "../service/witness_dir.ts";
import { Client, clusterPostgres, freePort, sleep, startApi, startWorker, stopAll } from "./support/cluster.ts";
import type { Reply } from "./support/cluster.ts";
import { needs } from "./support/native.ts";
import { assertSnarkjsAccepts } from "./support/snarkjs.ts";

const FIXTURES = fileURLToPath(new URL("./fixtures", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "cuzk-cluster-cancel-"));
const octet = { "content-type": "application/octet-stream" };

const postgres = clusterPostgres();
after(() => rmSync(work, { recursive: true, force: true }));

/** Polls the job every 20 ms until `done` accepts it (or it is final); every view seen meanwhile. */
async function until(client: Client, id: string, done: (view: Reply["body"]) => boolean): Promise<{ view: Reply["body"]; seen: Reply["body"][] }> {
  const seen = [];
  for (;;) {
    const { body } = await client.request("GET", `/v1/jobs/${id}`);
    seen.push(body);
    if (done(body) || ["succeeded", "failed", "cancelled"].includes(body.state)) return { view: body, seen };
    await sleep(20);
  }
}

/** The job views a job's event stream sends, until it ends (after the final state). */
async function events(client: Client, id: string): Promise<Reply["body"][]> {
  const response = await fetch(`${client.url}/v1/jobs/${id}/events`);
  assert.equal(response.status, 200);
  const text = await response.text();
  return text.split("\n\n").flatMap((block) => {
    const data = block.split("\n").find((line) => line.startsWith("data: "));
    return data ? [JSON.parse(data.slice(6))] : [];
  });
}

test("with PostgreSQL: a running job shows its progress; DELETE cancels it while it runs (alone, or beside a job that keeps its proof); the worker proves on", needs("cuzk_setup_insecure_dev", "cuzk_prove"), async () => {
  // A key whose proofs take long enough on one CPU thread to be caught running: 2^16 constraints.
  const keys = join(work, "keys");
  mkdirSync(keys);
  const r1cs = join(work, "c.r1cs"), wtnsPath = join(work, "c.wtns");
  await writeSynthCircuit({ curve: "bn254", profile: "porep", constraints: 1 << 16, publicInputs: 2, seed: 15 }, { r1cs, wtns: wtnsPath });
  const setup = await setupInsecureDev(r1cs, join(keys, "big.zkey"), { cpuOnly: true });
  const vkey = join(work, "vk.json");
  writeFileSync(vkey, JSON.stringify(setup.verificationKey));
  const wtns = new Uint8Array(readFileSync(wtnsPath));
  const keyArgs = ["--keys-dir", keys, "--preload", "big"];

  const url = await postgres().createDatabase("cancel");
  const port = await freePort();
  await startApi(url, port, keyArgs);
  const client = new Client(`http://127.0.0.1:${port}`);
  const submit = async () => {
    const reply = await client.once("POST", "/v1/jobs?key=big", wtns, octet);
    assert.equal(reply.status, 202, JSON.stringify(reply.body));
    return reply.body.id as string;
  };
  const proofs: Array<{ name: string; vkey: string; proof: unknown; publicSignals: string[] }> = [];
  const fetchProof = async (id: string) => proofs.push({ name: id, vkey, ...(await client.once("GET", `/v1/jobs/${id}/result`)).body });

  // 1. Two jobs queued before the worker starts, so that its first claim takes both.
  const pair = [await submit(), await submit()];
  const worker = await startWorker(url, "c1", [...keyArgs, "--batch-size", "2"]);
  // Watched from now on: the partner's final state can be seen before the worker logs the settle.
  const pairSettled = worker.when((e) => e.event === "batch_settled" && (e.cancelled as string[]).includes(pair[0]));
  const firstRunning = await until(client, pair[0], (v) => v.state === "running");
  assert.equal(firstRunning.view.state, "running");
  const cancelled = await client.once("DELETE", `/v1/jobs/${pair[0]}`);
  assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
  assert.equal(cancelled.body.state, "cancelled");
  assert.equal(cancelled.body.error.code, "CANCELLED");
  // Its partner runs on, and shows the batch's progress meanwhile, polled and on its event stream.
  const stream = events(client, pair[1]);
  const partner = await until(client, pair[1], () => false);
  assert.equal(partner.view.state, "succeeded", JSON.stringify(partner.view));
  assert.equal(partner.view.progress, undefined, "no progress once final");
  const progress = partner.seen.filter((v) => v.state === "running" && v.progress).map((v) => v.progress);
  assert.ok(progress.some((p) => p.stage === "prove" && p.total === 2 && p.done < p.total), `a running value with done < total: ${JSON.stringify(progress)}`);
  const streamed = (await stream).filter((v) => v.state === "running" && v.progress).map((v) => v.progress);
  assert.ok(streamed.some((p) => p.stage === "prove" && p.total === 2 && p.done < p.total), `the event stream sends the progress: ${JSON.stringify(streamed)}`);
  const distinct = (values: unknown[]) => [...new Set(values.map((v) => JSON.stringify(v)))].join(" ");
  console.log(`progress while running: polled ${distinct(progress)}; streamed ${distinct(streamed)}`);
  const settledPair = await pairSettled;
  assert.equal(settledPair.succeeded, 1);
  const [gone, kept] = await Promise.all(pair.map(async (id) => (await client.once("GET", `/v1/jobs/${id}`)).body));
  assert.equal(gone.state, "cancelled", "the settle does not write over the cancelled row");
  assert.deepEqual(gone.attempts.map((a: { outcome: string }) => a.outcome), ["cancelled"]);
  assert.deepEqual(kept.attempts.map((a: { outcome: string }) => a.outcome), ["proved"]);
  assert.equal((await client.once("GET", `/v1/jobs/${pair[0]}/result`)).body.error.code, "JOB_CANCELLED");
  await fetchProof(pair[1]);

  // 2. A job alone in its batch: cancelled while it runs, the worker sets the call's cancel flag.
  const alone = await submit();
  const flagged = worker.when((e) => e.event === "call_cancelled" && (e.jobs as string[]).includes(alone));
  const settledAlone = worker.when((e) => e.event === "batch_settled" && (e.cancelled as string[]).includes(alone));
  const aloneRunning = await until(client, alone, (v) => v.state === "running");
  assert.equal(aloneRunning.view.state, "running", JSON.stringify(aloneRunning.view));
  assert.ok(aloneRunning.seen.every((v) => v.state !== "succeeded"));
  const cancelAlone = await client.once("DELETE", `/v1/jobs/${alone}`);
  assert.equal(cancelAlone.status, 200, JSON.stringify(cancelAlone.body));
  assert.equal(cancelAlone.body.state, "cancelled");
  assert.equal((await client.once("DELETE", `/v1/jobs/${alone}`)).body.state, "cancelled", "a second DELETE answers the same");
  await flagged;
  const aloneSettle = await settledAlone;
  assert.equal(aloneSettle.succeeded, 0);
  const aloneAfter = (await client.once("GET", `/v1/jobs/${alone}`)).body;
  assert.equal(aloneAfter.state, "cancelled", "never succeeded");
  assert.equal(aloneAfter.attempts.length, 1);
  assert.equal(aloneAfter.attempts[0].outcome, "cancelled");

  // The worker proves the next job.
  const next = await submit();
  assert.equal((await client.waitFinal(next)).state, "succeeded");
  await fetchProof(next);

  // 3. Both jobs of a claim cancelled as it is taken: the call stops before its second proof.
  worker.signal("SIGSTOP");
  const both = [await submit(), await submit()];
  const claimed = worker.when((e) => e.event === "batch_claimed" && (e.size as number) === 2, () => {
    for (const id of both) void client.once("DELETE", `/v1/jobs/${id}`);
  });
  const settledBoth = worker.when((e) => e.event === "batch_settled" && (e.cancelled as string[]).length === 2);
  worker.signal("SIGCONT");
  await claimed;
  const bothSettle = await settledBoth;
  assert.deepEqual([...(bothSettle.cancelled as string[])].sort(), [...both].sort());
  for (const id of both) {
    const view = (await client.once("GET", `/v1/jobs/${id}`)).body;
    assert.equal(view.state, "cancelled");
    assert.equal(view.attempts[0].outcome, "cancelled");
    assert.match(view.attempts[0].error ?? "", /cancelled after [01] of 2 proofs/, "the library stopped the call");
  }

  // Nothing else went wrong, and every proof that came back verifies.
  const listed = (await client.once("GET", "/v1/jobs?limit=100")).body;
  assert.deepEqual(listed.counts, { queued: 0, running: 0, succeeded: 2, failed: 0, cancelled: 4 });
  assert.equal(proofs.length, 2);
  assertSnarkjsAccepts(proofs);
  await stopAll("SIGTERM");
});

test("with PostgreSQL: a witness above --db-witness-max-bytes goes through --witness-dir (proved, verified, file removed); without the directory it is a 413", async () => {
  const fixture = join(FIXTURES, "bn254/mulchain_8");
  const wtns = new Uint8Array(readFileSync(join(fixture, "witness.wtns")));
  const keyArgs = ["--keys-dir", FIXTURES, "--preload", "bn254/mulchain_8"];
  const limit = ["--db-witness-max-bytes", "1024"];
  const dir = join(work, "witnesses");
  const url = await postgres().createDatabase("files");
  const port = await freePort();
  await startApi(url, port, [...keyArgs, ...limit, "--witness-dir", dir]);
  const client = new Client(`http://127.0.0.1:${port}`);
  const submit = async () => {
    const reply = await client.once("POST", "/v1/jobs?key=bn254.mulchain_8", wtns, octet);
    assert.equal(reply.status, 202, JSON.stringify(reply.body));
    return reply.body.id as string;
  };
  const fileOf = (id: string) => join(dir, `${id}.witness`);
  /** The directory's files once empty, or after 5 s (the worker removes a file just after its settle commits). */
  const filesLeft = async () => {
    for (let i = 0; i < 100 && readdirSync(dir).length > 0; i++) await sleep(50);
    return readdirSync(dir);
  };
  const nVars = (await client.once("GET", "/v1/keys/bn254.mulchain_8")).body.variables as number;

  // No worker yet: the witness waits in its file (the raw values, n_vars x 32 bytes).
  const job = await submit();
  assert.equal(statSync(fileOf(job)).size, nVars * 32);
  const dropped = await submit();
  assert.equal((await client.once("DELETE", `/v1/jobs/${dropped}`)).body.state, "cancelled");
  assert.ok(!existsSync(fileOf(dropped)), "a cancelled job's file goes with it");

  const worker = await startWorker(url, "f1", [...keyArgs, "--witness-dir", dir]);
  const proved = await client.waitFinal(job);
  assert.equal(proved.state, "succeeded", JSON.stringify(proved));
  const result = (await client.once("GET", `/v1/jobs/${job}/result`)).body;
  assertSnarkjsAccepts([{ name: job, vkey: join(fixture, "verification_key.json"), ...result }]);
  assert.deepEqual(await filesLeft(), [], "the file is removed once the job is final");
  await worker.stop("SIGTERM");

  // A worker that does not mount the directory fails such a job alone, naming why.
  const orphan = await submit();
  const blind = await startWorker(url, "f2", keyArgs);
  const failed = await client.waitFinal(orphan);
  assert.equal(failed.state, "failed");
  assert.equal(failed.error.code, "WITNESS_UNAVAILABLE");
  assert.match(failed.error.message, /no --witness-dir/);
  assert.deepEqual(await filesLeft(), [], "its file goes once it is final");
  await blind.stop("SIGTERM");

  // Without --witness-dir the same witness is refused, and the message says what lifts the limit.
  const portWithout = await freePort();
  await startApi(url, portWithout, [...keyArgs, ...limit]);
  const refused = await new Client(`http://127.0.0.1:${portWithout}`).once("POST", "/v1/jobs?key=bn254.mulchain_8", wtns, octet);
  assert.equal(refused.status, 413, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, "WITNESS_TOO_LARGE");
  assert.match(refused.body.error.message, new RegExp(`the witness has ${nVars * 32} bytes.*at most 1024 bytes.*--witness-dir`));
  await stopAll("SIGTERM");
});

test("the witness directory: a file is read only at the key's size, a name must be a job's, --witness-dir needs a database, and the sweep removes only old files of inactive jobs", async () => {
  const dir = await WitnessDir.open(join(work, "unit"));
  const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
  const bytes = new Uint8Array(96).map((_, i) => i);
  assert.equal(await dir.write(a, bytes), `${a}.witness`);
  assert.deepEqual(await dir.read(`${a}.witness`, 96), bytes);
  await assert.rejects(dir.read(`${a}.witness`, 64), { code: "WITNESS_UNAVAILABLE", message: /has 96 bytes; the key's witness has 64/ });
  await assert.rejects(dir.read("../../etc/passwd", 96), { code: "WITNESS_UNAVAILABLE", message: /is not a job's/ });
  await assert.rejects(dir.read(`${b}.witness`, 96), { code: "WITNESS_UNAVAILABLE", message: /cannot open/ });
  assert.throws(() => loadConfig(["--witness-dir", dir.root], {}), { message: /--witness-dir needs --database-url/ });

  // b: an inactive job's file, old; c: an inactive job's, new (its submission may be committing); a: active.
  await dir.write(b, bytes);
  await dir.write(c, bytes);
  const old = (Date.now() - SWEEP_GRACE_MS - 1000) / 1000;
  for (const id of [a, b]) utimesSync(join(dir.root, `${id}.witness`), old, old);
  writeFileSync(join(dir.root, "notes.txt"), "not a witness");
  assert.equal(await dir.sweep(async (ids) => new Set(ids.filter((id) => id === a))), 1);
  assert.deepEqual(readdirSync(dir.root).sort(), [`${a}.witness`, `${c}.witness`, "notes.txt"].sort());
  await dir.remove(`${a}.witness`);
  await dir.remove(`${a}.witness`); // gone already: fine
  assert.ok(!existsSync(join(dir.root, `${a}.witness`)));
});
