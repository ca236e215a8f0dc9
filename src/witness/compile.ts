/**
 * @module
 * `cuzk witness compile`: a circuit's native witness library from its circom source (circom --c
 * is run here) or from a folder `circom --c` wrote. circom's generated circuit.cpp and .dat are
 * kept; its runtime (main.cpp, calcwit, fr.asm/fr.cpp, gmp, nlohmann/json) is replaced by
 * native/witness/ (the field code is cuzk's native/src/field). circuit.cpp is compiled after the
 * mechanical rewrites of ./rewrite.ts (a failed assert is an error status with circom's message;
 * constant tables copied from an image). Built with the system's C++ compiler
 * ($CXX, else c++); the result is cached by the hash of everything that went in. The same
 * objects are also linked with native/witness/command.cpp into `<name>.witness`, the circuit's
 * witness as an executable (input.json -> .wtns, no JavaScript runtime).
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { CuzkError } from "../errors.ts";
import { rewriteCircuitCpp } from "./rewrite.ts";

/** Where native/ lies (the package root); a compile needs the package's files on disk. */
function nativeDir(): string {
  if (!import.meta.url.startsWith("file:")) {
    throw new CuzkError("UNSUPPORTED", `compiling a witness library needs cuzk's native/ sources on disk; ${import.meta.url} is not a file (install the npm package)`);
  }
  return fileURLToPath(new URL("../../native/", import.meta.url));
}
const WITNESS_SOURCES = ["fr.cpp", "calcwit.cpp", "entry.cpp"];
/** The executable's own part (its main and the JSON inputs), linked with the library's objects. */
const COMMAND_SOURCES = ["command.cpp", "input_json.cpp"];
/**
 * Every file under native/ that a build reads (the cache key hashes them all); the npm package
 * ships exactly these (tools/build_packages.sh), so that a compile works from node_modules.
 */
export const WITNESS_BUILD_FILES = [
  "witness/fr.cpp", "witness/calcwit.cpp", "witness/entry.cpp", "witness/circuit_data.S", "witness/cuzk_witness.h",
  "witness/command.cpp", "witness/input_json.cpp", "witness/input_json.hpp",
  "witness/circom/fr.hpp", "witness/circom/circom.hpp", "witness/circom/calcwit.hpp",
  "src/field/fp.hpp", "src/field/params.hpp", "src/field/mont_asm.hpp", "include/cuzk.h",
];
// x86-64-v3 plus ADX, as libcuzk.so: the field's mulx/adcx/adox products, on any server of the
// last decade (a library built here runs on the GPU hosts too).
const ARCH_FLAGS = process.arch === "x64" ? ["-march=x86-64-v3", "-madx"] : [];
const COMMON_FLAGS = ["-std=c++17", "-fPIC", "-fvisibility=hidden", ...ARCH_FLAGS];
// libstdc++ stays dynamic: linked in statically it needs glibc 2.36 (arc4random) and 2.35 (the
// unwinder's _dl_find_object) here; dynamic, it needs glibc 2.14 and
// GLIBCXX_3.4.29 (GCC 11's libstdc++) on the host.
const LINK_FLAGS = ["-lpthread", "-Wl,--no-undefined", "-Wl,-z,noexecstack"];

/** circom's names of the two primes cuzk proves over, with the first limb of each r. */
const PRIMES = {
  bn128: { curve: "bn254", define: "CUZK_WITNESS_CURVE_BN254", limb0: "0x43e1f593f0000001" },
  bls12381: { curve: "bls12_381", define: "CUZK_WITNESS_CURVE_BLS12_381", limb0: "0xffffffff00000001" },
} as const;
export type CircomPrime = keyof typeof PRIMES;

/** Options of compileWitnessLibrary. */
export interface WitnessCompileOptions {
  /** Library folders for circom's includes (-l), for a .circom source. */
  include?: string[];
  /** circom's --prime for a .circom source: bn128 (default) or bls12381. */
  prime?: CircomPrime;
  /** circom's simplification for a .circom source: must match the .r1cs/.zkey's (default --O1, circom's). */
  optimize?: "--O0" | "--O1" | "--O2";
  /** Folder of the library (default: the source's folder); the files are <name>.witness.so and the executable <name>.witness. */
  outDir?: string;
  /** Folder of compiled libraries and runtime objects (default $CUZK_WITNESS_CACHE, else ~/.cache/cuzk/witness). */
  cacheDir?: string;
  /** Optimisation of circuit.cpp (default -O1: large generated files compile several times faster, run about as fast). */
  circuitOptimization?: "-O0" | "-O1" | "-O2" | "-O3";
  /** Progress lines (what is being done). */
  onStep?: (line: string) => void;
}

/** What compileWitnessLibrary did. */
export interface WitnessCompileResult {
  /** The library: pass it wherever a circuit.wasm is taken, or put it beside the .wasm. */
  library: string;
  /**
   * The same circuit as an executable, `<name>.witness <input.json | -> <output.wtns>` (circom's
   * C++ flow, no JavaScript runtime): the library's witness, written as a .wtns file.
   */
  executable: string;
  curve: "bn254" | "bls12_381";
  /** True when an identical build was in the cache (no compiler ran). */
  cached: boolean;
  /** Milliseconds in circom (0 for a folder source) and in the C++ compiler and linker. */
  circomMs: number;
  compileMs: number;
}

/** The default cache folder. */
export function defaultWitnessCache(): string {
  if (process.env.CUZK_WITNESS_CACHE) return process.env.CUZK_WITNESS_CACHE;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(base, "cuzk", "witness");
}

function compilerCommand(): string {
  return process.env.CXX || "c++";
}

/** Where circom 2 is looked for: the process's environment and the folder the user works in. */
export interface CircomSearch {
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/**
 * A command to run circom 2, found the way the user's project would find it: `$CIRCOM` (a path,
 * relative to the working folder, or a command name), `circom` then `circom2` on PATH, the npm
 * package circom2 in the node_modules of the working folder or any folder above it, then in
 * cuzk's own dependencies. circom2 is a WASI build run by Node (a node on PATH, else this runtime
 * when it is Node or Bun).
 */
export function findCircom(search: CircomSearch = {}): string[] {
  const env = search.env ?? process.env;
  const cwd = search.cwd ?? process.cwd();
  const runs = (command: string) => spawnSync(command, ["--version"], { stdio: "ignore", env: env as NodeJS.ProcessEnv }).status === 0;
  const circom = env.CIRCOM;
  if (circom) {
    // circom runs from the filesystem root (see compileWitness): a relative path is the user's.
    if (!circom.includes("/")) return [circom];
    const path = resolve(cwd, circom);
    if (!existsSync(path)) throw new CuzkError("IO", `$CIRCOM is ${circom}, and ${path} does not exist`);
    return [path];
  }
  for (const name of ["circom", "circom2"]) if (runs(name)) return [name];
  const candidates: string[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    candidates.push(join(dir, "node_modules", "circom2", "cli.js"));
    if (dirname(dir) === dir) break;
  }
  if (import.meta.url.startsWith("file:")) candidates.push(fileURLToPath(new URL("../../node_modules/circom2/cli.js", import.meta.url)));
  const cli = candidates.find((path) => existsSync(path));
  if (!cli) {
    throw new CuzkError("UNSUPPORTED", "compiling a .circom file needs circom 2, found neither as $CIRCOM, nor as circom or " +
      `circom2 on PATH, nor as the npm package circom2 in a node_modules folder from ${cwd} up: install it in your project ` +
      "(npm install --save-dev circom2), or install circom (https://docs.circom.io), or set $CIRCOM to its path");
  }
  const node = runs("node") ? "node" : process.execPath;
  return [node, cli];
}

function run(command: string[], cwd: string, what: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command[0], command.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", (cause) => reject(new CuzkError("UNSUPPORTED", `${what}: cannot run ${command[0]}: ${cause.message}`, { cause })));
    child.on("close", (code) => {
      if (code === 0) resolvePromise();
      else reject(new CuzkError("INVALID_ARGUMENT", `${what} failed (exit ${code}): ${command.join(" ")}\n${output.trim().slice(-4000)}`));
    });
  });
}

/** Runs `jobs` with at most `width` at a time. */
async function parallel(jobs: Array<() => Promise<void>>, width: number): Promise<void> {
  const queue = [...jobs];
  await Promise.all(Array.from({ length: Math.min(width, queue.length) }, async () => {
    for (let job = queue.shift(); job; job = queue.shift()) await job();
  }));
}

/** The circuit's .cpp and .dat in a folder circom --c wrote. */
function findGenerated(dir: string): { cpp: string; dat: string; name: string } {
  const runtime = new Set(["main.cpp", "calcwit.cpp", "fr.cpp"]);
  const cpps = readdirSync(dir).filter((f) => f.endsWith(".cpp") && !runtime.has(f));
  for (const cpp of cpps) {
    const name = cpp.slice(0, -4);
    if (existsSync(join(dir, `${name}.dat`))) return { cpp: join(dir, cpp), dat: join(dir, `${name}.dat`), name };
  }
  throw new CuzkError("INVALID_ARGUMENT", `${dir} holds no <name>.cpp with its <name>.dat (what circom --c writes)`);
}

/** Which of cuzk's primes circom's runtime files in `dir` were generated for. */
function primeOfGenerated(dir: string): CircomPrime {
  const text = ["fr.cpp", "fr.asm"].filter((f) => existsSync(join(dir, f))).map((f) => readFileSync(join(dir, f), "utf8")).join("\n");
  // fr.cpp (--no_asm) has `Fr_q = {0, Fr_LONG, { 0x.., ..} }`; fr.asm has `q dq 0x..,..`.
  const match = /Fr_q\s*=\s*\{[^{]*\{\s*(0x[0-9a-f]+)/i.exec(text) ?? /^q\s+dq\s+(0x[0-9a-f]+)/im.exec(text);
  if (!match) throw new CuzkError("INVALID_ARGUMENT", `cannot tell the prime of ${dir}: no fr.cpp/fr.asm from circom --c`);
  for (const [name, prime] of Object.entries(PRIMES)) if (BigInt(prime.limb0) === BigInt(match[1])) return name as CircomPrime;
  throw new CuzkError("CURVE_MISMATCH", `${dir} was generated for a prime other than BN254's or BLS12-381's r (circom --prime bn128 or bls12381)`);
}

function sha256(parts: Array<string | Uint8Array>): string {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part).update("\0");
  return hash.digest("hex").slice(0, 32);
}

function compilerVersion(cxx: string): string {
  const r = spawnSync(cxx, ["--version"], { encoding: "utf8" });
  if (r.status !== 0) {
    throw new CuzkError("UNSUPPORTED", `the native witness library needs a C++17 compiler: ${cxx} not found (install g++, e.g. apt-get install g++, or set $CXX)`);
  }
  return r.stdout;
}

/**
 * The runtime objects for one prime, compiled once per cache (they do not depend on the circuit):
 * the library's (WITNESS_SOURCES), then the executable's own (COMMAND_SOURCES).
 */
async function runtimeObjects(cache: string, prime: CircomPrime, cxx: string, sourcesHash: string): Promise<string[]> {
  const dir = join(cache, `runtime-${prime}-${sourcesHash}`);
  const sources = [...WITNESS_SOURCES, ...COMMAND_SOURCES];
  const objects = sources.map((f) => join(dir, f.replace(/\.cpp$/, ".o")));
  if (objects.every((o) => existsSync(o))) return objects;
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, "runtime-tmp-"));
  try {
    const NATIVE = nativeDir();
    const flags = [...COMMON_FLAGS, "-O3", `-D${PRIMES[prime].define}`, `-I${NATIVE}witness`, `-I${NATIVE}src`, `-I${NATIVE}include`];
    await parallel(sources.map((f) => () => run([cxx, ...flags, "-c", `${NATIVE}witness/${f}`, "-o", join(work, f.replace(/\.cpp$/, ".o"))], work, `compiling ${f}`)), availableParallelism());
    try {
      renameSync(work, dir);
    } catch {
      // another process made it first: theirs is the same
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return objects;
}

/**
 * circuit.cpp's object, compiled once per cache: it does not depend on the prime (the constants
 * are in the .dat, the field code in the runtime objects), so a circuit's BN254 and BLS12-381
 * libraries share it.
 */
async function circuitObjectFor(
  cache: string,
  circuitCpp: string,
  optimization: string,
  cxx: string,
  sourcesHash: string,
  from: string,
  step: (line: string) => void,
): Promise<string> {
  const object = join(cache, `circuit-${sha256([sourcesHash, optimization, circuitCpp])}.o`);
  if (existsSync(object)) return object;
  const work = mkdtempSync(join(cache, "circuit-tmp-"));
  try {
    writeFileSync(join(work, "circuit.cpp"), circuitCpp);
    step(`${cxx} ${optimization} ${from} (${(circuitCpp.length / 1e6).toFixed(1)} MB)`);
    // No prime defined: circom/fr.hpp and circom.hpp are the same for both.
    const flags = [...COMMON_FLAGS, optimization, "-w", `-I${nativeDir()}witness/circom`];
    await run([cxx, ...flags, "-c", "circuit.cpp", "-o", "circuit.o"], work, `compiling ${basename(from)}`);
    renameSync(join(work, "circuit.o"), object);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return object;
}

/**
 * Builds (or finds in the cache) the native witness library of `source`: a .circom file, or a
 * folder circom --c wrote. INVALID_ARGUMENT when circom or the compiler fails (their output in
 * the message), UNSUPPORTED when no compiler or circom is installed, CURVE_MISMATCH for a prime
 * other than bn128/bls12381.
 */
export async function compileWitnessLibrary(source: string, options: WitnessCompileOptions = {}): Promise<WitnessCompileResult> {
  const step = options.onStep ?? (() => {});
  const cache = resolve(options.cacheDir ?? defaultWitnessCache());
  const cxx = compilerCommand();
  const compiler = compilerVersion(cxx);
  let generatedDir: string;
  let circomMs = 0;
  let name: string;
  let scratch: string | undefined;
  const sourcePath = resolve(source);
  if (!existsSync(sourcePath)) throw new CuzkError("IO", `${source} does not exist`);
  if (statSync(sourcePath).isDirectory()) {
    generatedDir = sourcePath;
    name = basename(sourcePath).replace(/_cpp$/, "");
  } else {
    name = basename(sourcePath).replace(/\.circom$/, "");
    mkdirSync(cache, { recursive: true });
    scratch = mkdtempSync(join(cache, "circom-"));
    const prime = options.prime ?? "bn128";
    if (!(prime in PRIMES)) throw new CuzkError("INVALID_ARGUMENT", `--prime ${prime}: cuzk proves over bn128 and bls12381`);
    const args = [sourcePath, "--c", "--prime", prime, options.optimize ?? "--O1", "-o", scratch];
    for (const dir of options.include ?? []) args.push("-l", resolve(dir));
    step(`circom ${args.join(" ")}`);
    const started = performance.now();
    // circom2 (WASI) sees only the cwd's ancestors' descendants: run it from the filesystem root.
    await run([...findCircom(), ...args], "/", `circom ${basename(sourcePath)}`);
    circomMs = performance.now() - started;
    generatedDir = join(scratch, `${name}_cpp`);
  }
  try {
    const prime = primeOfGenerated(generatedDir);
    const generated = findGenerated(generatedDir);
    const circuitCpp = rewriteCircuitCpp(readFileSync(generated.cpp, "utf8"));
    const dat = readFileSync(generated.dat);
    const optimization = options.circuitOptimization ?? "-O1";
    const NATIVE = nativeDir();
    const sources = WITNESS_BUILD_FILES.map((f) => readFileSync(join(NATIVE, f)));
    const sourcesHash = sha256([...sources, compiler, COMMON_FLAGS.join(" ")]);
    const key = sha256([sourcesHash, LINK_FLAGS.join(" "), prime, optimization, circuitCpp, dat]);
    const outDir = resolve(options.outDir ?? dirname(sourcePath));
    const library = join(outDir, `${name}.witness.so`);
    const executable = join(outDir, `${name}.witness`);
    const cachedLibrary = join(cache, `${key}.so`);
    const cachedExecutable = join(cache, `${key}.witness`);
    const curve = PRIMES[prime].curve;
    mkdirSync(outDir, { recursive: true });
    const place = () => {
      copyFileSync(cachedLibrary, library);
      copyFileSync(cachedExecutable, executable);
      chmodSync(executable, 0o755);
    };
    if (existsSync(cachedLibrary) && existsSync(cachedExecutable)) {
      place();
      step(`cached: ${cachedLibrary}`);
      return { library, executable, curve, cached: true, circomMs, compileMs: 0 };
    }
    const started = performance.now();
    const runtime = runtimeObjects(cache, prime, cxx, sourcesHash);
    const work = mkdtempSync(join(cache, "build-"));
    try {
      writeFileSync(join(work, "circuit.dat"), dat);
      const [circuitObject] = await Promise.all([
        circuitObjectFor(cache, circuitCpp, optimization, cxx, sourcesHash, generated.cpp, step),
        run([cxx, "-c", `${NATIVE}witness/circuit_data.S`, "-o", "data.o"], work, "embedding the .dat tables"),
      ]);
      const objects = await runtime;
      const libraryObjects = objects.slice(0, WITNESS_SOURCES.length);
      await Promise.all([
        run([cxx, "-shared", "-o", "witness.so", circuitObject, "data.o", ...libraryObjects, ...LINK_FLAGS], work, "linking the witness library"),
        run([cxx, "-o", "witness", circuitObject, "data.o", ...objects, ...LINK_FLAGS], work, "linking the witness executable"),
      ]);
      // The executable first: a library in the cache means both are there.
      renameSync(join(work, "witness"), cachedExecutable);
      renameSync(join(work, "witness.so"), cachedLibrary);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    place();
    return { library, executable, curve, cached: false, circomMs, compileMs: performance.now() - started };
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
