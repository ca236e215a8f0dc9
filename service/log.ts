/**
 * @module
 * The service's log: one JSON object per line on stdout, with the time and the event's name
 * (`listening`, `key_registered`, `shutdown_started`, `shutdown`, `exit`, ...).
 */

/** Prints one event line. */
export function logEvent(event: string, fields: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ time: new Date().toISOString(), event, ...fields }));
}
