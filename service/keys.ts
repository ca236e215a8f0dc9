/**
 * @module
 * The key registry: zkeys opened from the configured keys directory only, each bound to a
 * ProverSet over the service's shared contexts (one per device: the key resident on each, every
 * batch divided between them) and kept resident until deleted. A registry without contexts (the
 * API role of a database deployment, which proves nothing) opens each key alone: enough to check
 * witnesses and export the verification key, without a prover's device memory and set-up. A name is a relative
 * path (`<name>.zkey` or `<name>/circuit.zkey`); besides the pattern check of schemas.ts, the file's
 * real path (symbolic links resolved) must lie inside the directory's real path. A key may come
 * with its circuit's witness generator (`.wasm`) and constraint system (`.r1cs`, attached so that
 * the library checks every witness constraint by constraint).
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { Context, Key, ProverSet } from "../mod.ts";
import type { EngineSettings, KeyInfo, Library, VerificationKeyJson } from "../mod.ts";
import { ServiceError } from "./errors.ts";

/** A key kept resident by the service. */
export interface RegisteredKey {
  id: string;
  name: string;
  zkeyPath: string;
  /** circuit.wasm beside the key: jobs may then send circuit inputs. */
  wasmPath: string | undefined;
  /** circuit.r1cs beside the key (attached when r1cs checks are on). */
  r1csPath: string | undefined;
  r1csAttached: boolean;
  /** The opened key: witness checks, the verification key. */
  key: Key;
  /** Its prover on every device; undefined in a registry without contexts (it proves nothing). */
  prover: ProverSet | undefined;
  info: KeyInfo;
  registeredAt: string;
}

/** The JSON summary of a key (POST/GET /v1/keys). */
export function keySummary(key: RegisteredKey) {
  return {
    id: key.id,
    name: key.name,
    curve: key.info.curve,
    constraints: key.info.nConstraints,
    publicInputs: key.info.nPublic,
    variables: key.info.nVars,
    domainSize: key.info.domainSize,
    fileBytes: key.info.fileBytes,
    inputs: key.wasmPath !== undefined,
    r1csCheck: key.r1csAttached,
    backend: key.prover?.backend ?? "none",
    devices: key.prover?.devices ?? [],
    registeredAt: key.registeredAt,
  };
}

/** The prover of a key, for the roles that prove. */
export function proverOf(key: RegisteredKey): ProverSet {
  if (!key.prover) throw new Error(`key ${key.id} was opened without a prover: this process has no device to prove on`);
  return key.prover;
}

/** Options of the registry. */
export interface KeyRegistryOptions {
  keysDir: string;
  /** One per device the service proves on; none: keys are opened without provers. */
  contexts: Context[];
  library: Library;
  r1csCheck: boolean;
  /** Largest file (.zkey, .r1cs, .wasm) a key may bring: the library reads keys into memory. */
  maxFileBytes: number;
  /** Every prover's engine settings (the service's --h-copies and --memory-budget). */
  engine: EngineSettings;
}

/** The default id of a name: "bn254/mulchain_4" -> "bn254.mulchain_4". */
export const defaultKeyId = (name: string) => name.replaceAll("/", ".");

/** Keys by id. */
export class KeyRegistry {
  readonly #root: string;
  readonly #options: KeyRegistryOptions;
  readonly #keys = new Map<string, RegisteredKey>();
  /** Registrations in progress, so that two concurrent POSTs of one id open the key once. */
  readonly #opening = new Map<string, Promise<RegisteredKey>>();

  constructor(options: KeyRegistryOptions) {
    this.#options = options;
    try {
      this.#root = realpathSync(options.keysDir);
    } catch (cause) {
      throw new Error(`keys directory ${options.keysDir} cannot be read: ${(cause as Error).message}`);
    }
    if (!statSync(this.#root).isDirectory()) throw new Error(`keys directory ${options.keysDir} is not a directory`);
  }

  /** The device indices every key is proved on. */
  get devices(): number[] {
    return this.#options.contexts.map((c) => c.device);
  }

  /** The real path of the keys directory. */
  get root(): string {
    return this.#root;
  }

  /** Every registered key. */
  list(): RegisteredKey[] {
    return [...this.#keys.values()];
  }

  /** The key registered as `id`, else a 404 that lists the registered ids. */
  get(id: string): RegisteredKey {
    const key = this.#keys.get(id);
    if (!key) {
      const known = [...this.#keys.keys()];
      throw new ServiceError(404, "UNKNOWN_KEY", `no key is registered as ${JSON.stringify(id)}; registered: ${known.length ? known.join(", ") : "none"} (POST /v1/keys to add one)`, "/key");
    }
    return key;
  }

  /** Whether `id` is registered. */
  has(id: string): boolean {
    return this.#keys.has(id);
  }

  /**
   * A file inside the keys directory, or undefined when absent; a 400 when it resolves outside it,
   * a 422 when it is not a regular file (a FIFO would block its reader, a device never end) or is
   * larger than the limit. Checked before anything reads it.
   */
  #inside(path: string, name: string): string | undefined {
    if (!existsSync(path)) return undefined;
    const real = realpathSync(path);
    if (!real.startsWith(this.#root + sep)) {
      throw new ServiceError(400, "PATH_OUTSIDE_KEYS_DIR", `key name ${JSON.stringify(name)} resolves outside the keys directory`, "/name");
    }
    const shown = real.slice(this.#root.length + 1);
    const stats = statSync(real);
    if (stats.isDirectory()) return undefined;
    if (!stats.isFile()) throw new ServiceError(422, "KEY_FILE_NOT_REGULAR", `${shown} is not a regular file (a device, FIFO or socket); keys are read from files`, "/name");
    if (stats.size > this.#options.maxFileBytes) {
      throw new ServiceError(422, "KEY_FILE_TOO_LARGE", `${shown} has ${stats.size} bytes, more than the ${this.#options.maxFileBytes} a key file may have (--max-key-bytes)`, "/name");
    }
    return real;
  }

  /** Where the files of `name` are: `<name>.zkey` (+ .wasm, .r1cs) or `<name>/circuit.zkey` (+ circuit.*). */
  #resolve(name: string): { zkey: string; wasm?: string; r1cs?: string } {
    const flat = this.#inside(join(this.#root, `${name}.zkey`), name);
    if (flat) {
      return { zkey: flat, wasm: this.#inside(join(this.#root, `${name}.wasm`), name), r1cs: this.#inside(join(this.#root, `${name}.r1cs`), name) };
    }
    const nested = this.#inside(join(this.#root, name, "circuit.zkey"), name);
    if (nested) {
      return { zkey: nested, wasm: this.#inside(join(this.#root, name, "circuit.wasm"), name), r1cs: this.#inside(join(this.#root, name, "circuit.r1cs"), name) };
    }
    throw new ServiceError(404, "KEY_FILE_NOT_FOUND", `no ${name}.zkey or ${name}/circuit.zkey in the keys directory`, "/name");
  }

  /**
   * Registers `name` as `id` (default: defaultKeyId(name)). Registering the same name under the
   * same id again returns the key already resident (`created: false`).
   */
  async register(name: string, id = defaultKeyId(name)): Promise<{ key: RegisteredKey; created: boolean }> {
    const existing = this.#keys.get(id) ?? (await this.#opening.get(id)?.catch(() => undefined));
    if (existing) {
      if (existing.name !== name) {
        throw new ServiceError(409, "KEY_ID_TAKEN", `key id ${JSON.stringify(id)} is already registered for ${JSON.stringify(existing.name)}`, "/id");
      }
      return { key: existing, created: false };
    }
    const opening = this.#open(name, id);
    this.#opening.set(id, opening);
    try {
      const key = await opening;
      this.#keys.set(id, key);
      return { key, created: true };
    } finally {
      this.#opening.delete(id);
    }
  }

  async #open(name: string, id: string): Promise<RegisteredKey> {
    const files = this.#resolve(name);
    // Without a prover nothing is proved here, so the .r1cs is not read; r1csAttached still says
    // what the provers of the same settings do (they attach it).
    const attach = this.#options.r1csCheck && files.r1cs !== undefined;
    let prover: ProverSet | undefined;
    let key: Key;
    try {
      if (this.#options.contexts.length === 0) {
        // Witness checks and the verification key read the header sections only: the points (most
        // of a key) stay in the file, so the API holds a few KiB per key, not the whole key.
        key = await Key.open(files.zkey, { library: this.#options.library, pointsOnDemand: true });
      } else {
        prover = await ProverSet.open({
          zkey: files.zkey,
          contexts: this.#options.contexts,
          library: this.#options.library,
          r1cs: attach ? files.r1cs : undefined,
          selfCheck: true,
          ...this.#options.engine,
        });
        key = prover.key;
      }
    } catch (error) {
      const code = (error as { code?: string }).code ?? "KEY_OPEN";
      // Clients see paths relative to the keys directory, not where it lies on the server.
      const message = (error as Error).message.replaceAll(this.#root + sep, "");
      throw new ServiceError(422, code === "FORMAT" || code === "UNSUPPORTED" || code === "CURVE_MISMATCH" ? `KEY_${code}` : "KEY_OPEN", message.startsWith("cannot open the key") ? message : `cannot open key ${JSON.stringify(name)}: ${message}`, "/name");
    }
    const info = prover?.info ?? key.info();
    return {
      id,
      name,
      zkeyPath: files.zkey,
      wasmPath: files.wasm,
      r1csPath: files.r1cs,
      r1csAttached: attach,
      key,
      prover,
      info,
      registeredAt: new Date().toISOString(),
    };
  }

  /** The verification key of `id` as snarkjs's verification_key.json point fields. */
  verificationKey(id: string): Partial<VerificationKeyJson> {
    return this.get(id).key.exportVkJson();
  }

  /** Closes and forgets `id`. The caller checks that no job uses it. */
  remove(id: string): RegisteredKey {
    const key = this.get(id);
    // The set closes the key it opened; throws BUSY if a call were still queued: the scheduler prevents that.
    if (key.prover) key.prover.close();
    else key.key.close();
    this.#keys.delete(id);
    return key;
  }

  /** Closes every key (at shutdown, after the scheduler has stopped). */
  closeAll(): void {
    for (const id of [...this.#keys.keys()]) {
      try {
        this.remove(id);
      } catch {
        // a prover still busy at exit is released with the process
      }
    }
  }
}
