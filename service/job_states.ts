/**
 * @module
 * The job state machine, as data: the states a job can be in and every change between them,
 * each named by the event that makes it. Both job stores change a job's state only through this
 * table: the in-memory scheduler (scheduler.ts) with `transition`, which throws on a change the
 * table lacks, and PostgreSQL (store_pg.ts, worker.ts) with `sqlTransition`, whose from and to
 * states are written into the statement that makes the change (`SET state = <to> ... WHERE state
 * IN (<from>)`), so that no statement can write a change the table lacks either. They go in as
 * literals rather than parameters: the planner then matches the partial index on active states,
 * and the statement reads the same in pg_stat_activity as it runs.
 *
 *   (submit) -> queued --claim--> running --prove--> succeeded
 *                  |                 | ^ \--fail---> failed
 *                  |                 | '-reclaim (a new claim after a lost lease; PostgreSQL)
 *                  |                 |
 *                  +----cancel-------+-------------> cancelled
 *                  '----abandon------'-------------> failed
 *
 * Final states have no way out: an outcome that arrives for a final job (a proof of a job
 * cancelled while its batch ran) is dropped, never written over it.
 */

/** A job's state as clients see it. */
export type JobState = "queued" | "running" | "succeeded" | "failed" | "cancelled";

/** Every state, in the order listings count them. */
export const JOB_STATES: readonly JobState[] = ["queued", "running", "succeeded", "failed", "cancelled"];

/** The state a submission starts in. */
export const INITIAL_STATE: JobState = "queued";

/** What changes a job's state. */
export type JobEvent = "claim" | "reclaim" | "prove" | "fail" | "cancel" | "abandon";

/** A change of state: the states it applies to, the state it leads to, and when it happens. */
export interface Transition {
  readonly from: readonly JobState[];
  readonly to: JobState;
  readonly when: string;
}

/** Every change of state a job may go through. */
export const TRANSITIONS: Readonly<Record<JobEvent, Transition>> = {
  claim: { from: ["queued"], to: "running", when: "a batch takes it (the scheduler's next batch, or a worker's claim)" },
  reclaim: { from: ["running"], to: "running", when: "a worker claims it again after the previous claim's lease was lost (PostgreSQL only)" },
  prove: { from: ["running"], to: "succeeded", when: "its library call returned its proof" },
  fail: { from: ["running"], to: "failed", when: "the library refused its witness in a call of its own, or its witness could not be read" },
  cancel: { from: ["queued", "running"], to: "cancelled", when: "a client or a shutdown cancelled it before it was final" },
  abandon: { from: ["queued", "running"], to: "failed", when: "no attempt can finish it: claims lost past the retry limit, or the scheduler could not run its batch" },
};

/** Every event, in the table's order. */
export const JOB_EVENTS = Object.keys(TRANSITIONS) as readonly JobEvent[];

/** States with no way out. */
export const FINAL_STATES: ReadonlySet<JobState> = new Set(JOB_STATES.filter((state) => !JOB_EVENTS.some((event) => TRANSITIONS[event].from.includes(state))));

/** States a job is still waiting or being proved in. */
export const ACTIVE_STATES: readonly JobState[] = JOB_STATES.filter((state) => !FINAL_STATES.has(state));

/** Whether `state` is final. */
export const isFinal = (state: JobState): boolean => FINAL_STATES.has(state);

/** Whether `event` applies to a job in `state`. */
export function allowed(state: JobState, event: JobEvent): boolean {
  return TRANSITIONS[event].from.includes(state);
}

/** The state `event` leads to from `state`, or undefined when the table has no such change. */
export function nextState(state: JobState, event: JobEvent): JobState | undefined {
  return allowed(state, event) ? TRANSITIONS[event].to : undefined;
}

/** A change of state the table does not have. */
export class JobTransitionError extends Error {
  readonly state: JobState;
  readonly event: JobEvent;

  constructor(state: JobState, event: JobEvent) {
    super(`a ${state} job cannot ${event}: ${event} applies to ${TRANSITIONS[event].from.join(", ")} jobs`);
    this.name = "JobTransitionError";
    this.state = state;
    this.event = event;
  }
}

/** The state `event` leads to from `state`; throws JobTransitionError when the table has no such change. */
export function transition(state: JobState, event: JobEvent): JobState {
  const next = nextState(state, event);
  if (next === undefined) throw new JobTransitionError(state, event);
  return next;
}

/** The events that apply to a job in `state` (none for a final one). */
export function eventsFrom(state: JobState): JobEvent[] {
  return JOB_EVENTS.filter((event) => allowed(state, event));
}

/** A state as an SQL string literal. States are the table's own lowercase words (checked), so nothing needs escaping. */
export function sqlState(state: JobState): string {
  if (!JOB_STATES.includes(state) || !/^[a-z]+$/.test(state)) throw new Error(`not a job state: ${JSON.stringify(state)}`);
  return `'${state}'`;
}

/** What a statement that writes a change of state needs: the states a row may be in, and the state it is set to. */
export interface SqlTransition {
  from: JobState[];
  to: JobState;
  /** `from` as a list of SQL literals, for `WHERE state IN (${sqlFrom})`. */
  sqlFrom: string;
  /** `to` as an SQL literal, for `SET state = ${sqlTo}`. */
  sqlTo: string;
}

/**
 * The states of a statement that writes `events`' change. Events given together must lead to one
 * state (e.g. claim and reclaim: one claim statement for both).
 */
export function sqlTransition(...events: [JobEvent, ...JobEvent[]]): SqlTransition {
  const to = TRANSITIONS[events[0]].to;
  const mixed = events.find((event) => TRANSITIONS[event].to !== to);
  if (mixed) throw new Error(`${events.join(" and ")} lead to different states (${to}, ${TRANSITIONS[mixed].to}): one statement cannot write them`);
  const states = new Set(events.flatMap((event) => TRANSITIONS[event].from));
  const from = JOB_STATES.filter((state) => states.has(state));
  return { from, to, sqlFrom: from.map(sqlState).join(", "), sqlTo: sqlState(to) };
}
