/**
 * @module
 * Promise: the struct layouts the TypeScript side decodes are the header's. Offsets are computed
 * from cuzk.h's field types with C's natural-alignment rules and compared with src/ffi/structs.ts;
 * the sizes are also checked against the header's documented struct_size and the size the
 * library itself writes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { errorBuffer } from "../src/errors.ts";
import { allocateStruct, decodeStruct, LIBRARY_INFO_LAYOUT, STRUCT_LAYOUTS, TIMINGS_LAYOUT } from "../src/ffi/structs.ts";
import { ABI, PHASE_NAMES } from "../src/ffi/symbols.ts";
import { nativeOf } from "../src/library.ts";
import { decodeTimings } from "../src/timings.ts";
import { headerStructs } from "./support/header.ts";
import { library } from "./support/native.ts";

test("every fixed-layout struct of cuzk.h has a layout table", () => {
  const documented = [...headerStructs().values()].filter((s) => s.documentedSize !== undefined).map((s) => s.name);
  assert.deepEqual(Object.keys(STRUCT_LAYOUTS).sort(), documented.sort());
});

for (const [name, layout] of Object.entries(STRUCT_LAYOUTS)) {
  test(`${name}: offsets and size agree with cuzk.h`, () => {
    const header = headerStructs().get(name);
    assert.ok(header, `${name} not found in cuzk.h`);
    assert.equal(layout.size, header.size, "size computed from the header's fields");
    assert.equal(layout.size, header.documentedSize, "size documented in the header");
    assert.deepEqual(
      Object.entries(layout.fields).map(([field, f]) => [field, f.offset, f.count ?? 1]),
      header.fields.map((f) => [f.name, f.offset, f.count]),
    );
  });
}

test("the library writes the struct_size the tables expect", () => {
  const out = allocateStruct(LIBRARY_INFO_LAYOUT);
  new DataView(out.buffer).setUint32(0, 0, true); // let the library fill it in
  const err = errorBuffer();
  const status = nativeOf(library()).call("cuzk_library_info_get", out, err, err.length);
  assert.equal(status, 0);
  assert.equal(decodeStruct(LIBRARY_INFO_LAYOUT, out).struct_size, LIBRARY_INFO_LAYOUT.size);
});

test("timings records decode into phases by name, in ms, skipping phases that did not run", () => {
  const bytes = allocateStruct(TIMINGS_LAYOUT, 2);
  const view = new DataView(bytes.buffer);
  const base = TIMINGS_LAYOUT.size; // second record
  view.setUint32(base + 4, PHASE_NAMES.length, true);
  view.setUint32(base + 8, ABI.BACKEND_CUDA, true);
  view.setUint32(base + 12, 1, true);
  view.setBigUint64(base + 16, 5_000_000n, true);
  const phase = (index: number, start: bigint, end: bigint) => {
    view.setBigUint64(base + 24 + index * 16, start, true);
    view.setBigUint64(base + 24 + index * 16 + 8, end, true);
  };
  phase(3, 1_000_000n, 2_500_000n); // ntt_h
  phase(8, 2_000_000n, 4_000_000n); // msm_h, overlapping
  const timings = decodeTimings(bytes, 1);
  assert.deepEqual(timings, {
    backend: "cuda",
    proofIndex: 1,
    totalMs: 5,
    phases: { ntt_h: { start: 1, end: 2.5 }, msm_h: { start: 2, end: 4 } },
  });
});
