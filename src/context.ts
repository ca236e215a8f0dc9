/**
 * @module
 * A context: one backend on one device (the CPU thread pool, or one GPU with its streams and
 * pools). Provers are built on a context; the kernels (NTT, MSM) can also be run on it directly,
 * off the JS thread.
 */
import { deviceIndex, integerIn } from "./bounds.ts";
import { CuzkError } from "./errors.ts";
import type { Native } from "./ffi/load.ts";
import { nvidiaGpuPresent, PLATFORM_PACKAGES } from "./ffi/load.ts";
import { allocateStruct, TIMINGS_LAYOUT } from "./ffi/structs.ts";
import { ABI } from "./ffi/symbols.ts";
import type { Pointer } from "./ffi/types.ts";
import { asPointer } from "./ffi/types.ts";
import { curveOf } from "./formats/snarkjs.ts";
import { NativeHandle } from "./handle.ts";
import type { BackendName, CurveName } from "./library.ts";
import { Library, nativeOf } from "./library.ts";
import type { NativeBuffer } from "./memory/buffer.ts";
import { invoke, invokeAsync } from "./native_call.ts";
import { decodeTimings } from "./timings.ts";
import type { Timings } from "./timings.ts";

/** Options of Context.create. */
export interface ContextOptions {
  /** "auto" (CUDA when usable, else CPU), "cpu" or "cuda". */
  backend?: "auto" | BackendName;
  /** GPU index (ignored by the CPU backend): an integer from 0 to 2^31 - 1 (cuzk.h's int32_t); others are refused. */
  device?: number;
  /**
   * CPU worker threads; 0 (default) = every core. At most the library's limit,
   * `Library.info().cpuThreads` (the machine's online CPUs): more is refused with INVALID_ARGUMENT
   * before any thread starts.
   */
  cpuThreads?: number;
  /**
   * CUDA: run the G2 (B2) MSM of a key held in memory on the CPU, beside the GPU's work, instead of
   * on the GPU (its points then take no device memory). Default false; the proofs are the same.
   */
  g2OnCpu?: boolean;
  library?: Library;
}

/** NTT variants of cuzk_ntt. */
export type NttKind = "forward" | "inverse" | "coset_forward" | "coset_inverse";

const NTT_KINDS: Record<NttKind, number> = {
  forward: ABI.NTT_FORWARD,
  inverse: ABI.NTT_INVERSE,
  coset_forward: ABI.NTT_COSET_FORWARD,
  coset_inverse: ABI.NTT_COSET_INVERSE,
};

const BACKEND_IDS = { auto: ABI.BACKEND_AUTO, cpu: ABI.BACKEND_CPU, cuda: ABI.BACKEND_CUDA } as const;

/** The options of Context.create, checked against their bounds (INVALID_ARGUMENT) before anything is made. */
export function contextArguments(options: ContextOptions): { backend: keyof typeof BACKEND_IDS; device: number; cpuThreads: number; flags: number } {
  const backend = options.backend ?? "auto";
  if (!(backend in BACKEND_IDS)) throw new CuzkError("INVALID_ARGUMENT", `unknown backend ${JSON.stringify(backend)}`);
  const device = deviceIndex(options.device ?? 0);
  const limit = (options.library ?? Library.default()).info().cpuThreads;
  const cpuThreads = integerIn(options.cpuThreads ?? 0, "cpuThreads", 0, limit, ` (0 = every core; ${limit} is this machine's CPU count)`);
  if (options.g2OnCpu !== undefined && typeof options.g2OnCpu !== "boolean") {
    throw new CuzkError("INVALID_ARGUMENT", `g2OnCpu must be true or false, not ${JSON.stringify(options.g2OnCpu)}`);
  }
  return { backend, device, cpuThreads, flags: options.g2OnCpu ? ABI.CONTEXT_G2_ON_CPU : 0 };
}

/** Memory a kernel reads or writes: JS bytes or a native buffer. */
export type KernelMemory = Uint8Array | NativeBuffer;

/** Runs `work` with every native buffer among `memories` marked busy. */
export async function withBuffers<T>(memories: ReadonlyArray<KernelMemory | undefined>, work: (args: Array<Uint8Array | Pointer | null>) => Promise<T>): Promise<T> {
  const releases: Array<() => void> = [];
  try {
    const args = memories.map((memory) => {
      if (memory === undefined) return null;
      if (memory instanceof Uint8Array) return memory;
      releases.push(memory.acquire());
      return memory.unsafePointer;
    });
    return await work(args);
  } finally {
    for (const release of releases) release();
  }
}

/** One backend on one device. */
export class Context extends NativeHandle {
  /** The backend in use ("auto" resolved). */
  readonly backend: BackendName;
  /** The GPU index asked for (meaningless for the CPU backend). */
  readonly device: number;

  private constructor(native: Native, handle: Pointer, device: number) {
    super(native, handle, "cuzk_context_destroy");
    this.device = device;
    this.backend = (native.call("cuzk_context_backend", handle) as number) === ABI.BACKEND_CUDA ? "cuda" : "cpu";
  }

  /**
   * Creates a context; throws INVALID_ARGUMENT for options out of their bounds (see
   * ContextOptions), NO_DEVICE / UNSUPPORTED when the backend cannot run here.
   */
  static create(options: ContextOptions = {}): Context {
    const native = nativeOf(options.library);
    native.require("cuzk_context_create", "cuzk_context_backend", "cuzk_context_destroy");
    const { backend, device, cpuThreads, flags } = contextArguments(options);
    const out = new BigUint64Array(1);
    try {
      invoke(native, "cuzk_context_create", [BACKEND_IDS[backend], device, cpuThreads, flags, out], {
        detail: `${backend}, device ${device}`,
      });
    } catch (error) {
      throw backend === "cuda" ? withGpuCause(error, native) : error;
    }
    return new Context(native, asPointer(out[0]), device);
  }

  /**
   * In-place NTT over Fr of `curve` on 2^logN values (32 bytes each, standard LE, natural order),
   * off the JS thread. logN defaults to the size of `values`.
   */
  async ntt(curve: CurveName, values: KernelMemory, options: { kind?: NttKind; logN?: number } = {}): Promise<Timings> {
    const handle = this.live();
    const count = values.byteLength / ABI.FR_BYTES;
    const logN = options.logN ?? Math.log2(count);
    if (!Number.isInteger(logN) || (1 << logN) * ABI.FR_BYTES > values.byteLength) {
      throw new CuzkError("INVALID_ARGUMENT", `NTT needs 2^logN values of 32 bytes; got ${values.byteLength} bytes`);
    }
    const timings = allocateStruct(TIMINGS_LAYOUT);
    await this.#busy(() =>
      withBuffers([values], ([v]) =>
        invokeAsync(this.native, "cuzk_ntt", [handle, curveOf(curve).id, v, logN, NTT_KINDS[options.kind ?? "forward"], timings], {
          detail: `2^${logN}`,
        })
      )
    );
    return decodeTimings(timings);
  }

  /**
   * sum scalars[i] * points[i] off the JS thread. points: key encoding (as in a .zkey);
   * scalars: n × 32 bytes. Returns the point (output encoding) and the timings.
   */
  async msm(
    curve: CurveName,
    group: "g1" | "g2",
    points: KernelMemory,
    scalars: KernelMemory,
    n: number,
  ): Promise<{ point: Uint8Array; timings: Timings }> {
    const handle = this.live();
    const params = curveOf(curve);
    const pointBytes = (group === "g1" ? 2 : 4) * params.fqBytes;
    // The library cannot see the buffers' sizes: n must fit both.
    integerIn(n, "n", 1, Math.min(Math.floor(scalars.byteLength / ABI.FR_BYTES), Math.floor(points.byteLength / pointBytes)), " (the points and scalars given)");
    const out = new Uint8Array(pointBytes);
    const timings = allocateStruct(TIMINGS_LAYOUT);
    await this.#busy(() =>
      withBuffers([points, scalars], ([p, s]) =>
        invokeAsync(this.native, "cuzk_msm", [handle, params.id, group === "g1" ? ABI.G1 : ABI.G2, p, s, n, out, out.length, timings], {
          detail: `${group}, n = ${n}`,
        })
      )
    );
    return { point: out, timings: decodeTimings(timings) };
  }

  async #busy<T>(work: () => Promise<T>): Promise<T> {
    const release = this.hold();
    try {
      return await work();
    } finally {
      release();
    }
  }

  protected describe(): string {
    return "context";
  }

  protected busyReason(users: number): string {
    return `cannot close a ${this.backend} context: ${users} user(s) (provers or running calls)`;
  }
}

/**
 * A CUDA context that could not start, with what the user can change: no NVIDIA GPU visible here
 * (whatever the library), or a GPU but a library built without CUDA (the package to install).
 */
function withGpuCause(error: unknown, native: Native): unknown {
  if (!(error instanceof CuzkError) || (error.code !== "UNSUPPORTED" && error.code !== "NO_DEVICE")) return error;
  const options = { status: error.status, nativeMessage: error.nativeMessage, operation: error.operation, cause: error };
  if (!nvidiaGpuPresent()) {
    return new CuzkError("NO_DEVICE", `${error.message}: no NVIDIA GPU is visible on this machine (no driver at /proc/driver/nvidia ` +
      `or no /dev/nvidiaN); prove with the backend "cpu" (--backend cpu), or on a machine with a GPU`, options);
  }
  if (error.code === "UNSUPPORTED" && PLATFORM_PACKAGES) {
    return new CuzkError("UNSUPPORTED", `${error.message}: this machine has an NVIDIA GPU, but ${native.path} has no CUDA ` +
      `backend; install the CUDA library with: npm install ${PLATFORM_PACKAGES.cuda}`, options);
  }
  return error;
}
