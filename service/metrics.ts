/**
 * @module
 * Prometheus text exposition (format 0.0.4) without a client library: counters and histograms
 * with labels, and gauges read at scrape time from a callback (queue depth, jobs by state, pinned
 * bytes, device memory), so a scrape always shows the present rather than a cached copy.
 */

type Labels = Record<string, string>;

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  return entries.length ? `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}` : "";
}

const number = (value: number) => (Number.isFinite(value) ? String(value) : value > 0 ? "+Inf" : value < 0 ? "-Inf" : "NaN");

interface Family {
  render(): string[];
}

/** A monotonically increasing count per label set. */
export class Counter implements Family {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  constructor(readonly name: string, readonly help: string) {}

  inc(labels: Labels = {}, by = 1): void {
    const id = labelText(labels);
    const cell = this.#values.get(id);
    if (cell) cell.value += by;
    else this.#values.set(id, { labels, value: by });
  }

  render(): string[] {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`, ...[...this.#values.values()].map((c) => `${this.name}${labelText(c.labels)} ${number(c.value)}`)];
  }
}

/** Values read when scraped: `read` returns one sample per label set. */
export class Gauge implements Family {
  constructor(readonly name: string, readonly help: string, readonly read: () => Array<[Labels, number]>) {}

  render(): string[] {
    let samples: Array<[Labels, number]>;
    try {
      samples = this.read();
    } catch {
      samples = []; // a failing source (e.g. a device query) leaves the gauge out, not the scrape
    }
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`, ...samples.map(([labels, value]) => `${this.name}${labelText(labels)} ${number(value)}`)];
  }
}

/** Cumulative-bucket histograms per label set. */
export class Histogram implements Family {
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string, readonly buckets: readonly number[]) {}

  observe(labels: Labels, value: number): void {
    const id = labelText(labels);
    let series = this.#series.get(id);
    if (!series) {
      series = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(id, series);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]) series.counts[i]++;
    series.sum += value;
    series.count++;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      this.buckets.forEach((le, i) => lines.push(`${this.name}_bucket${labelText({ ...labels, le: number(le) })} ${counts[i]}`));
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: "+Inf" })} ${count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${sum}`);
      lines.push(`${this.name}_count${labelText(labels)} ${count}`);
    }
    return lines;
  }
}

/** Seconds, from 0.5 ms to 2 min: proofs of small circuits on a GPU up to large ones on a CPU. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** A set of metric families rendered together. */
export class Registry {
  readonly #families: Family[] = [];

  add<T extends Family>(family: T): T {
    this.#families.push(family);
    return family;
  }

  /** The exposition text. */
  render(): string {
    return this.#families.flatMap((f) => f.render()).join("\n") + "\n";
  }
}

/** The service's own metrics (gauges are added by main.ts, which knows the sources). */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly jobsTotal = this.registry.add(new Counter("cuzk_jobs_total", "Jobs that reached a final state, by key and state"));
  readonly submissions = this.registry.add(new Counter("cuzk_submissions_total", "Job submissions, by outcome (accepted, replayed, rejected_full, rejected_invalid)"));
  readonly phaseSeconds = this.registry.add(
    new Histogram(
      "cuzk_phase_duration_seconds",
      "Duration of each phase of a job: queue (waiting), witness (from inputs), prove (library call), the library's phases (parse, msm_a, ntt_h, ...), total",
      DURATION_BUCKETS,
    ),
  );
  readonly batchSize = this.registry.add(new Histogram("cuzk_batch_size", "Witnesses per library call", [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]));
  readonly batchFallbacks = this.registry.add(new Counter("cuzk_batch_fallbacks_total", "Batches whose call failed and whose jobs were then proved one by one"));
  readonly httpRequests = this.registry.add(new Counter("cuzk_http_requests_total", "HTTP requests by route and status"));
}
