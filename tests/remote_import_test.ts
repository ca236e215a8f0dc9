/**
 * @module
 * Promise: Deno imports cuzk from a URL that is not a file (as from JSR or an https server) and
 * proves with the library given by $CUZK_LIB: nothing in the module graph turns its own URL into
 * a path at import. Served here by a local HTTP server; Deno only.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, normalize } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Library } from "../mod.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

test("an import of mod.ts over http proves with $CUZK_LIB", { skip: "Deno" in globalThis ? false : "a Deno-only promise" }, async () => {
  const server = createServer((req, res) => {
    const path = normalize(join(ROOT, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)));
    if (!path.startsWith(ROOT) || !/\.(ts|js|json)$/.test(path)) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = readFileSync(path);
      res.writeHead(200, { "content-type": path.endsWith(".ts") ? "application/typescript" : "application/javascript" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const dir = mkdtempSync(join(tmpdir(), "cuzk-remote-"));
  try {
    const fixture = join(ROOT, "tests", "fixtures", "bn254", "mulchain_4");
    const script = join(dir, "prove.ts");
    writeFileSync(script, `
import { groth16, Prover } from "http://127.0.0.1:${port}/mod.ts";
const prover = await Prover.open({ zkey: ${JSON.stringify(join(fixture, "circuit.zkey"))}, backend: "cpu" });
const { proof, publicSignals } = await groth16.prove(prover, ${JSON.stringify(join(fixture, "witness.wtns"))});
const vkey = JSON.parse(Deno.readTextFileSync(${JSON.stringify(join(fixture, "verification_key.json"))}));
console.log(await groth16.verify(vkey, publicSignals, proof) ? "verified" : "NOT VERIFIED");
prover.close();
`);
    const env = { ...process.env, CUZK_LIB: Library.default().path, DENO_DIR: join(dir, "deno-dir") };
    const child = spawn(process.execPath, ["run", "--allow-import", "--allow-net=127.0.0.1", "--allow-ffi", "--allow-read", "--allow-env", "--allow-sys", script], { env });
    let out = "", err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    assert.equal(code, 0, err);
    assert.match(out, /^verified$/m);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
