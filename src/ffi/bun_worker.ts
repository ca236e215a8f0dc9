/**
 * @module
 * The Bun call worker: bun:ffi cannot call a native function off the JS thread, so this Worker
 * opens the library itself (with the definitions of the opener's table: libcuzk.so's, or a witness
 * library's) and runs one blocking call at a time for bun.ts. Arguments arrive as numbers and
 * bigints (addresses included); results go back the same way.
 */
import { loadBunFfi } from "./bun.ts";

interface WorkerScope {
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  postMessage(message: unknown): void;
}
const scope = globalThis as unknown as WorkerScope;

type Functions = Record<string, (...args: unknown[]) => unknown>;
// The listener is attached before any await so that no message is missed; calls wait for init.
let ready: Promise<Functions> = Promise.reject(new Error("cuzk call worker used before init"));
ready.catch(() => {});

scope.addEventListener("message", (event) => {
  const message = event.data as
    | { type: "init"; path: string; definitions: Record<string, { args: string[]; returns: string }> }
    | { type: "call"; id: number; name: string; args: unknown[] };
  if (message.type === "init") {
    ready = Promise.resolve().then(() => loadBunFfi().dlopen(message.path, message.definitions).symbols);
    return;
  }
  ready.then(
    (fns) => {
      try {
        scope.postMessage({ id: message.id, result: fns[message.name](...message.args) });
      } catch (error) {
        scope.postMessage({ id: message.id, error: String((error as Error)?.message ?? error) });
      }
    },
    (error) => scope.postMessage({ id: message.id, error: String((error as Error)?.message ?? error) }),
  );
});
