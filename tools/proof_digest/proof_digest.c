// Proves every fixture given on the command line with fixed r, s through a cuzk library chosen at
// run time (dlopen), and prints one line per fixture: its directory and the proof bytes in hex.
// Two libraries' outputs diffed show whether a change left proofs byte-identical (the rule for
// refactors). Usage: proof_digest LIB.so cpu|cuda DIR... (each DIR holds circuit.zkey and
// witness.wtns). Build: cc -O2 -o proof_digest tools/proof_digest/proof_digest.c -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../native/include/cuzk.h"

typedef cuzk_status (*key_open_fn)(const char*, uint32_t, cuzk_key**, char*, size_t);
typedef cuzk_status (*key_close_fn)(cuzk_key*, char*, size_t);
typedef cuzk_status (*ctx_create_fn)(uint32_t, int32_t, uint32_t, uint32_t, cuzk_context**, char*, size_t);
typedef cuzk_status (*ctx_destroy_fn)(cuzk_context*, char*, size_t);
typedef cuzk_status (*prover_create_fn)(cuzk_context*, cuzk_key*, uint32_t, cuzk_prover**, cuzk_progress*, char*,
                                        size_t);
typedef cuzk_status (*prover_destroy_fn)(cuzk_prover*, char*, size_t);
typedef cuzk_status (*prove_fn)(cuzk_prover*, const cuzk_prove_args*, char*, size_t);
/* cuzk_prove of the libraries built before it took cuzk_prove_args (the same ABI version, 3): they
 * export cuzk_prove_list beside it, which tells them apart, so that their proofs can still be diffed. */
typedef cuzk_status (*positional_prove_fn)(cuzk_prover*, const uint8_t*, size_t, uint32_t, size_t, const uint8_t*,
                                           const uint8_t*, uint32_t, uint8_t*, size_t, cuzk_timings*,
                                           cuzk_progress*, char*, size_t);

static void* sym(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  if (!f) { fprintf(stderr, "missing symbol %s\n", name); exit(2); }
  return f;
}

static uint8_t* read_file(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* buf = malloc((size_t)n);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); fclose(f); return NULL; }
  fclose(f);
  *len = (size_t)n;
  return buf;
}

int main(int argc, char** argv) {
  if (argc < 4) { fprintf(stderr, "usage: proof_digest LIB.so cpu|cuda DIR...\n"); return 2; }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 2; }
  key_open_fn key_open = (key_open_fn)sym(lib, "cuzk_key_open");
  key_close_fn key_close = (key_close_fn)sym(lib, "cuzk_key_close");
  ctx_create_fn ctx_create = (ctx_create_fn)sym(lib, "cuzk_context_create");
  ctx_destroy_fn ctx_destroy = (ctx_destroy_fn)sym(lib, "cuzk_context_destroy");
  prover_create_fn prover_create = (prover_create_fn)sym(lib, "cuzk_prover_create");
  prover_destroy_fn prover_destroy = (prover_destroy_fn)sym(lib, "cuzk_prover_destroy");
  void* prove_symbol = sym(lib, "cuzk_prove");
  const int positional = dlsym(lib, "cuzk_prove_list") != NULL;
  uint32_t backend = strcmp(argv[2], "cuda") == 0 ? CUZK_BACKEND_CUDA : CUZK_BACKEND_CPU;
  char err[512];
  cuzk_context* ctx = NULL;
  if (ctx_create(backend, 0, 0, 0, &ctx, err, sizeof err) != CUZK_OK) { fprintf(stderr, "context: %s\n", err); return 1; }
  int failures = 0;
  // Fixed blinding: small values, < r on both curves.
  uint8_t r[32] = {0}, s[32] = {0};
  r[0] = 0x2a; r[7] = 0x11; s[0] = 0x17; s[13] = 0x05;
  for (int i = 3; i < argc; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/circuit.zkey", argv[i]);
    cuzk_key* key = NULL;
    cuzk_prover* prover = NULL;
    if (key_open(path, 0, &key, err, sizeof err) != CUZK_OK) { printf("%s ERROR key %s\n", argv[i], err); failures++; continue; }
    if (prover_create(ctx, key, 0, &prover, NULL, err, sizeof err) != CUZK_OK) {
      printf("%s ERROR prover %s\n", argv[i], err); failures++; key_close(key, err, sizeof err); continue;
    }
    snprintf(path, sizeof path, "%s/witness.wtns", argv[i]);
    size_t wlen = 0;
    uint8_t* w = read_file(path, &wlen);
    uint8_t proof[CUZK_PROOF_BYTES_BLS12_381];
    memset(proof, 0, sizeof proof);
    cuzk_status st = CUZK_ERR_IO;
    if (w && positional) {
      st = ((positional_prove_fn)prove_symbol)(prover, w, wlen, CUZK_WITNESS_WTNS, 1, r, s, 0, proof, sizeof proof, NULL,
                                               NULL, err, sizeof err);
    } else if (w) {
      cuzk_prove_args args;
      memset(&args, 0, sizeof args);
      args.struct_size = sizeof args;
      args.input = CUZK_INPUT_WITNESSES;
      args.witness_format = CUZK_WITNESS_WTNS;
      args.n_proofs = 1;
      args.witness_stride = wlen;
      args.witnesses = w;
      args.r = r;
      args.s = s;
      args.proofs = proof;
      args.proofs_cap = sizeof proof;
      st = ((prove_fn)prove_symbol)(prover, &args, err, sizeof err);
    }
    if (st != CUZK_OK) { printf("%s ERROR prove %d %s\n", argv[i], (int)st, w ? err : "witness unreadable"); failures++; }
    else {
      printf("%s ", argv[i]);
      for (size_t k = 0; k < sizeof proof; k++) printf("%02x", proof[k]);  // BN254 proofs end in zeros
      printf("\n");
    }
    free(w);
    prover_destroy(prover, err, sizeof err);
    key_close(key, err, sizeof err);
  }
  ctx_destroy(ctx, err, sizeof err);
  return failures ? 1 : 0;
}
