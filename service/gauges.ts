/**
 * @module
 * The gauges of /metrics, read at scrape time from their sources: the scheduler's queue and jobs,
 * the key registry, the library's host and staging memory, and the device's memory (CUDA only).
 */
import type { Context, Library } from "../mod.ts";
import type { KeyRegistry } from "./keys.ts";
import { Gauge } from "./metrics.ts";
import type { Registry } from "./metrics.ts";
import type { Scheduler } from "./scheduler.ts";

/** Where the gauges read from. */
export interface GaugeSources {
  scheduler: Scheduler;
  keys: KeyRegistry;
  library: Library;
  /** One per device the service proves on. */
  contexts: Context[];
}

/** Adds the service's gauges to `registry`. */
export function addGauges(registry: Registry, { scheduler, keys, library, contexts }: GaugeSources): void {
  const context = contexts[0];
  const version = library.info().version;
  registry.add(new Gauge("cuzk_queue_depth", "Jobs waiting to run", () => [[{}, scheduler.queueDepth]]));
  registry.add(new Gauge("cuzk_queue_bytes", "Witness bytes held by waiting jobs", () => [[{}, scheduler.queuedBytes]]));
  registry.add(new Gauge("cuzk_jobs", "Retained jobs by state", () => Object.entries(scheduler.countByState()).map(([state, n]) => [{ state }, n])));
  registry.add(new Gauge("cuzk_keys_loaded", "Keys resident", () => [[{}, keys.list().length]]));
  registry.add(new Gauge("cuzk_host_pinned_bytes", "Pinned host memory allocated through the library", () => [[{}, library.hostStats().pinnedBytes]]));
  registry.add(new Gauge("cuzk_staging_pinned_bytes", "Pinned memory the library holds for its own GPU staging", () => [[{}, library.stagingStats().pinnedBytes]]));
  registry.add(new Gauge("cuzk_host_live_bytes", "Host memory allocated through the library (pinned or not)", () => [[{}, library.hostStats().liveBytes]]));
  registry.add(
    new Gauge("cuzk_device_memory_bytes", "GPU memory of each of the service's devices (CUDA backend only)", () => {
      if (context.backend !== "cuda") return [];
      return contexts.flatMap((c) => {
        const device = library.device(c.device);
        return [[{ device: String(device.index), kind: "total" }, device.totalMemory], [{ device: String(device.index), kind: "free" }, device.freeMemory]] as Array<[Record<string, string>, number]>;
      });
    }),
  );
  registry.add(new Gauge("cuzk_backend_info", "The backend in use (value 1), per device", () => contexts.map((c) => [{ backend: c.backend, version, device: String(c.device) }, 1])));
}
