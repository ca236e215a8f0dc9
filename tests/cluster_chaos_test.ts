/**
 * @module
 * Promise: the database mode rides out its database going away and coming back, and the HTTP
 * layer answers HTTP/1.0 requests that carry no Host header.
 *
 * 1. HTTP/1.0 without Host, as raw bytes over a TCP socket (node:net) to the service in one
 *    process: `/healthz` 200, `/readyz` 200, a listing with a query string 200, an unknown path
 *    404 and a wrong method 405 with their JSON codes (Bun hands such a request its bare path as
 *    `req.url`, which `new URL` refuses: every route answered 500).
 * 2. A real PostgreSQL (tests/support/postgres.ts, synchronous_commit on so that an immediate stop
 *    loses no acknowledged commit), one API and two workers (`bun service/main.ts --role ...`), three
 *    clients each sending a job every ~150 ms (each under its own Idempotency-Key, resent on a 503
 *    or a network error). Three times the server is stopped for 5 s and started again while claims,
 *    settles and submissions are inside their transactions: the test holds a lock on
 *    cuzk.attempts (claims insert into it, settles update it) and the API's submission lock, and
 *    waits until pg_stat_activity shows the API and both workers waiting on them. Then (1) `pg_ctl
 *    stop -m immediate`, (2) `-m fast`, (3) the three let go into their COMMITs under a
 *    synchronous standby that does not exist, so that the first commits and waits unanswered (the
 *    others wait behind it, not committed), and `-m immediate`: the process whose transaction
 *    committed unanswered must find that out (a worker's claim proved at once, or its settle not
 *    written twice). Meanwhile the test probes the API every 100 ms. Asserted: no process exits
 *    and none logs an uncaught error; every answer of the API
 *    while the database is down is 503 DATABASE_UNAVAILABLE with Retry-After (none 500), `/readyz`
 *    is not ready (503, databaseReachable false) while it is down and ready again after, and
 *    `/healthz` (over HTTP/1.0) answers 200 throughout; the five LISTEN connections (the API's
 *    one, two per worker; counted in pg_stat_activity, whose `query` keeps a backend's last
 *    statement) are all back within 8 s of the restart; every accepted job succeeds with exactly
 *    one `proved` attempt and no claim is left unsettled; each result has its own witness's public
 *    signals and snarkjs accepts every proof.
 *
 * The services are Bun processes whatever runs the test, which drives them over HTTP and SQL only,
 * so the outage test runs under one runtime (Bun; CUZK_CHAOS_RUNTIMES=deno,bun,node for others):
 * the CI machine has two cores and a time budget. Part 1 runs under every runtime.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { Key, WitnessCalculator } from "../mod.ts";
import { SUBMIT_LOCK } from "../service/store_pg.ts";
import { Client, freePort, Proc, sleep, startApi, startWorker, stopAll } from "./support/cluster.ts";
import type { Event } from "./support/cluster.ts";
import { library } from "./support/native.ts";
import { startPostgres } from "./support/postgres.ts";
import type { Postgres } from "./support/postgres.ts";
import { assertSnarkjsAccepts } from "./support/snarkjs.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const FIXTURES = join(ROOT, "tests/fixtures");
const KEY = { id: "bn254.mulchain_8", name: "bn254/mulchain_8", dir: join(FIXTURES, "bn254/mulchain_8") };
/** One key; a lease long enough that an outage of a few seconds does not take claims away. */
const ARGS = ["--keys-dir", FIXTURES, "--preload", KEY.name, "--lease-s", "30"];

/** The load: clients, and each one's pause between jobs. */
const CLIENTS = 3;
const PACE_MS = 150;

const RUNTIME = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
const CHAOS_RUNTIMES = (process.env.CUZK_CHAOS_RUNTIMES ?? "bun").split(",").map((s) => s.trim());
const chaosSkip = CHAOS_RUNTIMES.includes(RUNTIME)
  ? false
  : `the services are Bun processes under every runtime; the outage test runs under ${CHAOS_RUNTIMES.join(", ")} (CUZK_CHAOS_RUNTIMES)`;

interface RawReply {
  status: number;
  head: string;
  body: string;
}

/** Sends `request` as it is over a TCP socket and reads the answer until the server closes the connection. */
function rawHttp(port: number, request: string, timeoutMs = 5000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer to ${JSON.stringify(request)} in ${timeoutMs} ms: ${JSON.stringify(Buffer.concat(chunks).toString())}`));
    }, timeoutMs);
    socket.on("data", (chunk: Uint8Array) => chunks.push(chunk));
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      const head = split < 0 ? text : text.slice(0, split);
      const status = /^HTTP\/1\.[01] (\d{3}) /.exec(head);
      if (!status) return reject(new Error(`not an HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      resolve({ status: Number(status[1]), head, body: split < 0 ? "" : text.slice(split + 4) });
    });
  });
}

test("HTTP/1.0 without a Host header: /healthz 200, /readyz 200, a query string read, 404 and 405 as JSON (raw bytes over TCP)", async () => {
  const port = await freePort();
  const service = new Proc("http10", ["--host", "127.0.0.1", "--port", String(port), "--backend", "cpu", "--cpu-threads", "1", "--keys-dir", FIXTURES]);
  try {
    await service.when((e) => e.event === "listening");
    const get = (path: string, method = "GET") => rawHttp(port, `${method} ${path} HTTP/1.0\r\n\r\n`);

    const health = await get("/healthz");
    assert.equal(health.status, 200, health.head + health.body);
    assert.deepEqual(JSON.parse(health.body), { status: "ok" });
    const ready = await get("/readyz");
    assert.equal(ready.status, 200, ready.body);
    assert.equal(JSON.parse(ready.body).ready, true);
    const listing = await get("/v1/jobs?limit=1&state=queued");
    assert.equal(listing.status, 200, listing.body);
    assert.deepEqual(JSON.parse(listing.body).jobs, []);
    const badQuery = await get("/v1/jobs?limit=nope");
    assert.equal(badQuery.status, 400, badQuery.body);
    assert.equal(JSON.parse(badQuery.body).error.path, "?limit");
    const unknown = await get("/nowhere");
    assert.equal(unknown.status, 404, unknown.body);
    assert.equal(JSON.parse(unknown.body).error.code, "NOT_FOUND");
    const method = await get("/healthz", "DELETE");
    assert.equal(method.status, 405, method.body);
    assert.equal(JSON.parse(method.body).error.code, "METHOD_NOT_ALLOWED");
    // HTTP/1.1 with a Host, for comparison: the same answer.
    const withHost = await rawHttp(port, "GET /healthz HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n\r\n");
    assert.equal(withHost.status, 200);
  } finally {
    await service.stop("SIGTERM");
  }
});

/** `count` distinct witnesses of the key (x moved per job) and each one's public signals. */
async function witnesses(count: number): Promise<Array<{ wtns: Uint8Array; expected: string[] }>> {
  const calculator = await WitnessCalculator.load(join(KEY.dir, "circuit.wasm"));
  const zkey = await Key.open(join(KEY.dir, "circuit.zkey"), { library: library() });
  const input = JSON.parse(readFileSync(join(KEY.dir, "input.json"), "utf8")) as Record<string, string>;
  const out = [];
  for (let i = 0; i < count; i++) {
    const wtns = await calculator.wtns({ ...input, x: (BigInt(input.x) + BigInt(i)).toString() });
    out.push({ wtns, expected: zkey.checkWitness(wtns).publicSignals });
  }
  zkey.close();
  return out;
}

/** One statement on a connection of its own (the server may have been restarted since the last). */
async function sql<T = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, application_name: "chaos test" });
  client.on("error", () => {});
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end().catch(() => {});
  }
}

/** LISTEN connections now: a listening backend's last statement is its LISTEN (repeated as its health check). */
const LISTENERS_SQL = "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND query LIKE 'LISTEN %'";
const listeners = async (url: string) => (await sql<{ n: number }>(url, LISTENERS_SQL))[0].n;

/** Backends of the service waiting on a lock, by process (application_name), with what they wait in. */
async function blockedBackends(url: string): Promise<Map<string, string[]>> {
  const rows = await sql<{ app: string; query: string }>(
    url,
    "SELECT application_name AS app, left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND state = 'active' AND application_name LIKE 'cuzk %'",
  );
  const out = new Map<string, string[]>();
  for (const { app, query } of rows) out.set(app, [...(out.get(app) ?? []), query]);
  return out;
}

/** The connections of the service's own transactions, by process (pg-boss's and the LISTEN ones are named apart). */
const SERVICE_APPS = ["cuzk api", "cuzk worker w1", "cuzk worker w2"];

/** The service's transactions waiting inside their COMMIT, by process: what each waits for (SyncRep: committed here, waiting for a standby). */
async function waitingCommits(url: string): Promise<Map<string, string[]>> {
  const rows = await sql<{ app: string; wait: string }>(
    url,
    "SELECT application_name AS app, wait_event AS wait FROM pg_stat_activity WHERE state = 'active' AND query = 'COMMIT' AND application_name = ANY($1)",
    [SERVICE_APPS],
  );
  const out = new Map<string, string[]>();
  for (const { app, wait } of rows) out.set(app, [...(out.get(app) ?? []), wait]);
  return out;
}

/** The service's backends as the server sees them (for a failure's message). */
async function activity(url: string): Promise<string> {
  const rows = await sql(url, "SELECT application_name, state, wait_event, left(query, 50) AS query FROM pg_stat_activity WHERE application_name LIKE 'cuzk %' ORDER BY 1").catch((error) => [String(error)]);
  return JSON.stringify(rows);
}

/**
 * Polls `check` every `everyMs` until it returns true; the milliseconds it took, or throws after
 * `timeoutMs` (with the server's view of the service's backends, when `url` is given).
 */
async function until(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 100, url?: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check().catch(() => false)) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms${url ? `; backends: ${await activity(url)}` : ""}`);
    await sleep(everyMs);
  }
}

/** An answer of the API noted while the database was down. */
interface Noted {
  what: string;
  status: number;
  code?: string;
  message?: string;
  retryAfter: string | null;
  ready?: boolean;
  reachable?: boolean;
}

test("PostgreSQL stopped for 5 s and started again (immediate, fast, immediate with COMMITs unanswered) with claims, settles and submissions inside their transactions: no process exits, 503 + Retry-After meanwhile, LISTEN back within seconds, every job proved exactly once", { skip: chaosSkip }, async () => {
  const started = performance.now();
  const postgres: Postgres = await startPostgres({ settings: { synchronous_commit: "on" } });
  // The load and the probes run until these say stop, also when an assertion ends the test early.
  let loadStopped = false;
  let down = false;
  try {
    const url = await postgres.createDatabase("chaos");
    const port = await freePort();
    const api = await startApi(url, port, ARGS);
    const workers = [await startWorker(url, "w1", [...ARGS, "--batch-size", "2"]), await startWorker(url, "w2", [...ARGS, "--batch-size", "2"])];
    const procs = [api, ...workers];
    const client = new Client(`http://127.0.0.1:${port}`);
    const pool = await witnesses(48);

    // Expected LISTEN connections: the API's (cuzk_job) and two per worker (cuzk_queued, cuzk_cancel).
    assert.equal(await listeners(url), 5, "LISTEN connections before any outage");

    // The load: three clients, each sending a job every ~150 ms, the same request again under the same
    // Idempotency-Key after a 503 or a network error (a replay if the first did commit).
    const accepted: Array<{ id: string; witness: number; replayed: boolean }> = [];
    const unexpected: string[] = [];
    const noted: Noted[] = [];
    let sent = 0;
    const load = Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (!loadStopped && sent < 1000) {
        const n = sent++;
        const witness = n % pool.length;
        for (let tries = 0; !loadStopped; tries++) {
          assert.ok(tries < 600, `job ${n}: not accepted in 600 tries`);
          try {
            const reply = await client.once("POST", `/v1/jobs?key=${KEY.id}`, pool[witness].wtns, { "content-type": "application/octet-stream", "idempotency-key": `chaos-${n}` });
            if (down) noted.push({ what: "POST /v1/jobs", status: reply.status, code: reply.body?.error?.code, message: reply.body?.error?.message, retryAfter: reply.headers.get("retry-after") });
            if (reply.status === 202 || reply.status === 200) {
              accepted.push({ id: reply.body.id, witness, replayed: reply.status === 200 });
              break;
            }
            if (reply.status !== 503) unexpected.push(`POST ${n}: ${reply.status} ${JSON.stringify(reply.body)}`);
          } catch (error) {
            unexpected.push(`POST ${n}: ${(error as Error).message}`);
          }
          await sleep(100);
        }
        await sleep(PACE_MS);
      }
    }));
    load.catch(() => {}); // awaited below; not an unhandled rejection if the test ends first

    /** While the database is down: /readyz, a job's view and /healthz over HTTP/1.0, every 100 ms. */
    const probe = async () => {
      while (down && !loadStopped) {
        const ready = await client.once("GET", "/readyz");
        noted.push({ what: "GET /readyz", status: ready.status, code: ready.body?.error?.code, retryAfter: ready.headers.get("retry-after"), ready: ready.body.ready, reachable: ready.body.databaseReachable });
        if (accepted.length > 0) {
          const view = await client.once("GET", `/v1/jobs/${accepted[0].id}`);
          noted.push({ what: "GET /v1/jobs/:id", status: view.status, code: view.body?.error?.code, retryAfter: view.headers.get("retry-after") });
        }
        const health = await rawHttp(port, "GET /healthz HTTP/1.0\r\n\r\n");
        noted.push({ what: "GET /healthz (HTTP/1.0)", status: health.status, retryAfter: null });
        await sleep(100);
      }
    };

    /**
     * Both workers waiting inside a settle: each is frozen (SIGSTOP) as it announces a claim and
     * kept so while that batch is unsettled (else thawed and tried on its next claim), the test
     * locks both batches' attempt rows (not their job rows, which the proof's progress writes
     * update too; `holder`, in a transaction) and the submissions' lock (`gate`), and thaws them:
     * each proves and runs into its settle's UPDATE of those attempts. The milliseconds it took.
     */
    const insideSettles = async (holder: pg.Client, gate: pg.Client): Promise<number> => {
      const started = performance.now();
      await holder.connect();
      for (let tries = 0; ; tries++) {
        assert.ok(tries < 10, "never had both workers frozen holding unsettled claims");
        const claims: Event[] = [];
        for (const worker of workers) {
          for (let freezes = 0; ; freezes++) {
            assert.ok(freezes < 40, `${worker.name}: never frozen before its settle in 40 claims`);
            const claim = await worker.when((e) => e.event === "batch_claimed", () => worker.signal("SIGSTOP"));
            await sleep(100); // lines it wrote before the signal are read by now
            if (!worker.events.some((e) => e.event === "batch_settled" && e.batch === claim.batch)) {
              claims.push(claim);
              break;
            }
            worker.signal("SIGCONT");
          }
        }
        const size = claims.reduce((n, claim) => n + (claim.jobs as string[]).length, 0);
        await holder.query("BEGIN");
        // A worker frozen inside its settle holds these rows already: then start over.
        const { rows } = await holder.query("SELECT job_id FROM cuzk.attempts WHERE batch = ANY($1) AND settled_at IS NULL FOR UPDATE SKIP LOCKED", [claims.map((claim) => claim.batch)]);
        if (rows.length === size) {
          await gate.query("SELECT pg_advisory_lock($1)", [SUBMIT_LOCK]);
          for (const worker of workers) worker.signal("SIGCONT");
          break;
        }
        for (const worker of workers) worker.signal("SIGCONT");
        await holder.query("ROLLBACK");
      }
      await until(`${OUTAGES[1].mode}: both workers inside a settle`, async () => {
        blocked = await blockedBackends(url);
        return ["cuzk worker w1", "cuzk worker w2"].every((app) => blocked.get(app)?.some((q) => /^UPDATE cuzk\.attempts a SET settled_at/.test(q)));
      }, 15_000, 50, url);
      return performance.now() - started;
    };

    /**
     * Both workers waiting inside a claim: they are held back (SIGSTOP) while jobs queue up, the
     * test locks the queued rows (`holder`, in a transaction) and the submissions' lock (`gate`)
     * and lets them go: each runs into its claim's UPDATE of those rows. The milliseconds it took.
     */
    const insideClaims = async (holder: pg.Client, gate: pg.Client): Promise<number> => {
      const started = performance.now();
      for (const worker of workers) worker.signal("SIGSTOP");
      await sleep(600);
      await holder.connect();
      await holder.query("BEGIN");
      await gate.query("SELECT pg_advisory_lock($1)", [SUBMIT_LOCK]);
      const { rows } = await holder.query("SELECT count(*)::int AS n FROM (SELECT id FROM cuzk.jobs WHERE state = 'queued' FOR UPDATE SKIP LOCKED) AS q");
      for (const worker of workers) worker.signal("SIGCONT");
      assert.ok(rows[0].n >= 4, `jobs queued while the workers were held back: ${rows[0].n}`);
      await until(`${OUTAGES[2].mode}: both workers inside a claim`, async () => {
        blocked = await blockedBackends(url);
        return ["cuzk worker w1", "cuzk worker w2"].every((app) => blocked.get(app)?.some((q) => /^UPDATE cuzk\.jobs j SET state = 'running'/.test(q)));
      }, 15_000, 50, url);
      return performance.now() - started;
    };
    let blocked = new Map<string, string[]>();

    const settled = () => workers.map((w) => w.events.filter((e) => e.event === "batch_settled").length);
    const settledSince = (before: number[]) => settled().reduce((n, count, i) => n + count - before[i], 0);
    const outages: Array<Record<string, unknown>> = [];
    const OUTAGES = [
      { mode: "immediate", at: "in-transaction" },
      { mode: "fast", at: "settle-commit" },
      { mode: "immediate", at: "claim-commit" },
    ] as const;
    for (const { mode, at } of OUTAGES) {
      const name = `${mode}, ${at}`;
      // Work under way first: settles since the last outage (or the start).
      const mark = settled();
      await until(`${name}: workers settling batches`, async () => settledSince(mark) >= 4, 20_000);
      const eventsBefore = procs.map((p) => p.events.length);

      blocked = new Map<string, string[]>();
      const holder = new pg.Client({ connectionString: url, application_name: "chaos test" });
      holder.on("error", () => {}); // the server goes away under it
      const apiInSubmission = () =>
        until(`${name}: the API inside a submission`, async () => {
          blocked = await blockedBackends(url);
          return blocked.get("cuzk api")?.some((q) => /pg_advisory_xact_lock/.test(q)) ?? false;
        }, 10_000, 50, url);
      /** With `at: "commit"`: the process whose transaction committed while its COMMIT went unanswered. */
      let committedUnanswered: string | undefined;
      let waitedMs: number;
      if (at === "in-transaction") {
        // Claims and settles wait on cuzk.attempts (claims insert into it, settles update it)
        // while the test holds it, submissions on their advisory lock: the server is stopped once
        // the API and both workers are inside such a transaction.
        await holder.connect();
        await holder.query("BEGIN");
        await holder.query("LOCK TABLE cuzk.attempts IN EXCLUSIVE MODE");
        waitedMs = await until(`${name}: both workers inside a claim or settle`, async () => {
          blocked = await blockedBackends(url);
          return ["cuzk worker w1", "cuzk worker w2"].every((app) => blocked.get(app)?.some((q) => /cuzk\.attempts/.test(q)));
        }, 15_000, 50, url);
        await holder.query("SELECT pg_advisory_xact_lock($1)", [SUBMIT_LOCK]);
        await apiInSubmission();
      } else {
        // COMMITs sent and not answered. With a synchronous standby that does not exist, a commit
        // waits (SyncRep) once it is durable here. Both workers are brought to wait inside a
        // settle, or inside a claim, on rows the test locks, the API inside a submission on its
        // lock; the standby is named and the workers let go (a ROLLBACK never waits), then the
        // API: the first worker to reach its COMMIT commits and waits, the other and the API wait
        // behind it, not committed, for the lock that orders transactions which NOTIFY. Once all
        // three wait, the setting is reset on disk (read at the next start, not now) and the
        // server stopped.
        const gate = new pg.Client({ connectionString: url, application_name: "chaos test" });
        gate.on("error", () => {});
        await gate.connect();
        waitedMs = at === "settle-commit" ? await insideSettles(holder, gate) : await insideClaims(holder, gate);
        await apiInSubmission();
        await sql(url, "ALTER SYSTEM SET synchronous_standby_names = 'chaos_no_standby'");
        await sql(url, "SELECT pg_reload_conf()");
        await sleep(300); // the checkpointer publishes the standby list to the backends
        // The workers first, so that the transaction that commits unanswered is a worker's; then the API.
        await holder.query("ROLLBACK");
        await until(`${name}: a worker committed, waiting in its COMMIT`, async () => {
          blocked = await waitingCommits(url);
          return ["cuzk worker w1", "cuzk worker w2"].some((app) => blocked.get(app)?.includes("SyncRep"));
        }, 15_000, 50, url);
        await gate.query("SELECT pg_advisory_unlock($1)", [SUBMIT_LOCK]);
        await until(`${name}: the API and both workers in their COMMITs`, async () => {
          blocked = await waitingCommits(url);
          return SERVICE_APPS.every((app) => blocked.has(app));
        }, 15_000, 50, url);
        void gate.end().catch(() => {});
        committedUnanswered = [...blocked].find(([, waits]) => waits.includes("SyncRep"))![0];
        await sql(url, "ALTER SYSTEM RESET synchronous_standby_names");
      }

      const settledBefore = settled();
      down = true;
      const probing = probe();
      probing.catch(() => {}); // awaited below
      const haltStarted = performance.now();
      await postgres.halt(mode);
      const haltMs = performance.now() - haltStarted;
      void holder.end().catch(() => {});
      await sleep(5000);
      for (const proc of procs) assert.equal(proc.exit, undefined, `${proc.name} exited during the ${name} outage: ${JSON.stringify(proc.exit)}; ${proc.stderr.slice(-2000)}`);
      const startStarted = performance.now();
      await postgres.start();
      const upAt = performance.now();
      const startMs = upAt - startStarted;

      // Back: the LISTEN connections, readiness, and the workers settling again.
      const listenBackMs = await until(`${name}: all 5 LISTEN connections back`, async () => (await listeners(url)) === 5, 8000, 100, url);
      const readyBackMs = await until(`${name}: /readyz ready`, async () => (await client.once("GET", "/readyz")).status === 200, 15_000);
      down = false;
      await probing;
      await until(`${name}: workers settling again`, async () => settledSince(settledBefore) > 0, 20_000);
      if (committedUnanswered) {
        // The worker found that its transaction committed: a claim's jobs proved now (not after
        // their lease), a settle not written again.
        // Another worker may settle first: this one's next retry comes within its backoff (5 s at most).
        const proc = procs.find((p) => `cuzk ${p === api ? "api" : `worker ${p.name}`}` === committedUnanswered)!;
        const since = () => proc.events.slice(eventsBefore[procs.indexOf(proc)]);
        const found = at === "settle-commit"
          ? (e: Event) => e.event === "batch_settled" && e.earlier === true
          : (e: Event) => e.event === "claim_checked" && e.committed === true;
        await until(`${name}: ${proc.name}'s ${at} checked`, async () => since().some(found), 10_000).catch(() => {});
        assert.ok(since().some(found), `${proc.name}: its ${at} not found: ${JSON.stringify(since().filter((e) => /claim|settle/.test(e.event)).slice(0, 6))}`);
      }
      outages.push({
        name,
        acceptedSoFar: accepted.length,
        blocked: Object.fromEntries([...blocked].map(([app, queries]) => [app, queries.map((q) => q.slice(0, 28))])),
        waitedForBlockMs: Math.round(waitedMs),
        ...(committedUnanswered ? { committedUnanswered } : {}),
        haltMs: Math.round(haltMs),
        startMs: Math.round(startMs),
        listenBackMs: Math.round(listenBackMs),
        readyBackMs: Math.round(readyBackMs),
      });
      for (const proc of procs) assert.equal(proc.exit, undefined, `${proc.name} exited during the ${name} outage: ${JSON.stringify(proc.exit)}; ${proc.stderr.slice(-2000)}`);
    }
    loadStopped = true;
    await load;
    assert.deepEqual(unexpected, [], "answers other than 202/200/503 (or a network error) to a submission");

    // While down: every API answer a 503 DATABASE_UNAVAILABLE with Retry-After (healthz 200).
    const apiAnswers = noted.filter((n) => n.what !== "GET /healthz (HTTP/1.0)");
    const unavailable = apiAnswers.filter((n) => n.status === 503);
    assert.ok(unavailable.length >= 20, `503s seen while the database was down: ${unavailable.length}`);
    for (const n of apiAnswers) {
      // A request that reached the database just before it went, or just after it came back, may succeed.
      if (n.status === 200 || n.status === 202) continue;
      assert.equal(n.status, 503, JSON.stringify(n));
      assert.match(n.retryAfter ?? "", /^\d+$/, `no Retry-After: ${JSON.stringify(n)}`);
      if (n.what === "GET /readyz") assert.deepEqual([n.ready, n.reachable], [false, false], JSON.stringify(n));
      else assert.equal(n.code, "DATABASE_UNAVAILABLE", JSON.stringify(n));
    }
    assert.ok(noted.some((n) => n.what === "GET /readyz" && n.status === 503), "/readyz not ready while the database was down");
    // The submission whose COMMIT went unanswered: a 503 saying so (its resend is a replay if it did commit).
    const untold = noted.filter((n) => n.status === 503 && /whether it was accepted cannot be told yet/.test(n.message ?? ""));
    assert.ok(untold.length > 0, "no 503 for a submission whose COMMIT went unanswered");
    const replays = accepted.filter((a) => a.replayed).length;
    const healthz = noted.filter((n) => n.what === "GET /healthz (HTTP/1.0)");
    assert.ok(healthz.length > 0 && healthz.every((n) => n.status === 200), `/healthz while down: ${JSON.stringify(healthz.filter((n) => n.status !== 200))}`);

    // Every accepted job succeeds exactly once, with its own public signals.
    const finals = await Promise.all(accepted.map(({ id }) => client.waitFinal(id)));
    for (const job of finals) assert.equal(job.state, "succeeded", JSON.stringify(job));
    assert.equal(new Set(accepted.map((a) => a.id)).size, accepted.length, "a job id accepted twice");
    const attempts = await sql<{ id: string; proved: number; unsettled: number; outcomes: string[] }>(
      url,
      `SELECT j.id, count(*) FILTER (WHERE a.outcome = 'proved')::int AS proved, count(*) FILTER (WHERE a.outcome IS NULL)::int AS unsettled,
              array_agg(coalesce(a.outcome, 'running') ORDER BY a.attempt) AS outcomes
         FROM cuzk.jobs j LEFT JOIN cuzk.attempts a ON a.job_id = j.id GROUP BY j.id`,
    );
    assert.equal(attempts.length, accepted.length, "jobs in the database");
    for (const row of attempts) {
      assert.equal(row.proved, 1, `job ${row.id}: ${JSON.stringify(row.outcomes)}`);
      assert.equal(row.unsettled, 0, `job ${row.id}: a claim left unsettled: ${JSON.stringify(row.outcomes)}`);
    }
    const results = await Promise.all(accepted.map(async ({ id }) => (await client.request("GET", `/v1/jobs/${id}/result`)).body));
    results.forEach((r, i) => assert.deepEqual(r.publicSignals, pool[accepted[i].witness].expected, `job ${accepted[i].id}: public signals`));
    assertSnarkjsAccepts(results.map((r, i) => ({ name: accepted[i].id, vkey: join(KEY.dir, "verification_key.json"), publicSignals: r.publicSignals, proof: r.proof })));

    // Nothing reached the process level, and each process saw the outages and came back.
    const events = (proc: Proc, name: string) => proc.events.filter((e: Event) => e.event === name);
    for (const proc of procs) {
      assert.equal(proc.exit, undefined, `${proc.name} exited: ${JSON.stringify(proc.exit)}`);
      assert.deepEqual([...events(proc, "uncaught_exception"), ...events(proc, "unhandled_rejection")], [], `${proc.name}: errors at the process level`);
      assert.ok(events(proc, "listen_restored").length >= OUTAGES.length, `${proc.name}: listen_restored ${JSON.stringify(events(proc, "listen_restored"))}`);
    }
    for (const worker of workers) assert.ok(events(worker, "worker_error").length + events(worker, "settle_retry").length > 0, `${worker.name} saw no outage`);
    const leaseLost = attempts.reduce((n, row) => n + row.outcomes.filter((o) => o === "lease_lost").length, 0);
    const count = (name: string) => workers.reduce((n, w) => n + events(w, name).length, 0);
    const restored = procs.flatMap((p) => events(p, "listen_restored").map((e) => e.downMs as number));
    console.log(
      `chaos: ${accepted.length} jobs accepted and proved once each (${leaseLost} lease_lost attempts) in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
        `${unavailable.length} 503 DATABASE_UNAVAILABLE while down (${untold.length} for an unanswered COMMIT), 0 500; ${replays} accepted as a replay; ` +
        `LISTEN down ${Math.min(...restored)}-${Math.max(...restored)} ms; workers: ${count("worker_error")} worker_error, ${count("settle_retry")} settle_retry, ` +
        `${workers.reduce((n, w) => n + events(w, "claim_checked").filter((e) => e.committed).length, 0)} committed claims found, ` +
        `${workers.reduce((n, w) => n + events(w, "batch_settled").filter((e) => e.earlier).length, 0)} settles found written; ` +
        `outages: ${JSON.stringify(outages)}`,
    );
    // And each still stops cleanly (its own exit line: Deno reports a signalled child's code as null).
    await stopAll("SIGTERM");
    for (const proc of procs) assert.deepEqual(events(proc, "exit").map((e) => e.code), [0], `${proc.name} left with ${JSON.stringify(proc.exit)}: ${proc.stderr.slice(-1000)}`);
  } finally {
    loadStopped = true;
    down = false;
    await stopAll();
    await postgres.stop();
  }
});
