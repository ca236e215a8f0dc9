/**
 * @module
 * A real PostgreSQL server for a test: `initdb` into a fresh temporary directory, `postgres` with
 * no TCP listener (`listen_addresses=''`) and its socket in that directory, so nothing else on the
 * machine can reach it or collide with it; `stop()` ends the server and removes the directory.
 * The binaries are found on PATH or under /usr/lib/postgresql/<version>/bin (Debian's packages).
 * PostgreSQL refuses to run as root, so as root (CI) the server runs as the `postgres` user (the
 * Debian package's) or `nobody`, through `setpriv`. A test can take the server away and bring it
 * back on the same data (`halt` as `pg_ctl stop -m fast|immediate` does, then `start`).
 */
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import pg from "pg";

/** A running server. */
export interface Postgres {
  /** Connection URL over the private socket (`postgres://cuzk@/postgres?host=<dir>&port=<port>`, database `postgres`). */
  url: string;
  /** The temporary directory: data in data/, the socket beside it. */
  dir: string;
  /** A new empty database on the server; its URL. */
  createDatabase(name: string): Promise<string>;
  /**
   * Stops the server with `pg_ctl stop -m <mode>` and waits until it is gone: `fast` rolls back
   * open transactions and tells each client 57P01 before closing its connection; `immediate`
   * kills the server processes at once (crash recovery at the next start). The socket goes with it.
   */
  halt(mode: "fast" | "immediate"): Promise<void>;
  /** Starts a halted server again on the same data directory and socket; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server (fast shutdown) and removes the directory. */
  stop(): Promise<void>;
}

/** The directory holding initdb and postgres: PATH first, then Debian's newest version. */
export function postgresBinDir(): string {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(join(dir, "initdb")) && existsSync(join(dir, "postgres"))) return dir;
  }
  const debian = "/usr/lib/postgresql";
  const versions = existsSync(debian) ? readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const dir = join(debian, version, "bin");
    if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "postgres"))) return dir;
  }
  throw new Error("no PostgreSQL server found (initdb and postgres on PATH or under /usr/lib/postgresql/*/bin): apt-get install postgresql");
}

/** The account the server runs as when we are root, with its uid and gid. */
function serverAccount(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ["postgres", "nobody"]) {
    const id = spawnSync("id", ["-u", name], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", name], { encoding: "utf8" });
    if (id.status === 0 && gid.status === 0) return { name, uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
  }
  throw new Error("running as root and neither a postgres nor a nobody account exists to run PostgreSQL as");
}

/**
 * Starts a private server; `port` only names the socket file (there is no TCP listener).
 * `settings` are server settings (`-c name=value`) over the defaults below.
 */
export async function startPostgres(options: { port?: number; settings?: Record<string, string> } = {}): Promise<Postgres> {
  const bin = postgresBinDir();
  const port = options.port ?? 5432;
  const dir = mkdtempSync("/tmp/cuzk-pg-"); // short: a socket path is limited to 107 bytes
  const data = join(dir, "data");
  const account = serverAccount();
  if (account) chownSync(dir, account.uid, account.gid);
  // setpriv execs the command itself (no process in between), so signals reach the server.
  const asServer = (command: string, args: string[]) =>
    account ? (["setpriv", [`--reuid=${account.uid}`, `--regid=${account.gid}`, "--clear-groups", "--", command, ...args]] as const) : ([command, args] as const);

  const [initCommand, initArgs] = asServer(join(bin, "initdb"), ["-D", data, "-U", "cuzk", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"]);
  const init = spawnSync(initCommand, initArgs, { encoding: "utf8" });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status}): ${init.stderr || init.stdout}`);
  }
  // fsync off: a test's durability is about processes killed, not the machine losing power. (A
  // test that kills the server itself, `halt("immediate")`, needs synchronous_commit on: off, a
  // commit is acknowledged before its WAL leaves the server's memory, and dies with it.)
  const [command, args] = asServer(join(bin, "postgres"), [
    "-D", data, "-k", dir, "-p", String(port), "-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
    "-c", "full_page_writes=off", "-c", "max_connections=200", "-c", "shared_buffers=64MB",
    ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
  ]);
  const socket = join(dir, `.s.PGSQL.${port}`);

  /** The postgres process now running, its exit, and the tail of its log. */
  let current: { server: ChildProcess; exited: Promise<void>; log: () => string } | undefined;
  const launch = async () => {
    const server: ChildProcess = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    server.stderr!.on("data", (chunk: Uint8Array) => (log = (log + new TextDecoder().decode(chunk)).slice(-4000)));
    const exited = new Promise<void>((resolve) => server.on("close", () => resolve()));
    for (let i = 0; !existsSync(socket) || !/ready to accept connections/.test(log); i++) {
      if (server.exitCode !== null || i > 600) {
        server.kill("SIGKILL");
        throw new Error(`postgres did not start: ${log}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    current = { server, exited, log: () => log };
  };
  try {
    await launch();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  let stopped = false;
  const urlOf = (database: string) => `postgres://cuzk@/${database}?host=${encodeURIComponent(dir)}&port=${port}`;
  return {
    url: urlOf("postgres"),
    dir,
    async createDatabase(name: string) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name ${JSON.stringify(name)}: lowercase letters, digits and _`);
      const client = new pg.Client({ connectionString: urlOf("postgres") });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return urlOf(name);
    },
    async halt(mode) {
      if (!current) throw new Error("the server is not running");
      const { exited } = current;
      const [ctl, ctlArgs] = asServer(join(bin, "pg_ctl"), ["stop", "-D", data, "-m", mode, "-w", "-t", "30"]);
      const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(ctl, ctlArgs, { stdio: ["ignore", "pipe", "pipe"] });
        let output = "";
        child.stdout!.on("data", (chunk: Uint8Array) => (output += new TextDecoder().decode(chunk)));
        child.stderr!.on("data", (chunk: Uint8Array) => (output += new TextDecoder().decode(chunk)));
        child.on("close", (code) => resolve({ code, output }));
      });
      if (result.code !== 0) throw new Error(`pg_ctl stop -m ${mode} failed (${result.code}): ${result.output}`);
      await exited;
      current = undefined;
    },
    async start() {
      if (current) throw new Error("the server is running");
      await launch();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const server = current?.server;
      if (server && server.exitCode === null) {
        server.kill("SIGINT"); // fast shutdown: disconnects clients
        await Promise.race([current!.exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (server.exitCode === null) server.kill("SIGKILL");
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
