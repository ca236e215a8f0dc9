/**
 * @module
 * The service's error type and its JSON form. Every refusal is an HTTP status, a stable symbolic
 * code, a message a person can act on, and (for request errors) the JSON path of the failing field:
 *
 *   { "error": { "code": "VALIDATION", "message": "...", "path": "/witness", "details": [...] } }
 */

/** One failing field of a request. */
export interface FieldError {
  /** JSON pointer of the field ("" for the whole body; "?name" for a query parameter). */
  path: string;
  message: string;
}

/** An error answered to the client as JSON with `status`. */
export class ServiceError extends Error {
  readonly status: number;
  readonly code: string;
  readonly path: string | undefined;
  readonly details: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, path?: string, options: { details?: FieldError[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = "ServiceError";
    this.status = status;
    this.code = code;
    this.path = path;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  /** The body sent to the client. */
  toJSON(): { error: { code: string; message: string; path?: string; details?: FieldError[] } } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.path !== undefined ? { path: this.path } : {}),
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}

/** The JSON response of an error. */
export function errorResponse(error: ServiceError): Response {
  return Response.json(error.toJSON(), { status: error.status, headers: error.headers });
}
