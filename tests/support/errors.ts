/**
 * @module
 * The matcher the tests give assert.throws / assert.rejects for a refusal: a CuzkError with a
 * given code, and optionally a message that matches a pattern.
 */
import assert from "node:assert/strict";
import { CuzkError } from "../../mod.ts";

/** Passes when `error` is a CuzkError of `code` whose message matches `pattern` (when given). */
export const refusedWith = (code: string, pattern?: RegExp) => (error: unknown): true => {
  assert.ok(error instanceof CuzkError, `a CuzkError, got ${error}`);
  assert.equal(error.code, code, error.message);
  if (pattern) assert.match(error.message, pattern);
  return true;
};
