/**
 * @module
 * Promise: the library loads in every runtime and describes itself; failures to load say what
 * was tried and how to fix it; native errors arrive as CuzkError with a symbolic code and the
 * library's own message.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CuzkError, Library } from "../mod.ts";
import { check, ERROR_BUFFER_BYTES, errorBuffer } from "../src/errors.ts";
import { resolveLibraryPath, runtime } from "../src/ffi/load.ts";
import { ABI, STATUS_NAMES } from "../src/ffi/symbols.ts";
import { library } from "./support/native.ts";

test("the library loads with this runtime's FFI and reports its build", () => {
  const lib = library();
  assert.equal(lib.runtime, runtime);
  const info = lib.info();
  assert.equal(info.abiVersion, ABI.ABI_VERSION);
  assert.ok(info.backends.includes("cpu"), "the CPU backend is always built");
  assert.ok(info.curves.length > 0);
  assert.match(info.version, /^\d+\.\d+\.\d+/);
  assert.ok(info.cpuThreads >= 1);
  if (!info.backends.includes("cuda")) assert.equal(info.cudaDeviceCount, 0);
});

test("devices() lists the usable GPUs, and device() of a missing one throws NO_DEVICE", () => {
  const lib = library();
  const devices = lib.devices();
  assert.equal(devices.length, lib.info().cudaDeviceCount);
  for (const device of devices) {
    assert.ok(device.name.length > 0);
    assert.ok(device.totalMemory > 0);
  }
  assert.throws(() => lib.device(devices.length + 64), (error: unknown) => {
    assert.ok(error instanceof CuzkError);
    assert.equal(error.code, "NO_DEVICE");
    assert.equal(error.status, 9);
    assert.ok(error.nativeMessage.length > 0, "the library wrote a message");
    return true;
  });
});

test("stagingStats() reports the library's own pinned staging: none without a GPU, consistent with one", async () => {
  const lib = library();
  const before = lib.stagingStats();
  for (const v of Object.values(before)) assert.ok(Number.isFinite(v) && v >= 0);
  if (lib.info().cudaDeviceCount === 0) {
    assert.deepEqual(before, { pinnedBytes: 0, allocations: 0, allocMs: 0 });
    return;
  }
  // with a GPU: held bytes imply allocations, and the counters never go backwards
  if (before.pinnedBytes > 0) assert.ok(before.allocations > 0);
  const after = lib.stagingStats();
  assert.ok(after.allocations >= before.allocations && after.allocMs >= before.allocMs);
});

test("status names come from the library for every code", () => {
  const lib = library();
  for (let status = 0; status < STATUS_NAMES.length; status++) {
    const name = lib.statusName(status);
    assert.equal(typeof name, "string");
    assert.ok(name.length > 0, `status ${status} has a name`);
  }
  assert.ok(lib.statusName(9999).length > 0, "an unknown status still has a name");
});

test("a missing library is a LOAD error that lists what was tried and how to build it", () => {
  assert.throws(() => Library.open({ path: "/nonexistent/libcuzk.so" }), (error: unknown) => {
    assert.ok(error instanceof CuzkError);
    assert.equal(error.code, "LOAD");
    assert.match(error.message, /\/nonexistent\/libcuzk\.so/);
    assert.match(error.message, /npm run build/);
    return true;
  });
});

test("the library path comes from the option, then CUZK_LIB, then build/", () => {
  const path = library().path;
  assert.equal(resolveLibraryPath({ path }), path);
});

test("check() turns a status and the native message into a CuzkError", () => {
  const err = errorBuffer();
  assert.equal(err.length, ERROR_BUFFER_BYTES);
  check(0, err); // OK does not throw
  new TextEncoder().encodeInto("constraint 7 is not satisfied\0junk", err);
  assert.throws(() => check(6, err, "cuzk_prove"), (error: unknown) => {
    assert.ok(error instanceof CuzkError);
    assert.equal(error.code, "UNSATISFIED");
    assert.equal(error.nativeMessage, "constraint 7 is not satisfied");
    assert.equal(error.message, "cuzk_prove: constraint 7 is not satisfied");
    assert.equal(error.operation, "cuzk_prove");
    return true;
  });
  assert.throws(() => check(3, new Uint8Array(8)), { code: "FORMAT", message: "status 3 (FORMAT)" });
});
