/**
 * @module
 * Telling "the database cannot be reached now" (the server stopped, restarting or recovering, the
 * connection cut) from a refusal of the statement itself, and the answer the API gives for it: 503
 * DATABASE_UNAVAILABLE with Retry-After. No pg import: the HTTP layer maps errors with it in either
 * mode.
 *
 * The connection failures look like this, by source: node-postgres's own errors have no code
 * ("Connection terminated unexpectedly" when the server closes the socket, "... is not queryable"
 * on a client that already failed, "timeout exceeded when trying to connect" from the pool); the
 * socket's have the errno's name (ECONNREFUSED on TCP, ENOENT for a Unix socket whose file is gone
 * while the server is down, ECONNRESET, EPIPE); the server's own have a SQLSTATE (class 08
 * connection exception, 57P01 admin shutdown as `pg_ctl stop -m fast` sends, 57P02 crash
 * shutdown, 57P03 "the database system is starting up" or in recovery).
 */
import { ServiceError } from "./errors.ts";

/** Errno names of a socket that could not connect or was cut. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTCONN",
  "EAI_AGAIN",
]);

/** SQLSTATEs that say the server is going or not there yet, not that the statement was wrong. */
const SERVER_CODES = new Set(["57P01", "57P02", "57P03"]);

/** node-postgres's and pg-pool's messages for a connection that failed (they carry no code). */
const DRIVER_MESSAGES = /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Connection terminated due to connection timeout)/;

/**
 * The database could not be reached, or the connection was lost, during an operation. `committed`
 * says what is known of a transaction it interrupted: "no" (it failed before COMMIT was sent, so
 * nothing of it was written) or "unknown" (COMMIT was sent and no answer came).
 */
export class DatabaseUnavailableError extends Error {
  readonly committed: "no" | "unknown";
  constructor(cause: unknown, committed: "no" | "unknown" = "no") {
    super(`the database cannot be reached: ${messageOf(cause)}`, { cause });
    this.name = "DatabaseUnavailableError";
    this.committed = committed;
  }
}

const messageOf = (error: unknown) => String((error as Error)?.message ?? error);

/** Whether `error` (or what it wraps) is a lost or refused connection rather than a statement's error. */
export function isConnectionError(error: unknown, depth = 0): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (!error || typeof error !== "object" || depth > 4) return false;
  const { code, syscall, message, cause, errors } = error as { code?: unknown; syscall?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === "string") {
    if (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    // A file error is not the database's (a witness file missing is ENOENT too): only a connect's.
    if (code === "ENOENT" && syscall === "connect") return true;
  }
  if (typeof message === "string" && DRIVER_MESSAGES.test(message)) return true;
  if (Array.isArray(errors) && errors.some((inner) => isConnectionError(inner, depth + 1))) return true;
  return cause !== undefined && cause !== error && isConnectionError(cause, depth + 1);
}

/** Seconds a client is told to wait before retrying while the database is unreachable. */
export const DATABASE_RETRY_AFTER_S = 2;

/** The API's answer to a connection failure: 503 DATABASE_UNAVAILABLE, Retry-After. */
export function databaseUnavailable(error: unknown, message?: string): ServiceError {
  const text = message ?? `the database cannot be reached (${messageOf((error as Error)?.cause ?? error)}); retry in a few seconds`;
  return new ServiceError(503, "DATABASE_UNAVAILABLE", text, undefined, { headers: { "Retry-After": String(DATABASE_RETRY_AFTER_S) } });
}

/** Backoff for retries against the database: 250 ms doubling to `maxMs`, with a little jitter so processes do not retry in step. */
export function backoffMs(failures: number, maxMs = 5000, minMs = 250): number {
  const base = Math.min(maxMs, minMs * 2 ** Math.max(0, Math.min(failures - 1, 16)));
  return Math.round(base * (0.85 + Math.random() * 0.15));
}
