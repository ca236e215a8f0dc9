// The tests' cuzk_prove calls: the fields a test varies, as arguments, into one cuzk_prove_args.
// Most tests are about what a proof does, not about the struct; prover_test checks the struct itself.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cuzk.h"

// A cuzk_prove_args with struct_size set and every other field 0 (NULL).
inline cuzk_prove_args prove_args() {
  cuzk_prove_args args{};
  args.struct_size = sizeof args;
  return args;
}

// The fields every input shares.
inline void set_common(cuzk_prove_args& args, size_t n_proofs, const uint8_t* r, const uint8_t* s, uint32_t flags,
                       uint8_t* proofs, size_t proofs_cap, cuzk_timings* timings, cuzk_progress* progress) {
  args.n_proofs = n_proofs;
  args.r = r;
  args.s = s;
  args.flags = flags;
  args.proofs = proofs;
  args.proofs_cap = proofs_cap;
  args.timings = timings;
  args.progress = progress;
}

// CUZK_INPUT_WITNESSES: n_proofs records of `stride` bytes at `witnesses`.
inline cuzk_status prove_call(cuzk_prover* prover, const uint8_t* witnesses, size_t stride, uint32_t format,
                              size_t n_proofs, const uint8_t* r, const uint8_t* s, uint32_t flags, uint8_t* proofs,
                              size_t proofs_cap, cuzk_timings* timings, cuzk_progress* progress, char* err,
                              size_t err_cap) {
  cuzk_prove_args args = prove_args();
  args.input = CUZK_INPUT_WITNESSES;
  args.witnesses = witnesses;
  args.witness_stride = stride;
  args.witness_format = format;
  set_common(args, n_proofs, r, s, flags, proofs, proofs_cap, timings, progress);
  return cuzk_prove(prover, &args, err, err_cap);
}

// CUZK_INPUT_WITNESS_LIST: witness p of `stride` bytes at list[p].
inline cuzk_status prove_call_list(cuzk_prover* prover, const uint8_t* const* list, size_t stride, uint32_t format,
                                   size_t n_proofs, const uint8_t* r, const uint8_t* s, uint32_t flags,
                                   uint8_t* proofs, size_t proofs_cap, cuzk_timings* timings,
                                   cuzk_progress* progress, char* err, size_t err_cap) {
  cuzk_prove_args args = prove_args();
  args.input = CUZK_INPUT_WITNESS_LIST;
  args.witness_list = list;
  args.witness_stride = stride;
  args.witness_format = format;
  set_common(args, n_proofs, r, s, flags, proofs, proofs_cap, timings, progress);
  return cuzk_prove(prover, &args, err, err_cap);
}

// CUZK_INPUT_ABC: evaluations a, b, c and the assignment.
inline cuzk_status prove_call_abc(cuzk_prover* prover, const uint8_t* a, const uint8_t* b, const uint8_t* c,
                                  const uint8_t* assignment, size_t n_proofs, const uint8_t* r, const uint8_t* s,
                                  uint32_t flags, uint8_t* proofs, size_t proofs_cap, cuzk_timings* timings,
                                  cuzk_progress* progress, char* err, size_t err_cap) {
  cuzk_prove_args args = prove_args();
  args.input = CUZK_INPUT_ABC;
  args.a = a;
  args.b = b;
  args.c = c;
  args.assignment = assignment;
  set_common(args, n_proofs, r, s, flags, proofs, proofs_cap, timings, progress);
  return cuzk_prove(prover, &args, err, err_cap);
}
