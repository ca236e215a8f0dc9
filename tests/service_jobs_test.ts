/**
 * @module
 * Promise: the service's jobs follow one state machine and one batch executor, whichever store
 * holds them.
 *
 * - The table of service/job_states.ts, pinned state by state and event by event (a transition
 *   changed, added or removed fails here), and its properties: every state reachable from a
 *   submission, every active state able to end, no way out of a final state, the SQL parameters.
 * - The statements of the PostgreSQL store that write a job's state take that state and the states
 *   they may write over from the table: read from the sources, none writes a literal state, each
 *   guards with `state = ANY(...)`; the database's CHECK and the API's schema list the table's states.
 * - service/batch.ts: one call; after a failed batch call one call per job, only the bad one
 *   failing; no retry of a single job or of a cancelled call; calls reported as they end.
 * - The in-memory scheduler with a scripted prover (no library, no device): states and attempts of
 *   a batch, of a batch with a bad witness, of cancels (queued, running alone, running shared,
 *   final), a proof that arrives for a cancelled job dropped, a shutdown's cancels.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { CuzkError } from "../mod.ts";
import type { ProofResult, ProveOptions } from "../mod.ts";
import { proveJobs } from "../service/batch.ts";
import type { CallReport } from "../service/batch.ts";
import {
  ACTIVE_STATES,
  allowed,
  eventsFrom,
  FINAL_STATES,
  INITIAL_STATE,
  JOB_EVENTS,
  JOB_STATES,
  JobTransitionError,
  nextState,
  sqlState,
  sqlTransition,
  transition,
  TRANSITIONS,
} from "../service/job_states.ts";
import type { JobEvent, JobState } from "../service/job_states.ts";
import type { KeyRegistry } from "../service/keys.ts";
import { ServiceMetrics } from "../service/metrics.ts";
import { Scheduler } from "../service/scheduler.ts";
import type { Job } from "../service/scheduler.ts";
import { ServiceError } from "../service/errors.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The machine as it must be: for each state, where each event leads (absent: not allowed). */
const EXPECTED: Record<JobState, Partial<Record<JobEvent, JobState>>> = {
  queued: { claim: "running", cancel: "cancelled", abandon: "failed" },
  running: { reclaim: "running", prove: "succeeded", fail: "failed", cancel: "cancelled", abandon: "failed" },
  succeeded: {},
  failed: {},
  cancelled: {},
};

test("job states: every state and event leads where the table says, and nowhere else", () => {
  assert.deepEqual([...JOB_STATES], ["queued", "running", "succeeded", "failed", "cancelled"]);
  assert.deepEqual([...JOB_EVENTS].sort(), ["abandon", "cancel", "claim", "fail", "prove", "reclaim"]);
  for (const state of JOB_STATES) {
    for (const event of JOB_EVENTS) {
      const expected = EXPECTED[state][event];
      assert.equal(nextState(state, event), expected, `${state} --${event}--> ${expected ?? "(not allowed)"}`);
      assert.equal(allowed(state, event), expected !== undefined, `allowed(${state}, ${event})`);
      if (expected === undefined) {
        assert.throws(() => transition(state, event), (error: unknown) => error instanceof JobTransitionError && error.state === state && error.event === event && error.message.includes(`cannot ${event}`));
      } else {
        assert.equal(transition(state, event), expected);
      }
    }
    assert.deepEqual(eventsFrom(state), JOB_EVENTS.filter((event) => EXPECTED[state][event] !== undefined), `events from ${state}`);
  }
});

test("job states: a submission starts queued; final states have no way out; every state is reachable and every active one can end", () => {
  assert.equal(INITIAL_STATE, "queued");
  assert.deepEqual([...FINAL_STATES].sort(), ["cancelled", "failed", "succeeded"]);
  assert.deepEqual([...ACTIVE_STATES], ["queued", "running"]);
  for (const state of FINAL_STATES) assert.deepEqual(eventsFrom(state), [], `${state} is final`);
  // Every state is reached from a submission.
  const reached = new Set<JobState>([INITIAL_STATE]);
  for (let grew = true; grew;) {
    grew = false;
    for (const state of [...reached]) {
      for (const event of eventsFrom(state)) {
        const next = TRANSITIONS[event].to;
        if (reached.has(next)) continue;
        reached.add(next);
        grew = true;
      }
    }
  }
  assert.deepEqual([...reached].sort(), [...JOB_STATES].sort());
  // Every active state can be cancelled and can fail for good (nothing stays active forever).
  for (const state of ACTIVE_STATES) {
    assert.ok(FINAL_STATES.has(nextState(state, "cancel")!), `${state} can be cancelled`);
    assert.equal(nextState(state, "abandon"), "failed", `${state} can be given up on`);
  }
});

test("job states: the SQL states of each statement come from the table", () => {
  assert.deepEqual(sqlTransition("claim", "reclaim"), { from: ["queued", "running"], to: "running", sqlFrom: "'queued', 'running'", sqlTo: "'running'" });
  assert.deepEqual(sqlTransition("cancel"), { from: ["queued", "running"], to: "cancelled", sqlFrom: "'queued', 'running'", sqlTo: "'cancelled'" });
  assert.deepEqual(sqlTransition("abandon"), { from: ["queued", "running"], to: "failed", sqlFrom: "'queued', 'running'", sqlTo: "'failed'" });
  assert.deepEqual(sqlTransition("prove"), { from: ["running"], to: "succeeded", sqlFrom: "'running'", sqlTo: "'succeeded'" });
  assert.deepEqual(sqlTransition("fail"), { from: ["running"], to: "failed", sqlFrom: "'running'", sqlTo: "'failed'" });
  assert.throws(() => sqlTransition("prove", "fail"), /lead to different states/);
  assert.equal(sqlState(INITIAL_STATE), "'queued'");
  assert.throws(() => sqlState("done'; DROP TABLE cuzk.jobs; --" as JobState), /not a job state/);
});

/** The SQL text of a TypeScript file: its template literals and string literals. */
function sqlOf(file: string): string[] {
  const source = readFileSync(join(ROOT, "service", file), "utf8");
  return [...source.matchAll(/`([^`]*)`|"((?:[^"\\\n]|\\.)*)"/g)].map((m) => m[1] ?? m[2]).filter((text) => /\b(UPDATE|INSERT INTO)\s+cuzk\.jobs\b/.test(text));
}

test("job states: every statement that writes a job's state takes it, and the states it may write over, from the table", () => {
  const files = readdirSync(join(ROOT, "service")).filter((f) => f.endsWith(".ts"));
  /** A state written into the SQL from job_states.ts: `${sqlState(...)}` or `${<transition>.sqlTo}`. */
  const fromTable = /^\$\{(sqlState\([A-Z_]+\)|[A-Z_]+\.sqlTo)\}$/;
  const writers: Array<{ file: string; sql: string }> = [];
  for (const file of files) {
    for (const sql of sqlOf(file)) {
      const insert = /INSERT INTO\s+cuzk\.jobs\s*\(([^)]*)\)\s*VALUES\s*\(((?:[^()]|\([^()]*\))*)\)/.exec(sql);
      if (insert) {
        const columns = insert[1].split(",").map((c) => c.trim());
        const values = insert[2].split(",").map((v) => v.trim());
        assert.equal(columns.length, values.length, `${file}: ${sql}`);
        const state = values[columns.indexOf("state")];
        if (state === undefined) continue;
        assert.match(state, fromTable, `${file}: the state of an INSERT comes from the table, not ${state}: ${sql}`);
        writers.push({ file, sql });
        continue;
      }
      // A state assignment is `state = ...` right after SET or after a comma of the SET list.
      const assignments = [...sql.matchAll(/(?:\bSET|,)\s*state\s*=\s*([^\s,]+)/g)].map((m) => m[1]);
      if (assignments.length === 0) continue;
      const perRow = assignments.every((value) => value === "o.state");
      for (const value of assignments) {
        assert.ok(fromTable.test(value) || value === "o.state", `${file}: a state written as ${value}, not taken from the table: ${sql}`);
      }
      // The states it may write over: the table's (or, for rows of different changes, each row's own).
      const guard = perRow ? /\bstate\s*=\s*ANY\(o\.from_states\)/ : /\bstate\s+IN\s*\(\$\{[A-Z_]+\.sqlFrom\}\)/;
      assert.match(sql, guard, `${file}: a statement that writes a state must guard the states it writes over with the table's: ${sql}`);
      assert.doesNotMatch(sql, /\bstate\s+IN\s*\(\s*'/, `${file}: the guarded states come from the table, not a literal list: ${sql}`);
      writers.push({ file, sql });
    }
  }
  // submit (INSERT), claim and settle (worker), cancel and the retry limit (PostgreSQL store).
  assert.deepEqual(writers.map((w) => w.file).sort(), ["store_pg.ts", "store_pg.ts", "store_pg.ts", "worker.ts", "worker.ts"], "the statements that write a job's state (a new one must take its states from sqlTransition and be counted here)");
  // The settle's rows: to and from as the table has them for prove and fail.
  const worker = readFileSync(join(ROOT, "service/worker.ts"), "utf8");
  assert.match(worker, /state: TRANSITIONS\[result \? "prove" : "fail"\]\.to/);
  assert.match(worker, /from_states: TRANSITIONS\[result \? "prove" : "fail"\]\.from/);
});

test("job states: the database's CHECK and the API's ?state= schema list the table's states", () => {
  const db = readFileSync(join(ROOT, "service/cluster_db.ts"), "utf8");
  const check = /state text NOT NULL CHECK \(state IN \(([^)]*)\)\)/.exec(db);
  assert.ok(check, "cuzk.jobs has a CHECK on state");
  assert.deepEqual(check[1].split(",").map((s) => s.trim().replace(/'/g, "")), [...JOB_STATES]);
  const schemas = readFileSync(join(ROOT, "service/schemas.ts"), "utf8");
  const listed = /state: Type\.Optional\(Type\.Union\(\[([^\]]*)\]\)\)/.exec(schemas);
  assert.ok(listed, "the listing's state query parameter");
  assert.deepEqual([...listed[1].matchAll(/Type\.Literal\("(\w+)"\)/g)].map((m) => m[1]), [...JOB_STATES]);
});

// ---- the batch executor ----

/** A proof result as the executor passes it through (only its identity matters here). */
const proofOf = (label: string) => ({ proof: { label }, publicSignals: [label], timings: { phases: {} } }) as unknown as ProofResult;
const bad = (what: string) => new CuzkError("UNSATISFIED", `witness ${what} does not satisfy the constraints`);
const cancelled = () => new CuzkError("CANCELLED", "the call was cancelled");

/** A scripted library: each call fails when any of its jobs is in `failing`, or as `failCall` says. */
function scripted(failing: Set<string>, failCall?: (jobs: readonly string[], n: number) => Error | undefined) {
  const calls: Array<{ jobs: string[]; fallback: boolean }> = [];
  const call = (jobs: readonly string[], fallback: boolean) => {
    calls.push({ jobs: [...jobs], fallback });
    const error = failCall?.(jobs, calls.length) ?? (jobs.some((j) => failing.has(j)) ? bad(jobs.find((j) => failing.has(j))!) : undefined);
    return error ? Promise.reject(error) : Promise.resolve(jobs.map(proofOf));
  };
  return { calls, call };
}

test("batch: one call proves the whole batch", async () => {
  const { calls, call } = scripted(new Set());
  const reports: Array<CallReport<string>> = [];
  const outcomes = await proveJobs(["a", "b", "c"], call, (r) => reports.push(r));
  assert.deepEqual(calls, [{ jobs: ["a", "b", "c"], fallback: false }]);
  assert.deepEqual(reports.map((r) => [r.outcome, r.jobs.length, r.decided.length]), [["proved", 3, 3]]);
  assert.deepEqual(outcomes.map((o) => [o.job, (o.result?.publicSignals ?? [])[0], o.size, o.error]), [["a", "a", 3, undefined], ["b", "b", 3, undefined], ["c", "c", 3, undefined]]);
});

test("batch: a failed batch call is followed by one call per job, and only the bad witness fails", async () => {
  const { calls, call } = scripted(new Set(["b"]));
  const reports: Array<CallReport<string>> = [];
  const outcomes = await proveJobs(["a", "b", "c"], call, (r) => reports.push(r));
  assert.deepEqual(calls, [
    { jobs: ["a", "b", "c"], fallback: false },
    { jobs: ["a"], fallback: true },
    { jobs: ["b"], fallback: true },
    { jobs: ["c"], fallback: true },
  ]);
  assert.deepEqual(reports.map((r) => [r.outcome, r.jobs.join(""), r.decided.length, r.fallback]), [
    ["batch_failed", "abc", 0, false],
    ["proved", "a", 1, true],
    ["failed", "b", 1, true],
    ["proved", "c", 1, true],
  ]);
  assert.match(String((reports[0].error as Error).message), /witness b/);
  assert.deepEqual(outcomes.map((o) => [o.job, o.result !== undefined, o.size, (o.error as CuzkError | undefined)?.code]), [
    ["a", true, 1, undefined],
    ["b", false, 1, "UNSATISFIED"],
    ["c", true, 1, undefined],
  ]);
});

test("batch: a job alone is not tried twice; a cancelled call is not retried; nothing to prove makes no call", async () => {
  {
    const { calls, call } = scripted(new Set(["a"]));
    const outcomes = await proveJobs(["a"], call);
    assert.equal(calls.length, 1);
    assert.equal((outcomes[0].error as CuzkError).code, "UNSATISFIED");
  }
  {
    const { calls, call } = scripted(new Set(), () => cancelled());
    const reports: Array<CallReport<string>> = [];
    const outcomes = await proveJobs(["a", "b"], call, (r) => reports.push(r));
    assert.equal(calls.length, 1, "a cancelled batch is not proved one by one");
    assert.deepEqual(reports.map((r) => r.outcome), ["cancelled"]);
    assert.deepEqual(outcomes.map((o) => [o.job, (o.error as CuzkError).code, o.size]), [["a", "CANCELLED", 2], ["b", "CANCELLED", 2]]);
  }
  {
    // After a failed batch, one job's own call is cancelled: the next job is still proved.
    const { calls, call } = scripted(new Set(), (jobs, n) => (n === 1 ? bad("x") : jobs[0] === "a" ? cancelled() : undefined));
    const reports: Array<CallReport<string>> = [];
    const outcomes = await proveJobs(["a", "b"], call, (r) => reports.push(r));
    assert.equal(calls.length, 3);
    assert.deepEqual(reports.map((r) => r.outcome), ["batch_failed", "cancelled", "proved"]);
    assert.deepEqual(outcomes.map((o) => o.result !== undefined), [false, true]);
  }
  {
    const { calls, call } = scripted(new Set());
    assert.deepEqual(await proveJobs([], call), []);
    assert.equal(calls.length, 0);
  }
});

test("batch: a call that returns the wrong number of proofs counts as failed; each call is reported before the next starts", async () => {
  const seen: string[] = [];
  let n = 0;
  const call = (jobs: readonly string[]) => {
    seen.push(`call ${jobs.join("")}`);
    n++;
    return Promise.resolve(n === 1 ? [proofOf(jobs[0])] : jobs.map(proofOf));
  };
  const outcomes = await proveJobs(["a", "b"], call, (r) => seen.push(`report ${r.outcome} ${r.jobs.join("")}`));
  assert.deepEqual(seen, ["call ab", "report batch_failed ab", "call a", "report proved a", "call b", "report proved b"]);
  assert.deepEqual(outcomes.map((o) => o.result?.publicSignals[0]), ["a", "b"]);
});

// ---- the in-memory scheduler on a scripted prover ----

/** A prover whose calls wait until the test settles them. */
class ScriptedProver {
  readonly calls: Array<{ witnesses: string[]; options: ProveOptions; resolve(results: ProofResult[]): void; reject(error: Error): void }> = [];
  #waiters: Array<() => void> = [];

  proveBatch(witnesses: Uint8Array[], options: ProveOptions = {}): Promise<ProofResult[]> {
    return new Promise((resolve, reject) => {
      this.calls.push({ witnesses: witnesses.map((w) => new TextDecoder().decode(w)), options, resolve, reject });
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  /** The n-th call (1-based), once it has been made; fails after 5 s without it. */
  async call(n: number) {
    const deadline = performance.now() + 5000;
    while (this.calls.length < n) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`the scheduler made ${this.calls.length} library calls, not ${n}: ${JSON.stringify(this.calls.map((c) => c.witnesses))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
    return this.calls[n - 1];
  }

  /** Settles call n: a proof for each witness, or the error of the first one in `bad`. */
  async settle(n: number, bad: Set<string> = new Set()) {
    const call = await this.call(n);
    const wrong = call.witnesses.find((w) => bad.has(w));
    if (wrong) call.reject(new CuzkError("UNSATISFIED", `witness ${wrong} does not satisfy the constraints`));
    else call.resolve(call.witnesses.map(proofOf));
  }
}

function scheduler(batchSize = 4) {
  const prover = new ScriptedProver();
  const key = { id: "k", prover, key: {}, info: { nVars: 1 } };
  const keys = {
    get(id: string) {
      if (id !== "k") throw new ServiceError(404, "UNKNOWN_KEY", `no key ${id}`);
      return key;
    },
  } as unknown as KeyRegistry;
  const metrics = new ServiceMetrics();
  const s = new Scheduler({ keys, metrics, queueCapacity: 100, queueBytes: 1 << 20, batchSize, batchWaitMs: 0, resultTtlS: 60 });
  const submit = (witness: string) => s.submit({ keyId: "k", source: "wtns", witness: new TextEncoder().encode(witness), fingerprint: witness, priority: 0 }).job;
  return { s, prover, metrics, submit };
}

/** Waits until `job` is final (or 5 s). */
async function final(s: Scheduler, job: Job): Promise<Job> {
  const deadline = performance.now() + 5000;
  while (!Scheduler.isFinal(job) && performance.now() < deadline) await s.waitForChange(job, 100);
  return job;
}

test("scheduler: a batch goes queued -> running -> succeeded, one call, one proved attempt each", async () => {
  const { s, prover, metrics, submit } = scheduler();
  const a = submit("a"); // starts at once: the device is free
  const b = submit("b");
  const c = submit("c");
  assert.equal(a.state, "running");
  assert.deepEqual([b.state, c.state], ["queued", "queued"]);
  await prover.settle(1);
  await final(s, a);
  await prover.settle(2);
  await Promise.all([final(s, b), final(s, c)]);
  assert.deepEqual([a.state, b.state, c.state], ["succeeded", "succeeded", "succeeded"]);
  assert.deepEqual((await prover.call(2)).witnesses, ["b", "c"]);
  assert.deepEqual(b.attempts.map((t) => [t.outcome, t.size]), [["proved", 2]]);
  assert.equal(b.result?.publicSignals[0], "b");
  assert.equal(b.timings.batchSize, 2);
  const text = await metrics.registry.render();
  assert.match(text, /^cuzk_jobs_total\{key="k",state="succeeded"\} 3$/m);
  await s.close(0);
});

test("scheduler: a bad witness in a batch fails alone after the one-by-one calls", async () => {
  const { s, prover, metrics, submit } = scheduler();
  const first = submit("first");
  const [a, b, c] = ["a", "b", "c"].map(submit);
  await prover.settle(1);
  await final(s, first);
  await prover.settle(2, new Set(["b"])); // the batch a, b, c
  for (let n = 3; n <= 5; n++) await prover.settle(n, new Set(["b"]));
  await Promise.all([a, b, c].map((job) => final(s, job)));
  assert.deepEqual([a.state, b.state, c.state], ["succeeded", "failed", "succeeded"]);
  assert.equal(b.error?.code, "UNSATISFIED");
  assert.deepEqual(b.attempts.map((t) => [t.outcome, t.size]), [["batch_failed", 3], ["failed", 1]]);
  assert.deepEqual(a.attempts.map((t) => [t.outcome, t.size]), [["batch_failed", 3], ["proved", 1]]);
  assert.deepEqual(prover.calls.map((call) => call.witnesses.join(",")), ["first", "a,b,c", "a", "b", "c"]);
  assert.ok(prover.calls[1].options.signal && prover.calls[1].options.onProgress, "the batch call can be cancelled and shows progress");
  assert.ok(!prover.calls[2].options.signal && !prover.calls[2].options.onProgress, "a one-by-one call after it does neither");
  assert.match(await metrics.registry.render(), /^cuzk_batch_fallbacks_total 1$/m);
  await s.close(0);
});

test("scheduler: cancels follow the table (queued, running alone, running shared, final); a late proof is dropped", async () => {
  const { s, prover, submit } = scheduler();
  const alone = submit("alone"); // running alone in its batch
  const queued = submit("queued");
  assert.equal(s.cancel(queued.id).state, "cancelled");
  assert.equal(s.cancel(queued.id).state, "cancelled", "cancelling a cancelled job is the same answer");
  assert.equal(alone.state, "running");
  s.cancel(alone.id);
  assert.equal(alone.state, "cancelled");
  const call = await prover.call(1);
  assert.ok(call.options.signal?.aborted, "the library call's cancel flag is set");
  call.resolve([proofOf("alone")]); // the proof that was already under way
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(alone.state, "cancelled", "a proof that comes for a cancelled job is dropped");
  assert.equal(alone.result, undefined);

  const blocker = submit("blocker"); // x and y queue behind it, then run together
  const [x, y] = ["x", "y"].map(submit);
  await prover.settle(2);
  await final(s, blocker);
  await prover.call(3);
  assert.deepEqual([x.state, y.state], ["running", "running"]);
  assert.throws(() => s.cancel(x.id), (e: unknown) => e instanceof ServiceError && e.code === "JOB_RUNNING");
  await prover.settle(3);
  await final(s, x);
  assert.throws(() => s.cancel(x.id), (e: unknown) => e instanceof ServiceError && e.code === "JOB_FINISHED");
  assert.equal(x.state, "succeeded");
  await s.close(0);
});

test("scheduler: a shutdown cancels what is still queued", async () => {
  const { s, prover, submit } = scheduler(1);
  const [a, b] = ["a", "b"].map(submit);
  const closing = s.close(0);
  await prover.settle(1);
  const report = await closing;
  assert.deepEqual([a.state, b.state], ["succeeded", "cancelled"]);
  assert.deepEqual(report, { succeeded: [a.id], failed: [], cancelled: [b.id] });
});
