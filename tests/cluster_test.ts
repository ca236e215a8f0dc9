/**
 * @module
 * Promise: the proving service spread over processes on PostgreSQL loses nothing and
 * proves nothing twice when its processes die. A real PostgreSQL (tests/support/postgres.ts), one
 * API process and three worker processes (`bun service/main.ts --role ...`), driven over HTTP with
 * fetch, so the test runs the same under Deno, Bun and Node:
 *
 * 1. 300 jobs from 30 concurrent clients over two keys, in bursts; meanwhile one worker is
 *    SIGKILLed holding a batch, another is frozen (SIGSTOP) holding a batch until its lease lapses
 *    and its jobs are proved elsewhere, then thawed (its late results are refused by the fence) and
 *    restarted, and the API is SIGKILLed once and started again. Every accepted job succeeds
 *    exactly once (one `proved` claim each, its own public signals), snarkjs accepts every proof,
 *    and the cluster metrics agree.
 * 2. Queue bounds (429 + Retry-After per key and in total), priorities (the high-priority job is
 *    in the first batch), a witness that does not satisfy the constraints failing alone with
 *    UNSATISFIED, and the retry cap: a job whose claim is lost with --retry-limit 0 fails with
 *    RETRY_LIMIT, and the frozen worker's late proof does not overwrite that.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Key, WitnessCalculator } from "../mod.ts";
import { Client, clusterPostgres, freePort, sleep, startApi as startClusterApi, startWorker as startClusterWorker, stopAll } from "./support/cluster.ts";
import type { Event, Proc, Reply } from "./support/cluster.ts";
import { library } from "./support/native.ts";
import { assertSnarkjsAccepts } from "./support/snarkjs.ts";
import { wtnsParts } from "./support/wtns.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const FIXTURES = join(ROOT, "tests/fixtures");
const KEYS = [
  { id: "bn254.mulchain_8", name: "bn254/mulchain_8" },
  { id: "bls12_381.mulchain_8", name: "bls12_381/mulchain_8" },
].map((k) => ({ ...k, dir: join(FIXTURES, k.name) }));

/** The processes' keys: both fixtures, preloaded. */
const KEY_ARGS = ["--keys-dir", FIXTURES, "--preload", KEYS.map((k) => k.name).join(",")];
const startApi = (url: string, port: number, extra: string[] = []) => startClusterApi(url, port, [...KEY_ARGS, ...extra]);
const startWorker = (url: string, id: string, extra: string[] = []) => startClusterWorker(url, id, [...KEY_ARGS, ...extra]);

const postgres = clusterPostgres();

/** `count` distinct witnesses per key (x moved per job) and each one's public signals. */
async function witnesses(count: number): Promise<Array<{ key: (typeof KEYS)[number]; wtns: Uint8Array; expected: string[] }>> {
  const calculators = await Promise.all(KEYS.map((k) => WitnessCalculator.load(join(k.dir, "circuit.wasm"))));
  const zkeys = await Promise.all(KEYS.map((k) => Key.open(join(k.dir, "circuit.zkey"), { library: library() })));
  const out = [];
  for (let i = 0; i < count; i++) {
    const k = i % KEYS.length;
    const input = JSON.parse(readFileSync(join(KEYS[k].dir, "input.json"), "utf8")) as Record<string, string>;
    const wtns = await calculators[k].wtns({ ...input, x: (BigInt(input.x) + BigInt(i)).toString() });
    out.push({ key: KEYS[k], wtns, expected: zkeys[k].checkWitness(wtns).publicSignals });
  }
  for (const key of zkeys) key.close();
  return out;
}

const metric = (text: string, line: RegExp) => line.test(text);

/**
 * Freezes `worker` (SIGSTOP) as it announces a claim of at least `minSize` jobs, and keeps it
 * frozen if the claim is still unsettled (no batch_settled line, every job of it still running);
 * otherwise the signal came too late (the batch was proved already): thaw and try the next claim.
 */
async function freezeInBatch(worker: Proc, client: Client, minSize: number, armed: () => void = () => {}): Promise<Event> {
  for (let tries = 0; tries < 40; tries++) {
    const claimed = worker.when((e) => e.event === "batch_claimed" && (e.size as number) >= minSize, () => worker.signal("SIGSTOP"));
    if (tries === 0) armed();
    const claim = await claimed;
    await sleep(200); // lines it wrote before the signal are read by now
    const settled = worker.events.some((e) => e.event === "batch_settled" && e.batch === claim.batch);
    const states = await Promise.all((claim.jobs as string[]).map(async (id) => (await client.request("GET", `/v1/jobs/${id}`)).body.state));
    if (!settled && states.every((state) => state === "running")) return claim;
    worker.signal("SIGCONT");
  }
  throw new Error(`${worker.name}: never frozen inside a batch in 40 claims`);
}

test("300 jobs, 30 clients, two keys, three workers: one worker SIGKILLed in a batch, one frozen past its lease and restarted, the API SIGKILLed and restarted; every job succeeds exactly once and snarkjs accepts every proof", async () => {
  const url = await postgres().createDatabase("load");
  const port = await freePort();
  let api = await startApi(url, port);
  const workers = new Map<string, Proc>();
  for (const id of ["w1", "w2", "w3"]) workers.set(id, await startWorker(url, id));
  const client = new Client(`http://127.0.0.1:${port}`);

  const CLIENTS = 30, PER_CLIENT = 10, BURST_MS = 1500;
  const jobs = await witnesses(CLIENTS * PER_CLIENT);
  const ids = new Array<string>(jobs.length);
  const results = new Array<{ proof: unknown; publicSignals: string[] }>(jobs.length);
  const started = performance.now();

  // The clients: job j of every client is released at j × BURST_MS (bursts make batches), each
  // submitted under its own Idempotency-Key, so a retry after the API died is a replay, not a copy.
  const load = Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
    for (let j = 0; j < PER_CLIENT; j++) {
      const i = c * PER_CLIENT + j, job = jobs[i];
      const wait = started + j * BURST_MS - performance.now();
      if (wait > 0) await sleep(wait);
      let submit: Reply;
      for (;;) {
        submit = i % 2 === 0
          ? await client.request("POST", `/v1/jobs?key=${job.key.id}`, job.wtns, { "content-type": "application/octet-stream", "idempotency-key": `load-${i}` })
          : await client.request("POST", "/v1/jobs", JSON.stringify({ key: job.key.id, witness: btoa(String.fromCharCode(...job.wtns)) }), { "content-type": "application/json", "idempotency-key": `load-${i}` });
        if (submit.status !== 429) break;
        await sleep(Number(submit.headers.get("retry-after")) * 100);
      }
      assert.ok(submit.status === 202 || submit.status === 200, `job ${i}: ${submit.status} ${JSON.stringify(submit.body)}`);
      ids[i] = submit.body.id;
      const final = await client.waitFinal(ids[i]);
      assert.equal(final.state, "succeeded", `job ${i}: ${JSON.stringify(final)}`);
      const result = await client.request("GET", `/v1/jobs/${ids[i]}/result`);
      assert.equal(result.status, 200);
      results[i] = result.body;
    }
  }));

  // The faults, in the first bursts. w1: SIGKILL while it holds an unsettled batch of several.
  const killed = await freezeInBatch(workers.get("w1")!, client, 3);
  await workers.get("w1")!.stop("SIGKILL");
  // w2: frozen holding a batch; its lease (10 s) lapses and w3 proves those jobs.
  const w2 = workers.get("w2")!;
  const frozen = await freezeInBatch(w2, client, 3);
  // The API: killed outright and started again on its port; clients retry meanwhile.
  await sleep(300);
  await api.stop("SIGKILL");
  api = await startApi(url, port);
  const apiRestartedAt = performance.now() - started;
  // Once w2's jobs have succeeded elsewhere, it wakes up and tries to settle them: the fence refuses.
  for (const id of frozen.jobs as string[]) assert.equal((await client.waitFinal(id)).state, "succeeded");
  w2.signal("SIGCONT");
  const late = await w2.when((e) => e.event === "batch_settled" && e.batch === frozen.batch);
  assert.deepEqual([...(late.leaseLost as string[])].sort(), [...(frozen.jobs as string[])].sort(), "the frozen worker's late results are refused");
  assert.equal(late.succeeded, 0);
  await w2.stop("SIGTERM");
  workers.set("w2", await startWorker(url, "w2"));

  await load;
  const seconds = (performance.now() - started) / 1000;
  assert.ok(!workers.get("w1")!.events.some((e) => e.event === "batch_settled" && e.batch === killed.batch), "w1 was killed after its batch settled, not inside it");

  // Exactly once: 300 distinct jobs, each with its own public signals and one proved claim.
  assert.equal(new Set(ids).size, jobs.length, "a job id handed out twice");
  results.forEach((r, i) => assert.deepEqual(r.publicSignals, jobs[i].expected, `job ${i}: public signals`));
  const listed = await client.request("GET", "/v1/jobs?limit=1000");
  assert.equal(listed.body.jobs.length, jobs.length, "jobs in the database");
  assert.deepEqual(listed.body.counts, { queued: 0, running: 0, succeeded: 300, failed: 0, cancelled: 0 });
  const byId = new Map<string, Reply["body"]>(listed.body.jobs.map((job: Reply["body"]) => [job.id, job]));
  for (const id of ids) {
    const proved = byId.get(id)!.attempts.filter((a: { outcome: string }) => a.outcome === "proved");
    assert.equal(proved.length, 1, `job ${id}: ${JSON.stringify(byId.get(id)!.attempts)}`);
  }
  for (const id of killed.jobs as string[]) {
    const attempts = byId.get(id)!.attempts as Array<{ worker: string; outcome: string }>;
    assert.deepEqual(attempts[0], { ...attempts[0], worker: "w1", outcome: "running" }, `killed batch job ${id}: ${JSON.stringify(attempts)}`);
    assert.ok(attempts.some((a) => a.outcome === "proved" && a.worker !== "w1"), `killed batch job ${id} proved elsewhere: ${JSON.stringify(attempts)}`);
  }
  for (const id of frozen.jobs as string[]) {
    const attempts = byId.get(id)!.attempts as Array<{ worker: string; outcome: string }>;
    assert.deepEqual(attempts[0], { ...attempts[0], worker: "w2", outcome: "lease_lost" }, `frozen batch job ${id}: ${JSON.stringify(attempts)}`);
  }

  // The cluster's metrics say the same.
  const text = await client.metrics();
  for (const key of KEYS) {
    assert.ok(metric(text, new RegExp(`^cuzk_cluster_jobs\\{key="${key.id}",state="succeeded"\\} 150$`, "m")), text);
    assert.ok(metric(text, new RegExp(`^cuzk_cluster_queue_depth\\{key="${key.id}"\\} 0$`, "m")), text);
  }
  assert.ok(metric(text, /^cuzk_cluster_attempts\{outcome="proved"\} 300$/m), text);
  assert.ok(metric(text, new RegExp(`^cuzk_cluster_attempts\\{outcome="lease_lost"\\} ${(frozen.jobs as string[]).length}$`, "m")), text);
  assert.ok(metric(text, new RegExp(`^cuzk_cluster_attempts\\{outcome="running"\\} ${(killed.jobs as string[]).length}$`, "m")), text);
  assert.ok(metric(text, /^cuzk_cluster_workers_alive 2$/m), text); // w1 is dead; w2 (restarted) and w3
  assert.ok(metric(text, /^cuzk_cluster_proofs_per_second \d/m), text);

  assertSnarkjsAccepts(results.map((r, i) => ({ name: String(i), vkey: join(jobs[i].key.dir, "verification_key.json"), publicSignals: r.publicSignals, proof: r.proof })));
  const batches = [...workers.values()].flatMap((w) => w.events).filter((e) => e.event === "batch_claimed").map((e) => e.size as number);
  console.log(
    `cluster: 300 jobs in ${seconds.toFixed(1)} s; killed w1 holding ${(killed.jobs as string[]).length}, froze w2 holding ${(frozen.jobs as string[]).length} ` +
      `(refused late), API restarted at ${(apiRestartedAt / 1000).toFixed(1)} s; mean claim ${(batches.reduce((a, b) => a + b, 0) / batches.length).toFixed(1)} jobs`,
  );
  await stopAll("SIGTERM");
});

test("queue bounds (429 per key and in total), priorities, a bad witness failing alone, and the retry cap with a late result refused", async () => {
  const url = await postgres().createDatabase("rules");
  const port = await freePort();
  const api = await startApi(url, port, ["--queue-size", "6", "--queue-size-per-key", "4", "--retry-limit", "0"]);
  const client = new Client(`http://127.0.0.1:${port}`);
  const [a, b] = KEYS;
  const jobs = await witnesses(16);
  const ofKey = (key: (typeof KEYS)[number]) => jobs.filter((j) => j.key === key);
  const submit = (wtns: Uint8Array, keyId: string, priority = 0) => client.once("POST", `/v1/jobs?key=${keyId}&priority=${priority}`, wtns, { "content-type": "application/octet-stream" });

  // An unsatisfied witness: one internal value changed (still below r, so the API's check passes).
  const bad = ofKey(a)[1].wtns.slice();
  const { valuesOffset, count } = wtnsParts(bad);
  bad[valuesOffset + (count - 1) * 32] ^= 1;

  // No worker yet: everything queues. Key a: 4 jobs (the last at priority 10), then its bound.
  const queued = [
    await submit(ofKey(a)[0].wtns, a.id),
    await submit(bad, a.id),
    await submit(ofKey(a)[2].wtns, a.id),
    await submit(ofKey(a)[3].wtns, a.id, 10),
  ];
  for (const reply of queued) assert.equal(reply.status, 202, JSON.stringify(reply.body));
  assert.equal((await client.once("GET", `/v1/jobs/${queued[3].body.id}`)).body.position, 0, "priority 10 is next");
  assert.equal((await client.once("GET", `/v1/jobs/${queued[2].body.id}`)).body.position, 3);
  const perKey = await submit(ofKey(a)[4].wtns, a.id);
  assert.equal(perKey.status, 429);
  assert.equal(perKey.body.error.code, "QUEUE_FULL");
  assert.match(perKey.body.error.message, /4 jobs of key bn254\.mulchain_8 waiting/);
  assert.match(perKey.headers.get("retry-after") ?? "", /^\d+$/);
  for (const job of ofKey(b).slice(0, 2)) queued.push(await submit(job.wtns, b.id));
  for (const reply of queued) assert.equal(reply.status, 202, JSON.stringify(reply.body));
  const total = await submit(ofKey(b)[2].wtns, b.id);
  assert.equal(total.status, 429);
  assert.match(total.body.error.message, /6 jobs waiting/);
  const badPriority = await submit(ofKey(b)[2].wtns, b.id, 101);
  assert.equal(badPriority.status, 400);
  assert.equal(badPriority.body.error.path, "?priority");

  // One worker, batches of 2: its first batch of key a is the priority-10 job and the oldest.
  const worker = await startWorker(url, "rules-1", ["--batch-size", "2"]);
  const finals = await Promise.all(queued.map((r) => client.waitFinal(r.body.id)));
  const [first, badJob, third, urgent] = finals;
  assert.equal(badJob.state, "failed");
  assert.equal(badJob.error.code, "UNSATISFIED", JSON.stringify(badJob.error));
  for (const job of [first, third, urgent, ...finals.slice(4)]) assert.equal(job.state, "succeeded", JSON.stringify(job));
  assert.match(urgent.attempts[0].batch, /^rules-1#[0-9a-f]{4}-1$/, "the priority-10 job is in the worker's first claim");
  assert.equal(first.attempts[0].batch, urgent.attempts[0].batch, "with the oldest job");
  assert.equal((await client.once("GET", `/v1/jobs/${badJob.id}/result`)).body.error.code, "UNSATISFIED");
  const proofs = finals.filter((j) => j.state === "succeeded");
  const fetched = await Promise.all(proofs.map((j) => client.once("GET", `/v1/jobs/${j.id}/result`)));
  assertSnarkjsAccepts(fetched.map((r, i) => ({ name: proofs[i].id, vkey: join(KEYS.find((k) => k.id === proofs[i].key)!.dir, "verification_key.json"), publicSignals: r.body.publicSignals, proof: r.body.proof })));
  await worker.stop("SIGTERM");

  // The retry cap (--retry-limit 0): a worker frozen holding a batch loses its lease; with no
  // retry left the jobs fail RETRY_LIMIT, and the worker's proofs, once it thaws, are refused.
  // The worker is frozen while the jobs queue, so that it takes all four in one claim when thawed.
  const stalled = await startWorker(url, "rules-2", ["--batch-size", "4"]);
  stalled.signal("SIGSTOP");
  const ids: string[] = [];
  for (const job of ofKey(b).slice(3, 7)) ids.push((await submit(job.wtns, b.id)).body.id);
  await freezeInBatch(stalled, client, 4, () => stalled.signal("SIGCONT"));
  const lost = await Promise.all(ids.map((id) => client.waitFinal(id)));
  for (const job of lost) {
    assert.equal(job.state, "failed", JSON.stringify(job));
    assert.equal(job.error.code, "RETRY_LIMIT");
  }
  stalled.signal("SIGCONT");
  const late = await stalled.when((e) => e.event === "batch_settled");
  assert.equal((late.leaseLost as string[]).length, (late.size as number), JSON.stringify(late));
  for (const id of late.leaseLost as string[]) assert.equal((await client.once("GET", `/v1/jobs/${id}`)).body.error.code, "RETRY_LIMIT");
  await stalled.stop("SIGTERM");
  await api.stop("SIGTERM");
});
