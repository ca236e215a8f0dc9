/**
 * @module
 * The loaded native library as an object: what it was built with (`info`), the GPUs it sees
 * (`devices`), status names and the host-memory counters used for leak checks. Every other
 * handle type takes an optional `Library` and defaults to `Library.default()`.
 */
import { check, CuzkError } from "./errors.ts";
import type { Native } from "./ffi/load.ts";
import { openNative } from "./ffi/load.ts";
import type { LoadOptions } from "./ffi/load.ts";
import { ABI } from "./ffi/symbols.ts";
import { allocateStruct, decodeStruct, DEVICE_INFO_LAYOUT, LIBRARY_INFO_LAYOUT } from "./ffi/structs.ts";
import type { RuntimeName } from "./ffi/types.ts";
import { invoke } from "./native_call.ts";

export type { LoadOptions };

/** Backends a library can be built with. */
export type BackendName = "cpu" | "cuda";
/** Curves by the names the library documents. */
export type CurveName = "bn254" | "bls12_381";

/** What `cuzk_library_info_get` reports. */
export interface LibraryInfo {
  abiVersion: number;
  version: string;
  backends: BackendName[];
  curves: CurveName[];
  cpuThreads: number;
  cudaDeviceCount: number;
  /** e.g. 13000; 0 when CUDA is not compiled in. */
  cudaRuntimeVersion: number;
  /** 0 without a driver. */
  cudaDriverVersion: number;
}

/** What `cuzk_device_info_get` reports about one GPU. */
export interface DeviceInfo {
  index: number;
  name: string;
  computeCapability: string;
  smCount: number;
  totalMemory: number;
  freeMemory: number;
}

/** Live allocations of `cuzk_host_alloc` (for leak checks). */
export interface HostStats {
  liveBuffers: number;
  liveBytes: number;
  pinnedBytes: number;
  totalPinMs: number;
}

/** Page-locked memory the library allocated for its own GPU staging (`cuzk_staging_stats`). */
export interface StagingStats {
  /** Held now. */
  pinnedBytes: number;
  /** Allocations since the library was loaded: a proving loop makes them in its first proof only. */
  allocations: number;
  /** Time those allocations took. */
  allocMs: number;
}

const NATIVE = Symbol("cuzk.native");

/** The native library, opened with the current runtime's FFI. */
export class Library {
  readonly [NATIVE]: Native;
  static #byPath = new Map<string, Library>();

  private constructor(native: Native) {
    this[NATIVE] = native;
  }

  /** Opens the library (once per path): `options.path`, else $CUZK_LIB, else build/libcuzk.so. */
  static open(options: LoadOptions = {}): Library {
    const native = openNative(options);
    let library = Library.#byPath.get(native.path);
    if (!library) {
      library = new Library(native);
      Library.#byPath.set(native.path, library);
    }
    return library;
  }

  /**
   * The library handles use when none is given: the first one opened in this process, else the one
   * the default search finds ($CUZK_LIB, then build/libcuzk.so).
   */
  static default(): Library {
    const first = Library.#byPath.values().next();
    return first.done ? Library.open() : first.value;
  }

  /** Path the library was loaded from. */
  get path(): string {
    return this[NATIVE].path;
  }

  /** Which runtime's FFI loaded it. */
  get runtime(): RuntimeName {
    return this[NATIVE].runtime;
  }

  /** Functions of cuzk.h this build does not export (empty for a complete library). */
  get missingSymbols(): readonly string[] {
    return this[NATIVE].missing;
  }

  /** The ABI version the library implements. */
  abiVersion(): number {
    return this[NATIVE].call("cuzk_abi_version") as number;
  }

  /** What the library was built with and what it sees now. */
  info(): LibraryInfo {
    const out = allocateStruct(LIBRARY_INFO_LAYOUT);
    invoke(this[NATIVE], "cuzk_library_info_get", [out]);
    const raw = decodeStruct(LIBRARY_INFO_LAYOUT, out);
    const { backends, curves } = raw;
    return {
      abiVersion: raw.abi_version,
      version: raw.version,
      backends: [
        ...(backends & ABI.HAS_CPU ? ["cpu" as const] : []),
        ...(backends & ABI.HAS_CUDA ? ["cuda" as const] : []),
      ],
      curves: [
        ...(curves & ABI.HAS_BN254 ? ["bn254" as const] : []),
        ...(curves & ABI.HAS_BLS12_381 ? ["bls12_381" as const] : []),
      ],
      cpuThreads: raw.cpu_threads,
      cudaDeviceCount: raw.cuda_device_count,
      cudaRuntimeVersion: raw.cuda_runtime_version,
      cudaDriverVersion: raw.cuda_driver_version,
    };
  }

  /** Describes GPU `index`; throws NO_DEVICE when there is none. */
  device(index: number): DeviceInfo {
    const out = allocateStruct(DEVICE_INFO_LAYOUT);
    invoke(this[NATIVE], "cuzk_device_info_get", [index, out], { detail: String(index) });
    const raw = decodeStruct(DEVICE_INFO_LAYOUT, out);
    return {
      index: raw.index,
      name: raw.name,
      computeCapability: `${raw.cc_major}.${raw.cc_minor}`,
      smCount: raw.sm_count,
      totalMemory: Number(raw.total_memory),
      freeMemory: Number(raw.free_memory),
    };
  }

  /** Every usable GPU (empty without a driver or a CUDA build). */
  devices(): DeviceInfo[] {
    const count = this.info().cudaDeviceCount;
    return Array.from({ length: count }, (_, i) => this.device(i));
  }

  /** The library's fixed message for a status code. */
  statusName(status: number): string {
    return this[NATIVE].call("cuzk_status_name", status) as string;
  }

  /** Live host allocations made through the library (zero when nothing leaked). */
  hostStats(): HostStats {
    const cells = new BigUint64Array(4);
    const status = this[NATIVE].call(
      "cuzk_host_stats",
      cells.subarray(0, 1),
      cells.subarray(1, 2),
      cells.subarray(2, 3),
      cells.subarray(3, 4),
    ) as number;
    check(status, new Uint8Array(0), "cuzk_host_stats");
    return {
      liveBuffers: Number(cells[0]),
      liveBytes: Number(cells[1]),
      pinnedBytes: Number(cells[2]),
      totalPinMs: Number(cells[3]) / 1e6,
    };
  }

  /** Page-locked memory the library allocated for itself (GPU staging); zeros without CUDA. */
  stagingStats(): StagingStats {
    const cells = new BigUint64Array(3);
    const status = this[NATIVE].call(
      "cuzk_staging_stats",
      cells.subarray(0, 1),
      cells.subarray(1, 2),
      cells.subarray(2, 3),
    ) as number;
    check(status, new Uint8Array(0), "cuzk_staging_stats");
    return { pinnedBytes: Number(cells[0]), allocations: Number(cells[1]), allocMs: Number(cells[2]) / 1e6 };
  }
}

/** The `Native` behind a Library (for the object layer; not part of the public API). */
export function nativeOf(library: Library | undefined): Native {
  return (library ?? Library.default())[NATIVE];
}
