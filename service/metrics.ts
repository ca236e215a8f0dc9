/**
 * @module
 * Prometheus text exposition (format 0.0.4) through prom-client: the service's counters and
 * histograms, prom-client's default families (process_* CPU, memory, file descriptors and start
 * time; nodejs_* event-loop lag and heap; read from the runtime at scrape time, Bun included), the
 * request-duration histogram, and gauges read at scrape time from a callback (queue depth, jobs by
 * state, pinned bytes, device memory), so a scrape always shows the present rather than a cached copy.
 */
import { collectDefaultMetrics, Counter, Histogram, Registry as PromRegistry } from "prom-client";
import type { Metric } from "prom-client";

type Labels = Record<string, string>;

/** What prom-client asks of a metric it renders. */
interface PromMetric {
  name: string;
  get(): Promise<{ name: string; help: string; type: "gauge"; values: Array<{ labels: Labels; value: number }>; aggregator: "sum" }>;
  reset(): void;
}

/**
 * Values read when scraped: `read` returns one sample per label set. Its labels need not be
 * declared ahead (prom-client's own gauges need that), because the sources decide them (devices,
 * keys, states).
 */
export class Gauge implements PromMetric {
  readonly name: string;
  readonly help: string;
  readonly read: () => Array<[Labels, number]>;

  constructor(name: string, help: string, read: () => Array<[Labels, number]>) {
    this.name = name;
    this.help = help;
    this.read = read;
  }

  get(): ReturnType<PromMetric["get"]> {
    let samples: Array<[Labels, number]>;
    try {
      samples = this.read();
    } catch {
      samples = []; // a failing source (e.g. a device query) leaves the gauge's samples out, not the scrape
    }
    return Promise.resolve({ name: this.name, help: this.help, type: "gauge", values: samples.map(([labels, value]) => ({ labels, value })), aggregator: "sum" });
  }

  reset(): void {}
}

/** Seconds, from 0.5 ms to 2 min: proofs of small circuits on a GPU up to large ones on a CPU. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Seconds to a response: the same, and 5 min for long-polls (they answer within the idle timeout, at most 250 s). */
export const REQUEST_BUCKETS = [...DURATION_BUCKETS, 300];

/** The metric families rendered together on /metrics. */
export class Registry {
  readonly prom = new PromRegistry();

  /** Adds a scrape-time gauge. */
  add<T extends Gauge>(gauge: T): T {
    this.prom.registerMetric(gauge as unknown as Metric);
    return gauge;
  }

  /** The exposition text. */
  render(): Promise<string> {
    return this.prom.metrics();
  }

  /** Its Content-Type. */
  get contentType(): string {
    return this.prom.contentType;
  }
}

/** The service's own metrics (gauges are added by main.ts, which knows the sources). */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #registers = [this.registry.prom];
  readonly jobsTotal = new Counter({
    name: "cuzk_jobs_total",
    help: "Jobs that reached a final state, by key and state",
    labelNames: ["key", "state"] as const,
    registers: this.#registers,
  });
  readonly submissions = new Counter({
    name: "cuzk_submissions_total",
    help: "Job submissions, by outcome (accepted, replayed, rejected_full, rejected_invalid)",
    labelNames: ["outcome"] as const,
    registers: this.#registers,
  });
  readonly phaseSeconds = new Histogram({
    name: "cuzk_phase_duration_seconds",
    help: "Duration of each phase of a job: queue (waiting), witness (from inputs), prove (library call), the library's phases (parse, msm_a, ntt_h, ...), total",
    labelNames: ["phase"] as const,
    buckets: DURATION_BUCKETS,
    registers: this.#registers,
  });
  readonly batchSize = new Histogram({
    name: "cuzk_batch_size",
    help: "Witnesses per library call",
    labelNames: ["key"] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    registers: this.#registers,
  });
  readonly batchFallbacks = new Counter({
    name: "cuzk_batch_fallbacks_total",
    help: "Batches whose call failed and whose jobs were then proved one by one",
    registers: this.#registers,
  });
  readonly httpRequests = new Counter({
    name: "cuzk_http_requests_total",
    help: "HTTP requests by route and status",
    labelNames: ["route", "status"] as const,
    registers: this.#registers,
  });
  readonly httpRequestSeconds = new Histogram({
    name: "cuzk_http_request_duration_seconds",
    help: "Time from a request's arrival to its response's headers, by route and status (an event stream: until it starts; a long-poll: until it answers)",
    labelNames: ["route", "status"] as const,
    buckets: REQUEST_BUCKETS,
    registers: this.#registers,
  });

  constructor() {
    // Counted from here: process_cpu_* are prom-client's counters, which start when registered.
    collectDefaultMetrics({ register: this.registry.prom });
  }

  /** Counts a request and its duration (ms since it arrived). */
  request(route: string, status: number, ms: number): void {
    const labels = { route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpRequestSeconds.observe(labels, ms / 1000);
  }
}
