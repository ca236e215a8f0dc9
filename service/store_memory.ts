/**
 * @module
 * The in-process job store (no --database-url): the scheduler's jobs in this process's memory,
 * proved on this process's device. A restart forgets them.
 */
import { ServiceError } from "./errors.ts";
import { Scheduler } from "./scheduler.ts";
import type { Job } from "./scheduler.ts";
import { finishedOrNot, isoTime } from "./store.ts";
import type { JobListing, JobResult, JobState, JobStore, JobView, Submission } from "./store.ts";

/** The scheduler behind the store interface. */
export class MemoryJobStore implements JobStore {
  constructor(readonly scheduler: Scheduler) {}

  get closing(): boolean {
    return this.scheduler.closing;
  }

  #view(job: Job): JobView {
    return {
      id: job.id,
      key: job.keyId,
      state: job.state,
      source: job.source,
      priority: 0,
      position: this.scheduler.position(job),
      progress: this.scheduler.progress(job),
      createdAt: isoTime(job.createdAt),
      startedAt: isoTime(job.startedAt),
      finishedAt: isoTime(job.finishedAt),
      timings: job.timings,
      attempts: job.attempts,
      error: job.error,
      result: job.state === "succeeded" ? `/v1/jobs/${job.id}/result` : undefined,
    };
  }

  replay(idempotencyKey: string, fingerprint: string): Promise<JobView | undefined> {
    const job = this.scheduler.replay(idempotencyKey, fingerprint);
    return Promise.resolve(job && this.#view(job));
  }

  admissible(_keyId: string, bytes = 0): Promise<void> {
    this.scheduler.admissible(bytes);
    return Promise.resolve();
  }

  submit(submission: Submission): Promise<{ view: JobView; replayed: boolean }> {
    if (submission.priority !== 0) {
      throw new ServiceError(422, "PRIORITY_UNSUPPORTED", "priorities need the PostgreSQL job store (--database-url); in one process jobs run in submission order", "/priority");
    }
    const { job, replayed } = this.scheduler.submit(submission);
    return Promise.resolve({ view: this.#view(job), replayed });
  }

  view(id: string): Promise<JobView> {
    return Promise.resolve(this.#view(this.scheduler.get(id)));
  }

  list(filter: { state?: JobState; keyId?: string; limit: number }): Promise<JobListing> {
    const jobs = this.scheduler.list(filter).map((job) => this.#view(job));
    return Promise.resolve({ jobs, queueDepth: this.scheduler.queueDepth, counts: this.scheduler.countByState() });
  }

  async waitFinal(id: string, ms: number, signal?: AbortSignal): Promise<JobView> {
    const job = this.scheduler.get(id);
    const deadline = performance.now() + ms;
    while (!Scheduler.isFinal(job) && !signal?.aborted) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      await this.scheduler.waitForChange(job, left, signal);
    }
    return this.#view(job);
  }

  watch(id: string, onView: (view: JobView) => void): Promise<() => void> {
    const job = this.scheduler.get(id);
    const send = () => onView(this.#view(job));
    job.watchers.add(send);
    send();
    return Promise.resolve(() => job.watchers.delete(send));
  }

  result(id: string): Promise<JobResult> {
    const job = this.scheduler.get(id);
    if (job.state === "succeeded") {
      this.scheduler.markFetched(job);
      return Promise.resolve(job.result!);
    }
    throw finishedOrNot(job.id, job.state, job.error);
  }

  cancel(id: string): Promise<JobView> {
    return Promise.resolve(this.#view(this.scheduler.cancel(id)));
  }

  activeJobs(keyId: string): Promise<number> {
    return Promise.resolve(this.scheduler.activeJobs(keyId));
  }

  queueDepth(): Promise<number> {
    return Promise.resolve(this.scheduler.queueDepth);
  }

  refreshMetrics(): Promise<void> {
    return Promise.resolve();
  }
}
