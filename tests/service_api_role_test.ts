/**
 * @module
 * Promise: the API role of a database deployment proves nothing, so it needs no device and makes
 * no prover: started with `--backend cuda` on a machine without a GPU (where a context of that
 * backend cannot start, so a process that made one would exit 2), it opens its keys, says
 * `backend: "none"`, checks witnesses at submission (a malformed one is a 422), serves the
 * verification key, and a CPU worker proves what it accepted. Both kinds of service (the API, and
 * the in-process service) serve /metrics with prom-client's process_* families and a request-duration
 * histogram that counts the requests made, in well-formed Prometheus text.
 *
 * Real processes (`bun service/main.ts`) and a private PostgreSQL, as the cluster tests.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client, clusterPostgres, freePort, Proc, sleep, startWorker } from "./support/cluster.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const FIXTURES = join(ROOT, "tests/fixtures");
const KEY = { id: "bn254.mulchain_8", name: "bn254/mulchain_8" };
const WTNS = readFileSync(join(FIXTURES, KEY.name, "witness.wtns"));

const postgres = clusterPostgres();

/** Every sample line of a Prometheus text exposition, by family; fails on a line that is not one. */
function parseExposition(text: string): Map<string, Array<{ labels: string; value: number }>> {
  const families = new Map<string, Array<{ labels: string; value: number }>>();
  const typed = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      if (meta[1] === "TYPE") typed.set(meta[2], meta[3]);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/.exec(line);
    assert.ok(sample, `not a sample line: ${JSON.stringify(line)}`);
    const name = sample[1];
    const family = typed.has(name) ? name : name.replace(/_(bucket|sum|count)$/, "");
    assert.ok(typed.has(family), `${name} has no # TYPE line`);
    if (!families.has(name)) families.set(name, []);
    families.get(name)!.push({ labels: sample[2] ?? "", value: Number(sample[3]) });
  }
  return families;
}

/** The process_* families and the request histogram, with `route` counted `count` times with `status`. */
function assertProcessAndRequests(text: string, route: string, status: number, count: number): void {
  const families = parseExposition(text);
  for (const name of ["process_cpu_seconds_total", "process_cpu_user_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds", "process_open_fds"]) {
    const samples = families.get(name);
    assert.ok(samples && samples.length === 1, `${name} present`);
    assert.ok(samples[0].value >= 0, `${name} = ${samples[0].value}`);
  }
  assert.ok(families.get("process_resident_memory_bytes")![0].value > 1 << 20, "resident memory is a few MiB at least");
  const start = families.get("process_start_time_seconds")![0].value;
  assert.ok(Math.abs(start - Date.now() / 1000) < 600, `process_start_time_seconds ${start} is about now`);
  const labels = `route="${route}",status="${status}"`;
  const countLine = families.get("cuzk_http_request_duration_seconds_count")?.find((s) => s.labels.includes(labels));
  assert.equal(countLine?.value, count, `${route} ${status} counted in the histogram`);
  const buckets = families.get("cuzk_http_request_duration_seconds_bucket")!.filter((s) => s.labels.includes(labels));
  assert.ok(buckets.length >= 2 && buckets.at(-1)!.labels.includes('le="+Inf"') && buckets.at(-1)!.value === count, "its buckets end at +Inf with the count");
  for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i].value >= buckets[i - 1].value, "cumulative buckets");
  const counted = families.get("cuzk_http_requests_total")?.find((s) => s.labels.includes(labels));
  assert.equal(counted?.value, count, "the counter agrees");
}

test("the API role makes no prover and no device context: --backend cuda without a GPU, keys, witness checks, verification key; a worker proves; /metrics", async () => {
  const url = await postgres().createDatabase("api_role");
  const port = await freePort();
  const api = new Proc("api", ["--role", "api", "--database-url", url, "--host", "127.0.0.1", "--port", String(port), "--backend", "cuda", "--lease-s", "10", "--keys-dir", FIXTURES, "--preload", KEY.name]);
  const listening = await api.when((e) => e.event === "listening" || e.event === "exit");
  assert.equal(listening.event, "listening", `the API started: ${api.stderr}`);
  assert.equal(listening.backend, "none");
  const client = new Client(`http://127.0.0.1:${port}`);
  let ready = await client.once("GET", "/readyz");
  for (let i = 0; ready.status !== 200 && i < 200; i++) {
    await sleep(50);
    ready = await client.once("GET", "/readyz");
  }
  assert.equal(ready.status, 200, JSON.stringify(ready.body));
  assert.equal(ready.body.backend, "none");
  assert.deepEqual(ready.body.devices, []);

  const key = await client.request("GET", `/v1/keys/${KEY.id}`);
  assert.equal(key.status, 200);
  assert.equal(key.body.backend, "none");
  assert.equal(key.body.constraints, 253);
  const vk = await client.request("GET", `/v1/keys/${KEY.id}/verification_key`);
  assert.equal(vk.status, 200);
  const expected = JSON.parse(readFileSync(join(FIXTURES, KEY.name, "verification_key.json"), "utf8"));
  for (const field of ["vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2", "IC"]) assert.deepEqual(vk.body[field], expected[field], field);

  const binary = { "content-type": "application/octet-stream" };
  const bad = await client.request("POST", `/v1/jobs?key=${KEY.id}`, WTNS.subarray(0, WTNS.byteLength - 32), binary);
  assert.equal(bad.status, 422, JSON.stringify(bad.body));
  const accepted = await client.request("POST", `/v1/jobs?key=${KEY.id}`, WTNS, binary);
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  assert.equal(accepted.body.state, "queued");

  await startWorker(url, "w1", ["--keys-dir", FIXTURES, "--preload", KEY.name]);
  const done = await client.waitFinal(accepted.body.id);
  assert.equal(done.state, "succeeded", JSON.stringify(done));
  assert.deepEqual(done.attempts.map((a: { outcome: string }) => a.outcome), ["proved"]);

  assertProcessAndRequests(await client.metrics(), "POST /v1/jobs", 202, 1);
  assert.equal(api.events.filter((e) => e.event === "uncaught_exception" || e.event === "unhandled_rejection").length, 0);
});

test("the in-process service's /metrics: process_* families and the request histogram, well-formed", async () => {
  const port = await freePort();
  const service = new Proc("memory", ["--host", "127.0.0.1", "--port", String(port), "--backend", "cpu", "--cpu-threads", "1", "--result-grace-s", "0", "--keys-dir", FIXTURES, "--preload", KEY.name]);
  await service.when((e) => e.event === "listening");
  const client = new Client(`http://127.0.0.1:${port}`);
  while ((await client.once("GET", "/readyz")).status !== 200) await sleep(50);
  const binary = { "content-type": "application/octet-stream" };
  for (let i = 0; i < 3; i++) {
    const accepted = await client.request("POST", `/v1/jobs?key=${KEY.id}`, WTNS, binary);
    assert.equal(accepted.status, 202);
    assert.equal((await client.waitFinal(accepted.body.id)).state, "succeeded");
  }
  const text = await client.metrics();
  assertProcessAndRequests(text, "POST /v1/jobs", 202, 3);
  assert.match(text, /^cuzk_jobs_total\{key="bn254\.mulchain_8",state="succeeded"\} 3$/m);
  await service.stop();
});
