// A local npm registry for tools/package_test.sh: serves the given package tarballs (cuzk and its
// platform package, not published anywhere) under their names, and passes every other package
// through from the public registry, so that a client with no node_modules (Deno's global npm
// cache) installs cuzk as it would from npmjs.org. Prints its URL on stdout, then serves until
// killed.
//
//   node tools/local_registry.mjs <package.tgz>...
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { basename } from "node:path";
import process from "node:process";

const UPSTREAM = process.env.NPM_UPSTREAM ?? "https://registry.npmjs.org";

// name -> { manifest, bytes, file }
const local = new Map();
for (const path of process.argv.slice(2)) {
  const manifest = JSON.parse(execFileSync("tar", ["-xzOf", path, "package/package.json"], { encoding: "utf8" }));
  local.set(manifest.name, { manifest, bytes: readFileSync(path), file: basename(path) });
}

const server = createServer(async (req, res) => {
  try {
    const url = new URL(req.url ?? "/", "http://localhost");
    const path = decodeURIComponent(url.pathname).replace(/^\//, "");
    const tarball = /^-\/(.+)$/.exec(path);
    if (tarball) {
      const entry = [...local.values()].find((e) => e.file === tarball[1]);
      if (!entry) return void res.writeHead(404).end();
      return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(entry.bytes);
    }
    const entry = local.get(path);
    if (entry) {
      const { manifest, bytes, file } = entry;
      const version = {
        ...manifest,
        dist: {
          tarball: `http://${req.headers.host}/-/${file}`,
          shasum: createHash("sha1").update(bytes).digest("hex"),
          integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
        },
      };
      const packument = { name: manifest.name, "dist-tags": { latest: manifest.version }, versions: { [manifest.version]: version } };
      return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
    }
    const upstream = await fetch(`${UPSTREAM}/${path.replace("/", "%2f")}`, { headers: { accept: req.headers.accept ?? "application/json" } });
    res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
    res.end(Buffer.from(await upstream.arrayBuffer()));
  } catch (error) {
    res.writeHead(502).end(String(error));
  }
});
server.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${server.address().port}/`);
});
