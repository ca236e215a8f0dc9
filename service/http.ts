/**
 * @module
 * The HTTP plumbing the routes share: the route types, bodies read as streams with a running size
 * check, JSON and base64 decoding with errors that name the problem, the bearer-token check, and
 * any error as a ServiceError. Nothing here knows keys or jobs.
 */
import { Buffer } from "node:buffer";
import { createHash, timingSafeEqual } from "node:crypto";
import { databaseUnavailable, isConnectionError } from "./db_errors.ts";
import { ServiceError } from "./errors.ts";

/** A request as Bun's routes pass it: the path parameters in `params`. */
export type RouteRequest = Request & { params: Record<string, string> };
/** A route's handler; `url` is the parsed request URL. */
export type Handler = (req: RouteRequest, url: URL) => Response | Promise<Response>;
/** The handlers of one path, by method. */
export type Methods = Partial<Record<"GET" | "POST" | "DELETE", Handler>>;
/** Paths and their handlers. */
export type Routes = Record<string, Methods>;

export const JSON_TYPES = /^application\/json\b/i;
export const BINARY_TYPES = /^application\/(octet-stream|vnd\.snarkjs\.wtns)\b/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Reads a body of at most `limit` bytes, refusing as soon as it is exceeded (declared or streamed). */
export async function readBody(req: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = (size: string) => new ServiceError(413, "BODY_TOO_LARGE", `the request body (${size}) exceeds the limit of ${limit} bytes`);
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(`${declared} bytes`);
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(`more than ${limit} bytes`);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** The body as JSON (content type checked, syntax errors quoted). */
export async function readJson(req: Request, limit: number): Promise<unknown> {
  const type = req.headers.get("content-type") ?? "";
  if (!JSON_TYPES.test(type)) {
    throw new ServiceError(415, "UNSUPPORTED_MEDIA_TYPE", `expected Content-Type: application/json, got ${type ? JSON.stringify(type) : "none"}`);
  }
  const bytes = await readBody(req, limit);
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new ServiceError(400, "BAD_JSON", `the request body is not valid JSON: ${(error as Error).message}`, "");
  }
}

/** Standard padded base64, else a 400 naming the field at `path`. */
export function decodeBase64(text: string, path: string): Uint8Array {
  if (text.length % 4 !== 0 || !BASE64.test(text)) {
    throw new ServiceError(400, "BAD_BASE64", `${path}: not valid base64 (standard alphabet A-Z a-z 0-9 + /, padded with = to a multiple of 4 characters)`, path);
  }
  return new Uint8Array(Buffer.from(text, "base64"));
}

/**
 * The check of `Authorization: Bearer <token>` (a no-op without a token). Tokens are compared as
 * SHA-256 digests in constant time, so neither their length nor their prefix leaks.
 */
export function bearerAuth(token: string): (req: Request) => void {
  if (!token) return () => {};
  const expected = createHash("sha256").update(token).digest();
  const challenge = { headers: { "WWW-Authenticate": 'Bearer realm="cuzk"' } };
  return (req) => {
    const header = req.headers.get("authorization") ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new ServiceError(401, "UNAUTHORIZED", header ? "the Authorization header must be \"Bearer <token>\"" : "this service needs a bearer token (Authorization: Bearer <token>)", "header:Authorization", challenge);
    const given = createHash("sha256").update(match[1]).digest();
    if (!timingSafeEqual(given, expected)) throw new ServiceError(401, "UNAUTHORIZED", "the bearer token is not valid", "header:Authorization", challenge);
  };
}

/**
 * The request's URL. Bun passes an HTTP/1.0 request without a Host header with its bare path as
 * `req.url` ("/healthz"), which is no URL on its own: such a path is read against a placeholder
 * origin (the routes use only the path and the query).
 */
export function requestUrl(req: Request): URL {
  return req.url.startsWith("/") ? new URL(`http://localhost${req.url}`) : new URL(req.url);
}

/**
 * Any error as a ServiceError: a lost or refused database connection as 503
 * DATABASE_UNAVAILABLE with Retry-After (the request can be made again once the database is
 * back), other unexpected ones as 500 with their message.
 */
export function toServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  if (isConnectionError(error)) return databaseUnavailable(error);
  const message = String((error as Error)?.message ?? error);
  return new ServiceError(500, "INTERNAL", message);
}
