/**
 * @module
 * The operator's routes: liveness (`/healthz`, from the event loop and nothing else), readiness
 * (`/readyz`: backend up, preloaded keys registered, not shutting down, and with a database, the
 * database reachable) and Prometheus `/metrics`.
 */
import { DATABASE_RETRY_AFTER_S, isConnectionError } from "./db_errors.ts";
import type { Routes } from "./http.ts";
import type { KeyRegistry } from "./keys.ts";
import type { ServiceMetrics } from "./metrics.ts";
import type { JobStore } from "./store.ts";

/** What the operator's routes read. */
export interface OpsRoutesDeps {
  keys: KeyRegistry;
  store: JobStore;
  metrics: ServiceMetrics;
  /** Whether the backend is up and the preloaded keys are registered. */
  ready(): boolean;
  /** Backend and library facts for /readyz. */
  describe(): Record<string, unknown>;
}

/** Paths that never need the bearer token (probes of the platform running the service). */
export const OPEN_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz"]);

/** The routes of health, readiness and metrics. */
export function opsRoutes(deps: OpsRoutesDeps): Routes {
  const { keys, store, metrics } = deps;
  return {
    "/healthz": { GET: () => Response.json({ status: "ok" }) },
    "/readyz": {
      GET: async () => {
        // With a database, reading the queue depth is also the probe of it: not ready while it
        // cannot be reached, ready again as soon as it answers.
        // (The error itself is not shown: this path needs no token, and it names the server.)
        let queueDepth: number | undefined;
        let reachable = true;
        try {
          queueDepth = await store.queueDepth();
        } catch (error) {
          if (!isConnectionError(error)) throw error;
          reachable = false;
        }
        const database = store.listening === undefined ? {} : { databaseReachable: reachable, databaseListening: store.listening };
        const ready = deps.ready() && !store.closing && reachable;
        return Response.json(
          { ready, shuttingDown: store.closing, keys: keys.list().map((k) => k.id), queueDepth, ...deps.describe(), ...database },
          { status: ready ? 200 : 503, headers: reachable ? {} : { "Retry-After": String(DATABASE_RETRY_AFTER_S) } },
        );
      },
    },
    "/metrics": {
      GET: async () => {
        await store.refreshMetrics();
        return new Response(await metrics.registry.render(), { headers: { "Content-Type": metrics.registry.contentType } });
      },
    },
  };
}
