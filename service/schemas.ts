/**
 * @module
 * Request shapes, as typebox 1.x schemas compiled once at start-up into validators, and `parse`,
 * which turns the first failing field into a 400 naming its JSON path. Names of keys are checked
 * here by pattern (no "..", no leading "/", no backslash); keys.ts checks the resolved file is
 * inside the keys directory as well.
 */
import Type from "typebox";
import type { Static, TSchema } from "typebox";
import { Compile } from "typebox/compile";
import type { Validator } from "typebox/compile";
import { ServiceError } from "./errors.ts";
import type { FieldError } from "./errors.ts";

const KEY_ID_PATTERN = "^[A-Za-z0-9_][A-Za-z0-9_.-]*$";
const KEY_NAME_PATTERN = "^[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$";
/** Job priorities lie in -100..100 (a query string writes them as digits with an optional minus). */
export const PRIORITY_LIMIT = 100;
const PRIORITY_PATTERN = "^-?(100|[1-9]?[0-9])$";
const JOB_ID_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";

/** A key id: what jobs and DELETE /v1/keys/:id name a registered key by. */
export const KeyId = Type.String({ minLength: 1, maxLength: 128, pattern: KEY_ID_PATTERN });

/**
 * A key name: a path relative to the keys directory, in segments of letters, digits, `_`, `-`, `.`
 * that do not start with a dot (so neither ".." nor hidden files), separated by single slashes.
 */
export const KeyName = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: KEY_NAME_PATTERN,
});

export const RegisterKeyBody = Type.Object(
  {
    /** `<name>.zkey` or `<name>/circuit.zkey` inside the keys directory. */
    name: KeyName,
    /** Id to register it under (default: the name with "/" replaced by "."). */
    id: Type.Optional(KeyId),
  },
  { additionalProperties: false },
);
export type RegisterKeyBody = Static<typeof RegisterKeyBody>;

export const SubmitJobBody = Type.Object(
  {
    key: KeyId,
    /** The .wtns file (or n_vars raw 32-byte values), base64. */
    witness: Type.Optional(Type.String({ minLength: 1 })),
    /** Circuit inputs (snarkjs input.json), when the key has a circuit.wasm. */
    input: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** Higher first among a key's queued jobs (PostgreSQL store only). */
    priority: Type.Optional(Type.Integer({ minimum: -PRIORITY_LIMIT, maximum: PRIORITY_LIMIT })),
  },
  { additionalProperties: false },
);
export type SubmitJobBody = Static<typeof SubmitJobBody>;

/** Query of POST /v1/jobs with a binary (.wtns) body. */
export const SubmitJobQuery = Type.Object({ key: KeyId, priority: Type.Optional(Type.String({ pattern: PRIORITY_PATTERN })) }, { additionalProperties: false });

/** Query of GET /v1/jobs/:id/wait. */
export const WaitQuery = Type.Object({ timeout_s: Type.Optional(Type.String({ pattern: "^[0-9]{1,6}$" })) }, { additionalProperties: false });

/** Query of GET /v1/jobs (a listing). */
export const ListJobsQuery = Type.Object(
  {
    state: Type.Optional(Type.Union([Type.Literal("queued"), Type.Literal("running"), Type.Literal("succeeded"), Type.Literal("failed"), Type.Literal("cancelled")])),
    key: Type.Optional(KeyId),
    limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,5}$" })),
  },
  { additionalProperties: false },
);

/** Job ids are UUIDs. */
export const JobId = Type.String({ pattern: JOB_ID_PATTERN });

/** Idempotency-Key header. */
export const IdempotencyKey = Type.String({ minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" });

/** The compiled validators. */
export const validators = {
  registerKey: Compile(RegisterKeyBody),
  submitJob: Compile(SubmitJobBody),
  submitJobQuery: Compile(SubmitJobQuery),
  waitQuery: Compile(WaitQuery),
  listJobsQuery: Compile(ListJobsQuery),
  jobId: Compile(JobId),
  keyId: Compile(KeyId),
  keyName: Compile(KeyName),
  idempotencyKey: Compile(IdempotencyKey),
};

/** Readable messages for the pattern checks (the raw regex is not much help to a client). */
const PATTERN_HINTS = new Map<string, string>([
  [KEY_NAME_PATTERN, "must be a relative path of letters, digits, _ - . (segments may not start with a dot; no \"..\", no leading \"/\")"],
  [KEY_ID_PATTERN, "must be letters, digits, _ - . (not starting with - or .)"],
  [JOB_ID_PATTERN, "must be a job id (a lowercase UUID)"],
  ["^[0-9]{1,6}$", "must be a whole number"],
  ["^[0-9]{1,5}$", "must be a whole number"],
  [PRIORITY_PATTERN, `must be a whole number from -${PRIORITY_LIMIT} to ${PRIORITY_LIMIT}`],
]);

/** The failing fields of `value`, most specific first, without typebox's internal duplicates. */
function fieldErrors(validator: Validator, value: unknown, where: string): FieldError[] {
  const out: FieldError[] = [];
  // Body fields are JSON pointers ("/witness"); query parameters read "?timeout_s".
  const at = (pointer: string) => (where === "?" ? "?" + pointer.replace(/^\//, "") : where + pointer);
  for (const error of validator.Errors(value)) {
    if (error.keyword === "boolean") continue; // additionalProperties: false repeats itself as "schema is false"
    let path = at(error.instancePath);
    let message = error.message;
    const params = error.params as Record<string, unknown>;
    if (error.keyword === "additionalProperties") {
      const names = params.additionalProperties as string[];
      path = at(`${error.instancePath}/${names[0]}`);
      message = `unknown field${names.length > 1 ? "s" : ""} ${names.map((n) => JSON.stringify(n)).join(", ")}`;
    } else if (error.keyword === "required") {
      const names = (params.requiredProperties ?? params.missingProperty ?? []) as string[] | string;
      const list = Array.isArray(names) ? names : [names];
      if (list.length) path = at(`${error.instancePath}/${list[0]}`);
      message = `missing required field${list.length > 1 ? "s" : ""} ${list.map((n) => JSON.stringify(n)).join(", ")}`;
    } else if (error.keyword === "pattern") {
      message = PATTERN_HINTS.get(params.pattern as string) ?? message;
    }
    if (!out.some((e) => e.path === path && e.message === message)) out.push({ path, message });
  }
  return out;
}

/**
 * Returns `value` typed by `validator`'s schema, or throws a 400 whose message and path name the
 * first failing field (all of them in `details`). `where` prefixes the path: "" for a body, "?"
 * for a query string, "header:" for a header.
 */
export function parse<T extends TSchema>(validator: Validator<{}, T>, value: unknown, where = ""): Static<T> {
  if (validator.Check(value)) return value as Static<T>;
  const details = fieldErrors(validator as unknown as Validator, value, where);
  const first = details[0] ?? { path: where, message: "is invalid" };
  const shown = first.path === "" || first.path === "?" ? (where === "?" ? "query string" : "request body") : first.path;
  throw new ServiceError(400, "VALIDATION", `${shown}: ${first.message}`, first.path, { details });
}

/** A query string as an object (the last value of a repeated name wins). */
export function queryObject(url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of url.searchParams) out[name] = value;
  return out;
}
