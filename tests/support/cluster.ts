/**
 * @module
 * The service's processes for the database-mode tests (cluster_test.ts, cluster_cancel_test.ts,
 * cluster_chaos_test.ts):
 * `bun service/main.ts --role api|worker ...` children whose JSON event lines can be awaited and
 * acted on as they are printed, and an HTTP client of the API that retries while it restarts.
 * Driven with fetch and node:child_process, so the tests run the same under Deno, Bun and Node.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import process from "node:process";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { library } from "./native.ts";
import { startPostgres } from "./postgres.ts";
import type { Postgres } from "./postgres.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const FINAL = new Set(["succeeded", "failed", "cancelled"]);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type Event = Record<string, unknown> & { event: string };

/** A service process (`bun service/main.ts ...`) and the JSON event lines it prints; `stopAll` ends those still running. */
export class Proc {
  readonly events: Event[] = [];
  readonly #child: ChildProcess;
  readonly #closed: Promise<void>;
  readonly #hooks = new Set<(event: Event) => void>();
  #gone = false;
  /** How the process ended (exit code or signal); undefined while it runs. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  stderr = "";
  readonly name: string;

  constructor(name: string, args: string[]) {
    this.name = name;
    this.#child = spawn(join(ROOT, "node_modules/.bin/bun"), ["service/main.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, CUZK_LIB: process.env.CUZK_LIB ?? library().path },
      stdio: ["ignore", "pipe", "pipe"],
    });
    live.add(this);
    this.#closed = new Promise((resolve) =>
      this.#child.on("close", (code, signal) => {
        this.exit = { code, signal };
        resolve();
      })
    );
    this.#closed.then(() => (this.#gone = true));
    let buffered = "";
    this.#child.stdout!.on("data", (chunk: Uint8Array) => {
      buffered += new TextDecoder().decode(chunk);
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        const event = JSON.parse(line) as Event;
        this.events.push(event);
        for (const hook of [...this.#hooks]) hook(event); // synchronously: a kill lands within the batch
      }
    });
    this.#child.stderr!.on("data", (chunk: Uint8Array) => (this.stderr += new TextDecoder().decode(chunk)));
  }

  /** Resolves with the next event that `match` accepts; `act` runs on it at once (in the stdout handler). */
  when(match: (event: Event) => boolean, act: (event: Event) => void = () => {}, timeoutMs = 60_000): Promise<Event> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#hooks.delete(hook);
        reject(new Error(`${this.name}: no matching event in ${timeoutMs} ms; last events: ${JSON.stringify(this.events.slice(-4))}; stderr: ${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      const hook = (event: Event) => {
        if (!match(event)) return;
        this.#hooks.delete(hook);
        clearTimeout(timer);
        act(event);
        resolve(event);
      };
      this.#hooks.add(hook);
    });
  }

  /**
   * Sends `signal` with process.kill: Deno's ChildProcess.kill marks the child as killed after a
   * SIGSTOP and then sends nothing more, so a later SIGCONT or SIGKILL would be lost.
   */
  signal(signal: NodeJS.Signals): void {
    if (this.#gone) return;
    try {
      process.kill(this.#child.pid!, signal);
    } catch {
      // already gone
    }
  }

  /** Sends `signal` and waits until the process is gone. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    this.signal(signal);
    await this.#closed;
    live.delete(this);
  }
}

const live = new Set<Proc>();

/**
 * A private PostgreSQL for the calling file's tests: started before them; after them every service
 * process still running is killed and the server stopped and removed. Returns the running server.
 */
export function clusterPostgres(): () => Postgres {
  let postgres: Postgres | undefined;
  before(async () => {
    postgres = await startPostgres();
  });
  after(async () => {
    await stopAll();
    await postgres?.stop();
  });
  return () => postgres!;
}

/** Stops every service process still running (SIGKILL unless told) and waits until they are gone. */
export async function stopAll(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  for (const proc of [...live]) await proc.stop(signal);
}

/** A free loopback port (the API is restarted on the same one). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Reply {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** An HTTP client of the API that retries while the API is down (connection refused, reset). */
export class Client {
  readonly url: string;
  constructor(url: string) {
    this.url = url;
  }

  async once(method: string, path: string, body?: Uint8Array | string, headers: Record<string, string> = {}): Promise<Reply> {
    const response = await fetch(this.url + path, { method, body: body as BodyInit | undefined, headers });
    const json = /json/.test(response.headers.get("content-type") ?? "");
    return { status: response.status, headers: response.headers, body: json ? await response.json() : await response.text() };
  }

  /** Retries network errors (the API restarting) and 503s for up to a minute. */
  async request(method: string, path: string, body?: Uint8Array | string, headers: Record<string, string> = {}): Promise<Reply> {
    const deadline = performance.now() + 60_000;
    for (;;) {
      try {
        const reply = await this.once(method, path, body, headers);
        if (reply.status !== 503 || performance.now() > deadline) return reply;
      } catch (error) {
        if (performance.now() > deadline) throw error;
      }
      await sleep(100);
    }
  }

  async waitFinal(id: string): Promise<Reply["body"]> {
    for (;;) {
      const reply = await this.request("GET", `/v1/jobs/${id}/wait?timeout_s=5`);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      if (FINAL.has(reply.body.state)) return reply.body;
    }
  }

  async metrics(): Promise<string> {
    return (await this.request("GET", "/metrics")).body as string;
  }
}

/** The API role on `port` (`args`: its keys and options), ready. */
export async function startApi(url: string, port: number, args: string[]): Promise<Proc> {
  const api = new Proc("api", ["--role", "api", "--database-url", url, "--host", "127.0.0.1", "--port", String(port), "--lease-s", "10", "--backend", "cpu", "--cpu-threads", "1", ...args]);
  await api.when((e) => e.event === "listening");
  const client = new Client(`http://127.0.0.1:${port}`);
  while ((await client.request("GET", "/readyz")).status !== 200) await sleep(50);
  return api;
}

/** A worker role (`args`: its keys and options); resolves once it takes jobs. */
export async function startWorker(url: string, id: string, args: string[]): Promise<Proc> {
  const worker = new Proc(id, ["--role", "worker", "--database-url", url, "--worker-id", id, "--backend", "cpu", "--cpu-threads", "1", "--lease-s", "10", ...args]);
  await worker.when((e) => e.event === "worker_started");
  return worker;
}

