/**
 * @module
 * `zkey export solidityverifier`: the Groth16 verifier contract of a key, the text snarkjs writes.
 *
 * Why the template is not here: snarkjs's template (templates/verifier_groth16.sol.ejs) is
 * GPL-3.0 and cuzk is Apache-2.0, so cuzk ships no copy of it. It is read at run time from the
 * snarkjs the user has installed and filled by the `ejs` that snarkjs itself loads, with the
 * verification key snarkjs would give it (cuzk's is the same, byte for byte): the output is what
 * that snarkjs writes, and the GPL text stays in the GPL package. Without snarkjs the command
 * says how to install it.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, parse } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

import { CuzkError, zKey } from "../mod.ts";
import { checkOutputs, EXIT, writeOutputs } from "./io.ts";

/** The command that installs snarkjs, named when it cannot be found. */
export const INSTALL_SNARKJS = "npm install snarkjs";

/** An installed snarkjs: its folder and version. */
export interface InstalledSnarkjs {
  dir: string;
  version: string;
}

/** The folder of the package "snarkjs" as `require` resolves it from `base` (a file path or URL), or undefined. */
function snarkjsFrom(base: string): InstalledSnarkjs | undefined {
  let entry: string;
  try {
    entry = createRequire(base).resolve("snarkjs");
  } catch {
    return undefined;
  }
  // Its entry point lies inside the package: the nearest package.json named snarkjs is the package's.
  for (let dir = dirname(entry); dir !== parse(dir).root; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest)) continue;
    try {
      const { name, version } = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (name === "snarkjs") return { dir, version: String(version) };
    } catch {
      // not a readable manifest: keep looking upwards
    }
  }
  return undefined;
}

/**
 * The snarkjs to take the template from, looked up from each of `from` in turn (a file path or
 * URL; by default the current folder's project, the user's, then cuzk's own folder: a checkout's
 * devDependency, or a project that has both).
 */
export function findSnarkjs(from: string[] = [join(process.cwd(), "package.json"), import.meta.url]): InstalledSnarkjs {
  for (const base of from) {
    const found = snarkjsFrom(base);
    if (found) return found;
  }
  throw new CuzkError(
    "UNSUPPORTED",
    `zkey export solidityverifier fills snarkjs's own template (GPL-3.0, so cuzk does not ship a copy), and snarkjs is not installed ` +
      `where it was looked for (from ${from.map((base) => dirname(base.startsWith("file:") ? fileURLToPath(base) : base)).join(" and ")}): install it with ` +
      `\`${INSTALL_SNARKJS}\` (bun add snarkjs), then run this again`,
  );
}

/** The verifier contract of the Groth16 key `zkey`, as snarkjs's `zkey export solidityverifier` writes it. */
export async function solidityVerifier(zkey: string): Promise<string> {
  const vk = await zKey.exportVerificationKey(zkey);
  // snarkjs fills its one Groth16 template, which is BN254's (its constants r and q, the EVM's
  // BN254 precompiles 0x06-0x08), whatever the curve: for BLS12-381 it writes a contract whose
  // 381-bit constants do not fit its uint256s. There is no BLS12-381 template to fill.
  if (vk.curve !== "bn128") {
    throw new CuzkError(
      "UNSUPPORTED",
      `${zkey} is a key on ${vk.curve}, and snarkjs's Solidity verifier is for bn128 (BN254) only: its template uses the EVM's BN254 ` +
        `precompiles and uint256 values, which a ${vk.curve} point does not fit (snarkjs writes such a contract all the same; it does not compile)`,
    );
  }
  const snarkjs = findSnarkjs();
  const templatePath = join(snarkjs.dir, "templates", "verifier_groth16.sol.ejs");
  let template: string;
  try {
    template = readFileSync(templatePath, "utf8");
  } catch (cause) {
    throw new CuzkError("IO", `cannot read snarkjs ${snarkjs.version}'s Groth16 verifier template ${templatePath}: ${(cause as Error).message} (reinstall it: ${INSTALL_SNARKJS})`, { cause });
  }
  let ejs: { render(template: string, data: object): string };
  try {
    // The ejs snarkjs's own CLI loads (its dependency, resolved from its folder).
    ejs = createRequire(join(snarkjs.dir, "package.json"))("ejs");
  } catch (cause) {
    throw new CuzkError("UNSUPPORTED", `cannot load ejs, the template engine of snarkjs ${snarkjs.version} in ${snarkjs.dir}: ${(cause as Error).message} (reinstall it: ${INSTALL_SNARKJS})`, { cause });
  }
  try {
    return ejs.render(template, vk);
  } catch (cause) {
    throw new CuzkError("FORMAT", `snarkjs ${snarkjs.version}'s template ${templatePath} cannot be filled with the verification key: ${(cause as Error).message}`, { cause });
  }
}

/** `zkey export solidityverifier [circuit_final.zkey] [verifier.sol]`. */
export async function exportSolidityVerifier(zkey: string, out: string): Promise<number> {
  checkOutputs([{ path: out, what: "Solidity verifier" }], [{ path: zkey, what: "key" }]);
  const code = await solidityVerifier(zkey);
  writeOutputs([{ path: out, what: "Solidity verifier", data: code }]);
  return EXIT.ok;
}
