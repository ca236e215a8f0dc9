/**
 * @module
 * The HTTP API on `Bun.serve` routes: the routes of each resource (routes_ops.ts, routes_keys.ts,
 * routes_jobs.ts), each wrapped with the bearer-token check, errors as JSON and request metrics,
 * and the answers for unknown paths (404) and methods (405). Nothing here blocks: bodies are read
 * as streams with a running size check, witnesses are checked in a few ms, circuit inputs go to a
 * child process and proofs to the library's own threads. Bun closes a connection idle for
 * `idleTimeout` seconds (255 at most), so a long-poll returns 5 s before that and an event stream
 * sends a comment line every few seconds.
 */
import type { ServiceConfig } from "./config.ts";
import { errorResponse, ServiceError } from "./errors.ts";
import { bearerAuth, requestUrl, toServiceError } from "./http.ts";
import type { Handler, RouteRequest, Routes } from "./http.ts";
import type { InputWitnesses } from "./inputs.ts";
import type { KeyRegistry } from "./keys.ts";
import type { ServiceMetrics } from "./metrics.ts";
import { jobRoutes } from "./routes_jobs.ts";
import { keyRoutes } from "./routes_keys.ts";
import { OPEN_PATHS, opsRoutes } from "./routes_ops.ts";
import type { JobStore } from "./store.ts";

/** What the routes work on. */
export interface ServerDeps {
  config: ServiceConfig;
  keys: KeyRegistry;
  store: JobStore;
  inputs: InputWitnesses;
  metrics: ServiceMetrics;
  /** Whether the backend is up and the preloaded keys are registered. */
  ready(): boolean;
  /** Backend and library facts for /readyz. */
  describe(): Record<string, unknown>;
}

/** The part of Bun's server object used here. */
export interface BunServer {
  port: number;
  hostname: string;
  stop(closeActiveConnections?: boolean): Promise<void>;
}

interface BunServeOptions {
  hostname: string;
  port: number;
  idleTimeout: number;
  maxRequestBodySize: number;
  routes: Record<string, Partial<Record<string, (req: RouteRequest) => Response | Promise<Response>>>>;
  fetch(req: Request): Response | Promise<Response>;
  error(error: Error): Response;
}

/** Builds the Bun.serve options of the service. */
export function serveOptions(deps: ServerDeps): BunServeOptions {
  const { config, metrics } = deps;
  const routes: Routes = {
    ...opsRoutes(deps),
    ...keyRoutes(deps.keys, deps.store),
    ...jobRoutes({ ...deps, maxBodyBytes: config.maxBodyBytes, idleTimeoutS: config.idleTimeoutS }),
  };
  const authorize = bearerAuth(config.token);
  // Without a token there is nothing to protect the metrics from.
  const isOpen = (path: string) => OPEN_PATHS.has(path) || (path === "/metrics" && !config.token);

  /** Wraps a handler: auth, error mapping, request metrics. */
  const wrap = (path: string, handler: Handler) => async (req: RouteRequest) => {
    const arrived = performance.now();
    let response: Response;
    try {
      if (!isOpen(path)) authorize(req);
      response = await handler(req, requestUrl(req));
    } catch (error) {
      response = errorResponse(toServiceError(error));
    }
    metrics.request(`${req.method} ${path}`, response.status, performance.now() - arrived);
    return response;
  };

  const bunRoutes: BunServeOptions["routes"] = {};
  const patterns: Array<{ regex: RegExp; allow: string[] }> = [];
  for (const [path, methods] of Object.entries(routes)) {
    bunRoutes[path] = {};
    for (const [method, handler] of Object.entries(methods)) bunRoutes[path][method] = wrap(path, handler!);
    patterns.push({ regex: new RegExp(`^${path.replace(/:[a-z]+/g, "[^/]+")}$`), allow: Object.keys(methods) });
  }

  return {
    hostname: config.host,
    port: config.port,
    idleTimeout: config.idleTimeoutS,
    // Bun's own cap, above ours: bodies between the two get our JSON 413 rather than a bare one.
    maxRequestBodySize: config.maxBodyBytes + (1 << 20),
    routes: bunRoutes,
    fetch(req) {
      const arrived = performance.now();
      const path = requestUrl(req).pathname;
      const known = patterns.find((p) => p.regex.test(path));
      const error = known
        ? new ServiceError(405, "METHOD_NOT_ALLOWED", `${req.method} is not allowed on ${path}; allowed: ${known.allow.join(", ")}`, undefined, { headers: { Allow: known.allow.join(", ") } })
        : new ServiceError(404, "NOT_FOUND", `no route ${req.method} ${path}`);
      metrics.request("unmatched", error.status, performance.now() - arrived);
      return errorResponse(error);
    },
    error(error) {
      return errorResponse(toServiceError(error));
    },
  };
}
