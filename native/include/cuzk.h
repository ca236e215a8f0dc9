/*
 * cuzk.h: the whole public C ABI of the cuzk Groth16 prover.
 *
 * Rules every function follows (so that every FFI, including Bun's, can drive it):
 *  - Only scalars, pointers and sizes cross the boundary; no struct is passed by value.
 *  - Every fallible function returns a cuzk_status. Its message is copied into the caller's
 *    `err` buffer (may be NULL; always NUL-terminated when err_cap > 0). Nothing is thread-local,
 *    so a call made on a worker thread (Deno nonblocking, koffi async) still reports its error.
 *  - Outputs go to caller-provided memory; sizes are passed in and checked
 *    (CUZK_ERR_SHORT_BUFFER when too small). Nothing returned must be freed with a foreign
 *    allocator; handles are opaque and released by their own *_close / *_destroy function,
 *    which accept NULL.
 *  - Fixed-layout structs written by the library start with `struct_size`, are made of naturally
 *    aligned 32/64-bit fields only, and have their offsets checked by static_assert in the library
 *    and by the TypeScript tests. The library writes `struct_size` (and every other field) itself:
 *    the caller passes memory of at least that size and need not initialise it. Structs the
 *    library reads (cuzk_prover_options, cuzk_prove_args) follow the same rules, with struct_size
 *    set by the caller, and are passed by pointer.
 *
 * Threads (every function may be called from any thread):
 *  - Calls on one prover (cuzk_prove) are serialised by the library: a second call
 *    made while one runs waits for it (the prover owns one workspace).
 *  - Different provers, and different contexts, may run concurrently. They share the machine:
 *    CPU contexts created with cpu_threads = 0 share one thread pool, whose parallel sections run
 *    one at a time; a context with its own thread count has its own pool.
 *  - Standalone kernels (cuzk_msm, cuzk_ntt) are serialised per context.
 *  - Keys are read-only once opened and may be shared by provers on several threads.
 *  - A handle or buffer must not be closed, destroyed or freed while a call uses it; the
 *    close and destroy functions refuse (CUZK_ERR_BUSY) while dependent handles exist, but cannot
 *    see a call in flight on another thread (the TypeScript layer tracks those).
 *
 * Encodings:
 *  - "key encoding": what a snarkjs .zkey stores: affine points, each coordinate n8q bytes,
 *    little-endian, Montgomery form; a G2 coordinate is c0 then c1; all-zero bytes = infinity.
 *  - "output encoding": affine points, coordinates little-endian in standard (non-Montgomery)
 *    form, same order as above; all-zero bytes = infinity. Proofs use this encoding.
 *  - Field elements of Fr (scalars, witness values): 32 bytes little-endian, standard form,
 *    as in a .wtns file.
 *
 * Verification is native (pairing check in the library) so that a proof can be self-checked
 * wherever it is made (CPU, GPU, service) without a round trip through JavaScript; the tests
 * also check proofs with snarkjs itself, which is the reference verifier.
 *
 * Sections, in order: the library (versions, status codes, curves, devices); contexts; keys
 * (open, facts, .r1cs, the witness check, verification key, close); provers (options, create,
 * memory plan, destroy); proving (timings, flags, cuzk_prove_args, cuzk_prove);
 * verification; kernels (MSM, NTT); host memory; synthetic circuits and the development setup;
 * progress and cancellation. Each flag is defined just before the function that takes it.
 */
#ifndef CUZK_H
#define CUZK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define CUZK_API __declspec(dllexport)
#else
#define CUZK_API __attribute__((visibility("default")))
#endif

/* Bumped on every incompatible change of a signature, enum value or struct layout.
 *  2: cuzk_progress parameter, CUZK_ERR_CANCELLED.
 *  3: one witness check entry point with flags (cuzk_key_check_witness, CUZK_CHECK_SCAN);
 *     cuzk_prover_options grew h_copies and the CUZK_PROVER_* flags; CUZK_CONTEXT_G2_ON_CPU;
 *     one proving entry point, cuzk_prove, taking a cuzk_prove_args struct (cuzk_prove_list and
 *     cuzk_prove_abc are its inputs CUZK_INPUT_WITNESS_LIST and CUZK_INPUT_ABC);
 *     the header ordered by topic.
 *  4: cuzk_prover_options memory and host budgets, chunk_points; cuzk_memory_plan, cuzk_plan_memory.
 *  5: cuzk_memory_plan.points_pinned (all or none) became pinned_sections (a mask of sections).
 *  6: cuzk_memory_plan grew h_chunk_points and h_window_groups (416 bytes). */
#define CUZK_ABI_VERSION 6

/* Defined in the last section; taken by the long calls of the sections before it. */
typedef struct cuzk_progress cuzk_progress;

/* ---------------------------------------------------------------------------------------------
 * The library: status codes, curves and backends, what was compiled in, GPUs.
 * ------------------------------------------------------------------------------------------- */
typedef enum cuzk_status {
  CUZK_OK = 0,
  CUZK_ERR_INVALID_ARGUMENT = 1, /* a NULL/out-of-range argument, unknown flag or enum value */
  CUZK_ERR_IO = 2,               /* a file could not be opened, read or mapped */
  CUZK_ERR_FORMAT = 3,           /* a .zkey/.wtns/.r1cs is malformed (magic, sizes, bounds) */
  CUZK_ERR_CURVE_MISMATCH = 4,   /* files or arguments belong to different curves/fields */
  CUZK_ERR_WITNESS_LENGTH = 5,   /* witness length differs from the key's variable count */
  CUZK_ERR_UNSATISFIED = 6,      /* witness does not satisfy the constraints (message names the first) */
  CUZK_ERR_SHORT_BUFFER = 7,     /* an output buffer is too small */
  CUZK_ERR_UNSUPPORTED = 8,      /* backend, curve or feature not compiled in */
  CUZK_ERR_NO_DEVICE = 9,        /* no usable GPU (no driver, no device, bad index) */
  CUZK_ERR_DEVICE = 10,          /* a GPU call or kernel failed */
  CUZK_ERR_OUT_OF_MEMORY = 11,   /* host or device allocation failed */
  CUZK_ERR_BUSY = 12,            /* the object is in use by a running call */
  CUZK_ERR_SELF_CHECK = 13,      /* a proof made by the library failed its own verification */
  CUZK_ERR_INTERNAL = 14,        /* a bug: please report the message */
  CUZK_ERR_CANCELLED = 15        /* the caller asked the call to stop (cuzk_progress.cancel) */
} cuzk_status;

typedef enum cuzk_curve {
  CUZK_CURVE_BN254 = 1,     /* a.k.a. bn128, alt_bn128: circom's default */
  CUZK_CURVE_BLS12_381 = 2  /* Filecoin */
} cuzk_curve;

typedef enum cuzk_backend {
  CUZK_BACKEND_AUTO = 0, /* CUDA when compiled in and a device is usable, else CPU */
  CUZK_BACKEND_CPU = 1,
  CUZK_BACKEND_CUDA = 2
} cuzk_backend;

/* Sizes of the fixed-layout encodings. */
#define CUZK_FR_BYTES 32u
#define CUZK_PROOF_BYTES_BN254 256u     /* A (64) | B (128) | C (64) */
#define CUZK_PROOF_BYTES_BLS12_381 384u /* A (96) | B (192) | C (96) */

/* Bits of cuzk_library_info.backends and .curves */
#define CUZK_HAS_CPU 0x1u
#define CUZK_HAS_CUDA 0x2u
#define CUZK_HAS_BN254 0x1u
#define CUZK_HAS_BLS12_381 0x2u

typedef struct cuzk_library_info {
  uint32_t struct_size; /* = sizeof(cuzk_library_info) = 64 */
  uint32_t abi_version; /* CUZK_ABI_VERSION of the library */
  uint32_t backends;    /* CUZK_HAS_CPU | CUZK_HAS_CUDA compiled in */
  uint32_t curves;      /* CUZK_HAS_BN254 | CUZK_HAS_BLS12_381 */
  uint32_t cpu_threads; /* online CPUs: the threads of the shared CPU pool, and the most cpu_threads
                           cuzk_context_create / cuzk_setup_insecure_dev accept */
  uint32_t cuda_device_count; /* usable GPUs now (0 without driver or device) */
  uint32_t cuda_runtime_version; /* e.g. 13000; 0 if CUDA not compiled in */
  uint32_t cuda_driver_version;  /* 0 when no driver */
  char version[32];     /* library version string, NUL-terminated */
} cuzk_library_info;

typedef struct cuzk_device_info {
  uint32_t struct_size; /* = sizeof(cuzk_device_info) = 296 */
  int32_t index;
  uint32_t cc_major;
  uint32_t cc_minor;
  uint32_t sm_count;
  uint32_t reserved;
  uint64_t total_memory;
  uint64_t free_memory;
  char name[256];
} cuzk_device_info;

/* Always succeeds. */
CUZK_API uint32_t cuzk_abi_version(void);
CUZK_API cuzk_status cuzk_library_info_get(cuzk_library_info* out, char* err, size_t err_cap);
/* Describes GPU `index`; CUZK_ERR_NO_DEVICE when there is no such device. */
CUZK_API cuzk_status cuzk_device_info_get(int32_t index, cuzk_device_info* out, char* err, size_t err_cap);
/* The fixed message for a status code (static storage, never NULL). */
CUZK_API const char* cuzk_status_name(int32_t status);

/* ---------------------------------------------------------------------------------------------
 * Contexts: one backend on one device (CPU thread pool, or a GPU with its streams and pools).
 * No work of a context ever runs on another device.
 * ------------------------------------------------------------------------------------------- */
typedef struct cuzk_context cuzk_context;

/* cuzk_context_create flag, CUDA backend: the B2 (G2) MSM of a key in memory runs on the CPU pool,
 * beside the GPU's work, instead of on the GPU (its points then take no device memory; a key whose
 * points are not in memory keeps it on the GPU). Off by default; the proofs are the same. */
#define CUZK_CONTEXT_G2_ON_CPU 0x1u

/* backend: cuzk_backend; flags: 0 or CUZK_CONTEXT_G2_ON_CPU (other bits: CUZK_ERR_INVALID_ARGUMENT).
 * device: GPU index >= 0 (not used by the CPU backend, but a negative index is refused on every
 *   backend: CUZK_ERR_INVALID_ARGUMENT); no such GPU is CUZK_ERR_NO_DEVICE for CUZK_BACKEND_CUDA
 *   (AUTO then takes the CPU).
 * cpu_threads: 0 = the shared pool (every core); n > 0 a pool of its own of exactly n threads, at most
 *   cuzk_library_info.cpu_threads (the online CPUs): more is CUZK_ERR_INVALID_ARGUMENT, and a thread
 *   the OS refuses to start is CUZK_ERR_OUT_OF_MEMORY (nothing is left running). */
CUZK_API cuzk_status cuzk_context_create(uint32_t backend, int32_t device, uint32_t cpu_threads, uint32_t flags,
                                         cuzk_context** out, char* err, size_t err_cap);
/* The backend actually chosen (resolves AUTO). */
CUZK_API uint32_t cuzk_context_backend(const cuzk_context* ctx);
CUZK_API cuzk_status cuzk_context_destroy(cuzk_context* ctx, char* err, size_t err_cap);

/* ---------------------------------------------------------------------------------------------
 * Proving keys (.zkey), read whole into memory the key owns (large sequential reads into huge
 * pages), so that nothing done to the file or the caller's buffer after open can change or fault a
 * proof: a key file truncated or rewritten in place, or a freed buffer, does not affect an open key.
 * Every header is checked: magic, protocol, prime, section sizes against the file size, counts
 * against each other. A key takes its file's size in memory (plus the A/B rows of each prover).
 * ------------------------------------------------------------------------------------------- */
typedef struct cuzk_key cuzk_key;

/* Flags of cuzk_key_open / cuzk_key_open_memory. */
#define CUZK_KEY_SKIP_POINT_CHECKS 0x1u /* trust the key: skip the on-curve check of every point
                                           (saves ~0.1 s per million points at open time) */
/* cuzk_key_open flag: keep the headers, IC and coefficients in memory and leave the point sections
 * (A, B1, B2, C, H: most of a key) in the file, read from it when a prover is made (and for every
 * read of a section the prover streams). The file stays open and must stay as it was: a change of
 * its size or modification time since open is CUZK_ERR_IO at the next read (never a fault: the key
 * is read, not mapped). The point checks at open read the points in chunks. cuzk_key_open_memory
 * refuses this flag (CUZK_ERR_INVALID_ARGUMENT). */
#define CUZK_KEY_POINTS_ON_DEMAND 0x2u

/* Opens and checks a .zkey file: headers, sizes, coefficients and (unless skipped) that every
 * point lies on its curve, so a corrupted key fails here instead of yielding wrong proofs.
 * Returns: CUZK_OK (*out set; on any failure *out = NULL);
 *   CUZK_ERR_INVALID_ARGUMENT  path or out NULL, unknown flags;
 *   CUZK_ERR_IO                the file cannot be opened or read, is not a regular file (a directory,
 *                              FIFO or device such as /dev/zero is refused before any read), or
 *                              changes size while it is read;
 *   CUZK_ERR_FORMAT            empty or malformed .zkey (magic, version, sections, sizes, counts,
 *                              coefficients), or a point off its curve (message names section and index);
 *   CUZK_ERR_CURVE_MISMATCH    the key's primes are not those of BN254 or BLS12-381;
 *   CUZK_ERR_UNSUPPORTED       a protocol other than Groth16 (PLONK, FFLONK keys);
 *   CUZK_ERR_OUT_OF_MEMORY     the file is larger than this machine's physical memory (checked
 *                              before reading), or host memory ran out. */
CUZK_API cuzk_status cuzk_key_open(const char* path, uint32_t flags, cuzk_key** out, char* err, size_t err_cap);
/* Same over bytes in memory, which are copied: the caller may free or reuse them once this returns.
 * Returns: as cuzk_key_open (data NULL is CUZK_ERR_INVALID_ARGUMENT; never CUZK_ERR_IO). */
CUZK_API cuzk_status cuzk_key_open_memory(const uint8_t* data, size_t len, uint32_t flags, cuzk_key** out,
                                          char* err, size_t err_cap);

typedef struct cuzk_key_info {
  uint32_t struct_size;   /* = sizeof(cuzk_key_info) = 64 */
  uint32_t curve;         /* cuzk_curve */
  uint32_t n_vars;        /* witness length, w[0] = 1 included */
  uint32_t n_public;      /* public signals (outputs + public inputs), w[1..n_public] */
  uint32_t n_constraints; /* R1CS rows (derived from the coefficient section) */
  uint32_t domain_size;   /* NTT size, a power of two >= n_constraints + n_public + 1 */
  uint32_t log_domain;
  uint32_t n_coefs;       /* A and B coefficients in the key */
  uint32_t fq_bytes;      /* 32 (BN254) or 48 (BLS12-381) */
  uint32_t proof_bytes;   /* CUZK_PROOF_BYTES_* */
  uint32_t vk_bytes;      /* bytes cuzk_key_export_vk writes */
  uint32_t has_r1cs;      /* 1 after cuzk_key_attach_r1cs */
  uint64_t file_bytes;
  uint64_t open_ns;       /* time spent mapping and checking the file */
} cuzk_key_info;

/* The key's facts, written whole to *out. */
CUZK_API cuzk_status cuzk_key_get_info(const cuzk_key* key, cuzk_key_info* out, char* err, size_t err_cap);
/* Attaches the circuit's .r1cs so that witnesses are checked constraint by constraint before proving
 * (and so that a failed self-check can say whether the witness or the key is at fault).
 * Checked against the key: same prime, same variable, public and constraint counts. The file is
 * read whole into memory the key owns, with the checks and codes of cuzk_key_open (CUZK_ERR_IO,
 * CUZK_ERR_FORMAT, CUZK_ERR_OUT_OF_MEMORY); CUZK_ERR_CURVE_MISMATCH or CUZK_ERR_INVALID_ARGUMENT
 * when it belongs to another circuit; CUZK_ERR_BUSY while provers use the key. */
CUZK_API cuzk_status cuzk_key_attach_r1cs(cuzk_key* key, const char* r1cs_path, char* err, size_t err_cap);

/* Witness layouts accepted by cuzk_key_check_witness and cuzk_prove. */
typedef enum cuzk_witness_format {
  CUZK_WITNESS_RAW = 0,  /* n_vars Fr values, 32 bytes each (standard form, LE), w[0] = 1 */
  CUZK_WITNESS_WTNS = 1  /* the bytes of a snarkjs .wtns file */
} cuzk_witness_format;

/* What a witness check found, as data: the facts its messages word (a caller words its own refusals
 * from these, not from the message text). Filled by cuzk_key_check_witness on CUZK_OK and on a
 * refusal, as far as the check got before it stopped; a fact not reached keeps its "unknown" value. */
typedef struct cuzk_witness_check {
  uint32_t struct_size;      /* set by the caller: sizeof(cuzk_witness_check) = 32 */
  uint32_t witness_curve;    /* cuzk_curve the .wtns prime names; 0 for raw, or a prime (or value
                                size) of no supported curve, or a header not read */
  uint64_t values;           /* values the witness holds: the .wtns count, or witness_len / 32 for raw
                                (rounded down); 0 when the .wtns header was not read */
  uint64_t first_bad_index;  /* index of the first value not < r; UINT64_MAX when every value is < r
                                or the scan was not made (no CUZK_CHECK_SCAN, or a refusal before it) */
  uint64_t values_offset;    /* byte offset of w[0] inside `witness` once the layout passed (0 for
                                raw, and 0 before) */
} cuzk_witness_check;

/* cuzk_key_check_witness flag: also scan every value < r (O(n_vars): ~7 ms at 2^24 on 16 cores).
 * Without it only the O(1) checks are made: cuzk_prove makes the scan itself, on its pool, beside
 * the previous proof of a batch, so a caller that checks a witness before queueing it need not
 * pay for the scan twice. */
#define CUZK_CHECK_SCAN 0x1u

/* Checks one witness against the key without proving: the checks cuzk_prove makes before any work
 * (one implementation, shared with cuzk_prove): the .wtns header and its prime against the key's
 * curve, the value count against the key's n_vars, w[0] = 1, and with CUZK_CHECK_SCAN every value
 * < r. It does not check the constraints of an attached .r1cs (cuzk_prove does that next, and
 * times it as CUZK_PHASE_WITNESS_CHECK).
 * witness_format: CUZK_WITNESS_WTNS or CUZK_WITNESS_RAW (n_vars * 32 bytes, standard-form LE).
 * flags: 0 or CUZK_CHECK_SCAN.
 * out: NULL, or a cuzk_witness_check whose struct_size the caller set: receives what the check
 *   found (see cuzk_witness_check; values_offset is where the n_vars raw 32-byte values start
 *   inside `witness`, 0 for CUZK_WITNESS_RAW) on CUZK_OK and on every refusal but those of
 *   out->struct_size and flags, which leave it unwritten; struct_size is left as the caller set it.
 * Returns: CUZK_OK;
 *   CUZK_ERR_INVALID_ARGUMENT  key NULL, witness NULL with witness_len > 0, unknown witness_format,
 *                              out->struct_size < 32, unknown flags, a value not < r (with
 *                              CUZK_CHECK_SCAN; the message names its index);
 *   CUZK_ERR_FORMAT            malformed .wtns (magic, version, sections, sizes, n8 not a field size);
 *   CUZK_ERR_CURVE_MISMATCH    the .wtns is over another prime field (message names both), including
 *                              values of another plausible field size (n8 = 8..64, a multiple of 8, not 32);
 *   CUZK_ERR_WITNESS_LENGTH    value count (or raw length) differs from the key's n_vars, or
 *                              witness_len is 0 (an empty witness);
 *   CUZK_ERR_UNSATISFIED       w[0] != 1 (the constant wire). */
CUZK_API cuzk_status cuzk_key_check_witness(const cuzk_key* key, const uint8_t* witness, size_t witness_len,
                                            uint32_t witness_format, uint32_t flags, cuzk_witness_check* out,
                                            char* err, size_t err_cap);

/* Writes the verification key: alpha1 (G1) | beta2 (G2) | gamma2 (G2) | delta2 (G2) |
 * IC[0..n_public] (G1), output encoding. *out_len receives the size (also when too short).
 * To ask the size, call it with out = NULL, out_cap = 0: it returns CUZK_ERR_SHORT_BUFFER with
 * *out_len set (cuzk_key_info.vk_bytes holds the same number). */
CUZK_API cuzk_status cuzk_key_export_vk(const cuzk_key* key, uint8_t* out, size_t out_cap, size_t* out_len,
                                        char* err, size_t err_cap);
/* Writes e(alpha1, beta2), snarkjs's vk_alphabeta_12 of verification_key.json, as snarkjs computes it
 * (its final exponentiation, a fixed power of the reduced pairing that cuzk_verify uses: BN254
 * 2x(6x^2 + 3x + 1), BLS12-381 3). 12 Fq coefficients, standard form LE, cuzk_key_info.fq_bytes
 * each: Fq12 = Fq6[w]/(w^2 - v), Fq6 = Fq2[v]/(v^3 - xi), Fq2 = Fq[u]/(u^2 + 1), in the order
 * c0.c0.c0, c0.c0.c1, c0.c1.c0, ..., c1.c2.c1 (c<w power><v power><u power>), which is snarkjs's
 * JSON [[[c000, c001], [c010, c011], [c020, c021]], [[c100, c101], [c110, c111], [c120, c121]]].
 * Size protocol as cuzk_key_export_vk (out = NULL, out_cap = 0 asks it). One pairing: a few ms.
 * Returns: CUZK_OK;
 *   CUZK_ERR_INVALID_ARGUMENT  key NULL;
 *   CUZK_ERR_SHORT_BUFFER      out NULL or out_cap < 12 * fq_bytes (*out_len set, out untouched);
 *   CUZK_ERR_FORMAT            the key's alpha1 or beta2 is outside its order-r subgroup. */
CUZK_API cuzk_status cuzk_key_export_vk_alphabeta(const cuzk_key* key, uint8_t* out, size_t out_cap, size_t* out_len,
                                                  char* err, size_t err_cap);
/* Releases the key. Fails with CUZK_ERR_BUSY while a prover made from it still exists. */
CUZK_API cuzk_status cuzk_key_close(cuzk_key* key, char* err, size_t err_cap);

/* ---------------------------------------------------------------------------------------------
 * Provers: a key bound to a context, with the workspace that repeated proofs reuse
 * (nothing is allocated per proof after the first call of a given batch size).
 * Calls on one prover run one at a time (a second call waits); see "Threads" above.
 * ------------------------------------------------------------------------------------------- */
typedef struct cuzk_prover cuzk_prover;

/* The key memory plan: points at infinity are not stored, each point section is resident in
 * the engine's memory or streamed in as a budget allows, and a key may leave its point sections in
 * its file. A batch reads each streamed section once per group of proofs (all the group's MSMs of
 * that section from one read): as many proofs as the room the budget leaves after the plan keeps
 * their scalars for (CPU: domain_size x 32 bytes a proof when H streams; CUDA: that on the device,
 * and n_vars x 32 more when A, B1, B2 or C streams); with room for fewer than two, once per proof. */

/* cuzk_prover_options.flags (each off by default; none changes a proof's bytes). */
#define CUZK_PROVER_STREAM_ALL 0x1u       /* every point section the engine holds is streamed, none
                                             resident (tests and measurements of the streamed path) */
#define CUZK_PROVER_STREAM_PER_PROOF 0x2u /* a batch reads each streamed section once per proof, not
                                             once per group of proofs (measurements) */
#define CUZK_PROVER_KEEP_INFINITY 0x4u    /* CUDA: store the key's points at infinity too, instead of
                                             only the others (measurements) */
#define CUZK_PROVER_STREAM_ROWS 0x8u      /* CUDA: read the A/B rows in chunks per proof from a pinned
                                             host copy even when the budget holds them (tests and
                                             measurements; a budget too small for them does so anyway) */
#define CUZK_PROVER_OVERLAP 0x10u         /* CUDA: where the room the plan leaves holds a second proof's
                                             witness and NTT vectors, a batch runs proof p+1's upload,
                                             a/b/c and NTTs beside proof p's MSMs (measurements: on an
                                             H200 the MSMs slowed by about the time the NTTs hid, and
                                             the room it takes is the H copies'; off, overlap_bytes 0) */
#define CUZK_CHUNK_POINTS_MIN (1u << 10)  /* cuzk_prover_options.chunk_points bounds */
#define CUZK_CHUNK_POINTS_MAX (1u << 31)
#define CUZK_H_COPIES_AUTO (-1)           /* cuzk_prover_options.h_copies: the engine chooses */
#define CUZK_H_COPIES_MAX 64

typedef struct cuzk_prover_options {
  uint32_t struct_size;   /* set by the caller: sizeof(cuzk_prover_options) = 40, or 16 or 24 (the
                             fields before h_copies, or before host_memory_budget, only: the others
                             take their defaults) */
  uint32_t flags;         /* CUZK_PROVER_* */
  uint64_t memory_budget; /* bytes of the engine's memory (CUDA: device; CPU: host) the prover may
                             take for the key's rows, points and the proving workspace; 0 = automatic
                             (CUDA: the device's free memory; CPU: physical memory). A key that does
                             not fit even with every section streamed is CUZK_ERR_OUT_OF_MEMORY, with
                             the sizes and the budget in the message, before anything is allocated. */
  int32_t h_copies;       /* CUDA: precomputed copies of the H points, made when the prover is made
                             (msm_h then reduces fewer windows): CUZK_H_COPIES_AUTO (the default: as
                             many as the memory the plan leaves allows, from 2^16 H points; ~2 s of
                             prover creation at 2^24, so a process that makes one proof passes 0),
                             0 or 1 = none, 2..CUZK_H_COPIES_MAX = that many where they fit (fewer
                             where a window cannot give them). Other values: CUZK_ERR_INVALID_ARGUMENT.
                             The CPU engine ignores it. */
  uint32_t reserved;      /* 0 */
  uint64_t host_memory_budget; /* host bytes the plan may take beyond the key: pinned copies of
                             streamed points, the H scalars a group of proofs keeps; 0 = automatic
                             (CUDA: three quarters of physical memory; the CPU engine's budget is
                             memory_budget). A batch whose kept scalars do not fit proves in groups. */
  uint32_t chunk_points;  /* points per MSM chunk and streamed chunk: 0 = the plan chooses (one chunk
                             when the budget allows); else a power of two from CUZK_CHUNK_POINTS_MIN
                             to CUZK_CHUNK_POINTS_MAX (tests and measurements) */
  uint32_t reserved2;     /* 0 */
} cuzk_prover_options;

/* Makes a prover with every default (cuzk_prover_create_with takes options). flags: 0 (other
 * values: CUZK_ERR_INVALID_ARGUMENT).
 * progress: NULL or a cuzk_progress (stage CUZK_STAGE_KEY_UPLOAD, units: bytes of key rows and
 * points the engine uploads, counted as each chunk of points lands; on the CPU backend the resident
 * points of a key whose points are not in memory (on demand, or made in memory), 0 of 0 for a key
 * read whole, which it reads in place). Cancellation is checked at the start, after every chunk and
 * at the end: CUZK_ERR_CANCELLED, no prover (what was allocated is freed). */
CUZK_API cuzk_status cuzk_prover_create(cuzk_context* ctx, cuzk_key* key, uint32_t flags, cuzk_prover** out,
                                        cuzk_progress* progress, char* err, size_t err_cap);
/* cuzk_prover_create with options (NULL: as cuzk_prover_create, every default). struct_size not
 * 16, 24 or >= 40, unknown flags, h_copies or chunk_points out of range, reserved fields not 0:
 * CUZK_ERR_INVALID_ARGUMENT. */
CUZK_API cuzk_status cuzk_prover_create_with(cuzk_context* ctx, cuzk_key* key, const cuzk_prover_options* options,
                                             cuzk_prover** out, cuzk_progress* progress, char* err, size_t err_cap);

#define CUZK_POINT_SECTIONS 5 /* A, B1, B2, C, H: the index of the arrays below */
#define CUZK_PLACEMENT_IN_KEY 1   /* read in place from the key's memory (CPU engine, key in memory) */
#define CUZK_PLACEMENT_RESIDENT 2 /* stored once in the engine's memory */
#define CUZK_PLACEMENT_STREAMED 3 /* read in chunks, once per group of a batch's proofs (or per proof) */

/* An engine's memory plan. Every large buffer has a chunked form the plan may choose: the MSMs run
 * over chunks of msm_chunk_points points (their scratch sized by the chunk, partial sums added),
 * a streamed section comes up chunk by chunk into two chunk buffers (from pinned host memory when
 * host_budget holds it, else from the key: the plan chooses which sections to pin). Of the plans
 * that fit the budget, the one predicted to cost the least time per proof. */
typedef struct cuzk_memory_plan {
  uint32_t struct_size;              /* = sizeof(cuzk_memory_plan) = 416 */
  uint32_t backend;                  /* cuzk_backend of the engine */
  uint64_t budget;                   /* bytes of the engine's memory the plan may use (the option, or automatic) */
  uint64_t fixed_bytes;              /* needed whatever the plan: witness, indices, margin (CPU: also the
                                        rows it reads in place and the H scalars) */
  uint64_t resident_bytes;           /* points stored in the engine's memory */
  uint64_t stream_buffer_bytes;      /* two chunks of the widest streamed point */
  uint64_t streamed_bytes_per_proof; /* bytes of the streamed sections (read once per group of proofs) */
  uint64_t key_host_bytes;           /* host memory the key holds (the file, less sections on demand) */
  uint64_t points_dropped;           /* points at infinity not stored, all sections together */
  uint32_t placement[CUZK_POINT_SECTIONS]; /* CUZK_PLACEMENT_* */
  uint32_t pinned_sections;          /* bit s (1 << s, s a section's index): streamed section s is copied
                                        once to pinned host memory; a streamed section without its bit
                                        is packed from the key on the host per group */
  uint64_t points[CUZK_POINT_SECTIONS];   /* points of each section in the key */
  uint64_t infinity[CUZK_POINT_SECTIONS]; /* of which at infinity (0 in a plan of a described key) */
  uint64_t stored[CUZK_POINT_SECTIONS];   /* points the engine holds (a few infinities may be kept where
                                             another section summed over the same scalars has a point) */
  uint64_t stored_bytes[CUZK_POINT_SECTIONS];
  uint64_t rows_bytes;               /* A/B rows in the engine's memory */
  uint64_t rows_chunk_bytes;         /* 0: the rows are held whole; else (CUDA) bytes of a chunk of them read per proof */
  uint64_t msm_chunk_points;         /* points per MSM chunk (>= the largest MSM: unchunked) */
  uint64_t msm_workspace_bytes;      /* the MSM scratch at that chunk (and a streamed chunk's scalars) */
  uint64_t total_bytes;              /* fixed + NTT vectors + rows + MSM workspace + resident + stream buffers
                                        - shared_bytes + overlap_bytes + h_copies_bytes */
  uint64_t min_budget;               /* the smallest budget this key can be planned in (same host budget) */
  uint64_t host_budget;              /* host bytes the plan may take beyond the key */
  uint64_t host_bytes;               /* host bytes it takes: pinned streamed points, a group's kept H scalars */
  uint64_t batch;                    /* proofs per call the plan was judged for (a prover's: 1) */
  uint64_t group_size;               /* proofs of such a batch that share each read of a streamed section */
  uint64_t link_bytes_per_proof;     /* predicted bytes read into the engine per proof (PCIe for CUDA),
                                        besides the witness: streamed points / group, their scalars,
                                        kept H scalars out and back, rows read per proof */
  uint64_t predicted_extra_ns;       /* predicted time per proof above the unconstrained plan's: an
                                        upper bound (traffic counted as if nothing overlapped it) */
  uint64_t group_max;                /* the most proofs of any batch that share a read (their kept H
                                        scalars fit: CUDA in host_budget, CPU in the budget's room) */
  uint64_t vector_bytes;             /* one full-length vector of the NTT stage (domain_size x 32) */
  uint32_t ntt_vectors;              /* such vectors held (3: a, b, c; CUDA 2: c computed again once
                                        a*b is formed; CUDA 4: a, b, c and the vector the previous
                                        proof's H scalars go out of), counted in total_bytes, not in
                                        fixed_bytes */
  uint32_t phases_shared;            /* 1 (CUDA): a proof's own work (its witness, the NTT vectors, the row
                                        chunks) and a group's streamed sums (the stream buffers, the MSM
                                        workspace when nothing is resident) take turns in the same memory,
                                        given back and allocated again once per group; a proof alone is
                                        then a group of one (its H scalars go to the host and back) */
  uint64_t shared_bytes;             /* the bytes the two phases take turns in (the smaller phase's),
                                        counted once in total_bytes */
  uint64_t overlap_bytes;            /* CUDA, with CUZK_PROVER_OVERLAP: a second proof's witness and NTT
                                        vectors, so that in a batch proof p+1's upload, a/b/c and NTTs run
                                        beside proof p's MSMs (a plan with every section resident and the
                                        rows whole, when the budget has that room left; 0: one proof after
                                        another) */
  uint64_t h_copies_bytes;           /* CUDA: the precomputed copies of the H points beyond the points
                                        themselves (counted in resident_bytes) */
  uint32_t h_copies;                 /* CUDA: copies of the H points held (copy 0 is the points; msm_h
                                        then reduces fewer windows), made at prover creation when H is
                                        resident in one chunk: as many as cuzk_prover_options.h_copies
                                        forces, or as the room left after the plan (and the overlap)
                                        holds while they are made, up to 16; 0: none */
  uint32_t msm_window_groups;        /* CUDA: the groups an MSM's windows are sorted and summed in, one
                                        after another (1: all at once), so that its sort pairs and buckets
                                        take a group's room: more groups, a smaller workspace at the same
                                        chunk (a few ms more a chunk); 1 on the CPU */
  uint64_t h_chunk_points;           /* points per chunk of the H MSM: msm_chunk_points, or (CUDA) a larger
                                        chunk of its own where its buffers fit beside the other MSMs' in
                                        the same workspace (fewer chunks: fewer bucket reductions) */
  uint32_t h_window_groups;          /* the groups the H MSM's windows are sorted and summed in */
  uint32_t reserved;                 /* 0 */
} cuzk_memory_plan;

/* The plan the prover was made with. */
CUZK_API cuzk_status cuzk_prover_memory_plan(const cuzk_prover* prover, cuzk_memory_plan* out, char* err,
                                             size_t err_cap);

/* A key to plan for without opening it: its counts (from cuzk_key_get_info, or a synthetic
 * circuit's). A described key keeps every point; a prover's plan drops the points at infinity
 * but holds an index of the kept ones (4 bytes a point) and gathers their scalars, so its figures
 * differ a little either way (a PoRep key's, which drops ~half of its points, are far smaller). */
#define CUZK_PLAN_POINTS_ON_DEMAND 0x1u /* CPU: the key's points are held by the engine (a key opened
                                           with CUZK_KEY_POINTS_ON_DEMAND); else read in place */
#define CUZK_PLAN_SYNTH_POREP 0x2u      /* the key of the synthetic PoRep-profile circuit of n_constraints
                                           rows and n_public inputs (cuzk_synth_circuit): n_vars and
                                           n_coefs are derived (pass 0) */
typedef struct cuzk_plan_request {
  uint32_t struct_size;   /* = sizeof(cuzk_plan_request) = 48 */
  uint32_t backend;       /* CUZK_BACKEND_CPU or CUZK_BACKEND_CUDA (CUDA: planned on any machine) */
  uint32_t curve;         /* cuzk_curve */
  uint32_t flags;         /* CUZK_PLAN_* */
  uint32_t n_vars;        /* witness length, >= n_public + 1 (0 with CUZK_PLAN_SYNTH_POREP) */
  uint32_t n_public;
  uint32_t n_constraints; /* 1 .. 2^28 - n_public - 1 */
  uint32_t reserved;      /* 0 */
  uint64_t n_coefs;       /* A and B coefficients (cuzk_key_info.n_coefs) */
  uint64_t batch;         /* proofs per call, 1 .. 2^20 */
} cuzk_plan_request;

/* The plan an engine of request->backend would choose for such a key, batch and options
 * (NULL: defaults): arithmetic only, nothing allocated, no device needed. memory_budget 0 means the
 * free memory of GPU 0 (CUDA; CUZK_ERR_NO_DEVICE without one: pass a budget) or physical memory (CPU).
 * A budget below the minimum: CUZK_ERR_OUT_OF_MEMORY naming it, and *out still filled with
 * min_budget set. Counts out of range, unknown flags, bad options: CUZK_ERR_INVALID_ARGUMENT. */
CUZK_API cuzk_status cuzk_plan_memory(const cuzk_plan_request* request, const cuzk_prover_options* options,
                                      cuzk_memory_plan* out, char* err, size_t err_cap);

/* Releases the prover and its workspace (the key and the context stay open). */
CUZK_API cuzk_status cuzk_prover_destroy(cuzk_prover* prover, char* err, size_t err_cap);

/* ---------------------------------------------------------------------------------------------
 * Proving: a batch of witnesses (or of evaluations) to proofs, with per-proof timings.
 * ------------------------------------------------------------------------------------------- */
/* Phase timings: one record per proof, written by the library with a monotonic clock.
 * start/end are nanoseconds from the start of the call; a phase that did not run has both 0.
 * Phases may overlap (e.g. the G2 MSM on the CPU while the GPU works); the waterfall shows it. */
typedef enum cuzk_phase {
  CUZK_PHASE_PARSE = 0,         /* witness bytes/.wtns header checks */
  CUZK_PHASE_WITNESS_CHECK = 1, /* constraints checked against an attached .r1cs */
  CUZK_PHASE_ABC = 2,           /* a = A.w, b = B.w, c = a*b from the key's coefficients */
  CUZK_PHASE_NTT_H = 3,         /* 3 inverse + 3 coset NTTs and a*b-c: the H scalars */
  CUZK_PHASE_MSM_A = 4,         /* G1, key section 5 */
  CUZK_PHASE_MSM_B1 = 5,        /* G1, key section 6 */
  CUZK_PHASE_MSM_B2 = 6,        /* G2, key section 7 */
  CUZK_PHASE_MSM_C = 7,         /* G1, key section 8 (the L query, private signals) */
  CUZK_PHASE_MSM_H = 8,         /* G1, key section 9 */
  CUZK_PHASE_BATCH_ADD = 9,     /* sums of the points whose scalar is 1 */
  CUZK_PHASE_UPLOAD = 10,       /* host -> device transfers */
  CUZK_PHASE_DOWNLOAD = 11,     /* device -> host transfers */
  CUZK_PHASE_HOST_REGISTER = 12,/* page-locking caller memory, when asked */
  CUZK_PHASE_FINALIZE = 13,     /* r, s blinding and assembly of A, B, C */
  CUZK_PHASE_SELF_CHECK = 14,   /* pairing check of the proof */
  CUZK_PHASE_COUNT = 15
} cuzk_phase;

#define CUZK_PHASE_SLOTS 24 /* room for phases added later without a layout change */

typedef struct cuzk_interval {
  uint64_t start_ns;
  uint64_t end_ns;
} cuzk_interval;

typedef struct cuzk_timings {
  uint32_t struct_size;  /* = sizeof(cuzk_timings) = 408 */
  uint32_t phase_count;  /* = CUZK_PHASE_COUNT of the library that wrote it */
  uint32_t backend;      /* cuzk_backend that did the work */
  uint32_t proof_index;  /* index of the proof within the batch */
  uint64_t total_ns;     /* whole call, start to end */
  cuzk_interval phases[CUZK_PHASE_SLOTS];
} cuzk_timings;

/* Flags of cuzk_prove (cuzk_prove_args.flags). By default every proof is verified (pairing check,
 * timed as CUZK_PHASE_SELF_CHECK) before it is returned: a proof that fails is never returned. The
 * check costs about one Groth16 verification per proof (a few ms; docs/benchmarks.md), which matters
 * only for the smallest circuits; callers that verify elsewhere may skip it with
 * CUZK_PROVE_NO_SELF_CHECK. Giving both CUZK_PROVE_SELF_CHECK and CUZK_PROVE_NO_SELF_CHECK is
 * CUZK_ERR_INVALID_ARGUMENT. */
#define CUZK_PROVE_SELF_CHECK 0x1u       /* kept for compatibility: the self-check is now the default */
#define CUZK_PROVE_SKIP_R1CS_CHECK 0x2u  /* do not check the witness against an attached .r1cs */
#define CUZK_PROVE_NO_SELF_CHECK 0x4u    /* skip the pairing self-check (the caller verifies elsewhere) */

/* What a cuzk_prove call proves from (cuzk_prove_args.input). */
typedef enum cuzk_prove_input {
  CUZK_INPUT_WITNESSES = 0,    /* witnesses: n_proofs records of witness_stride bytes, back to back */
  CUZK_INPUT_WITNESS_LIST = 1, /* witness_list: one address per proof, witness_stride bytes each */
  CUZK_INPUT_ABC = 2           /* a, b, c evaluations and the assignment (supraseal's shape) */
} cuzk_prove_input;

/* The arguments of one cuzk_prove call, filled by the caller, who sets struct_size (the library only
 * reads it; a larger one, from a later header, is accepted and the fields below are read). A pointer
 * field that the chosen `input` does not use must be NULL. Natural alignment, 8-byte pointers: no
 * padding. */
typedef struct cuzk_prove_args {
  uint32_t struct_size;               /* set by the caller: sizeof(cuzk_prove_args) = 128 */
  uint32_t input;                     /* cuzk_prove_input */
  uint32_t witness_format;            /* cuzk_witness_format of every witness (not read for ABC) */
  uint32_t flags;                     /* CUZK_PROVE_* */
  uint64_t n_proofs;                  /* proofs of the batch */
  uint64_t witness_stride;            /* bytes of each witness (not read for ABC) */
  const uint8_t* witnesses;           /* CUZK_INPUT_WITNESSES */
  const uint8_t* const* witness_list; /* CUZK_INPUT_WITNESS_LIST */
  const uint8_t* a;                   /* CUZK_INPUT_ABC: a, b, c, assignment */
  const uint8_t* b;
  const uint8_t* c;
  const uint8_t* assignment;
  const uint8_t* r;                   /* blinding: both NULL (CSPRNG) or both n_proofs * 32 bytes */
  const uint8_t* s;
  uint8_t* proofs;                    /* n_proofs * proof_bytes, written */
  uint64_t proofs_cap;                /* bytes at proofs */
  cuzk_timings* timings;              /* NULL, or n_proofs records, written */
  cuzk_progress* progress;            /* NULL or a cuzk_progress */
} cuzk_prove_args;

/*
 * Proves a batch of n_proofs proofs against the prover's key, from what args->input names:
 *  CUZK_INPUT_WITNESSES: witnesses holds n_proofs records of witness_stride bytes each, in
 *    witness_format (RAW: stride = n_vars * 32; WTNS: each record is a whole .wtns file of that size).
 *  CUZK_INPUT_WITNESS_LIST: for witnesses that lie apart, e.g. one pooled pinned buffer per witness
 *    as its producer filled it: witness_list[p] points at witness p's witness_stride bytes, so the
 *    caller need not gather a batch into one block first (at 2^24 that copy cost ~300 ms of a batch
 *    of 4). Otherwise as CUZK_INPUT_WITNESSES.
 *  CUZK_INPUT_ABC: the shape of supraseal's generate_groth16_proofs_c, for callers that synthesise
 *    circuits themselves and already hold the evaluations. a, b, c: n_proofs * domain_size Fr values
 *    each (standard LE): the rows of A.w, B.w, C.w for the key's QAP: the n_constraints rows, then
 *    the n_public + 1 input rows (a = w[i], b = c = 0), then zeros up to domain_size. assignment:
 *    n_proofs * n_vars Fr values (w[0] = 1). The a, b, c values are taken as given: evaluations that
 *    do not match the assignment give a proof that fails the self-check (CUZK_ERR_SELF_CHECK, unless
 *    skipped). witness_format and witness_stride are not read.
 *  r, s: NULL for fresh randomness from the OS CSPRNG (production); or n_proofs * 32 bytes each
 *    (Fr, standard LE) for deterministic proofs (tests). Both or neither.
 *  proofs: n_proofs * proof_bytes, output encoding: A (G1) | B (G2) | C (G1).
 *  timings: NULL, or n_proofs cuzk_timings records.
 *  n_proofs: bounded by proofs_cap (n_proofs * proof_bytes must fit), and the n_proofs inputs
 *    (witness_stride bytes, or domain_size/n_vars values, each) must not overflow size_t.
 *  progress: NULL or a cuzk_progress: stage CUZK_STAGE_PROVE, total n_proofs, done counts the proofs
 *    whose sums are computed; cancel is checked before each proof of the batch (CUZK_ERR_CANCELLED,
 *    the proofs buffer zeroed).
 * The inputs of a batch are checked one ahead of the proving: proof i+1's check runs while proof
 * i is computed; the first failing proof (in batch order) fails the call. Once the arguments are
 * accepted, any failure (a witness, a cancel, the device) zeroes the proofs buffer: no proof of a
 * failed call is ever returned.
 * A witness that fails a check fails the whole call and names the proof index; use batches of one
 * to isolate failures. Each witness is checked as by cuzk_key_check_witness with CUZK_CHECK_SCAN,
 * then (with an attached .r1cs and without CUZK_PROVE_SKIP_R1CS_CHECK) against every constraint.
 * Returns: CUZK_OK (proofs written);
 *   CUZK_ERR_INVALID_ARGUMENT  prover or args NULL, args->struct_size < sizeof(cuzk_prove_args),
 *                              unknown input, a pointer field the input does not use not NULL,
 *                              unknown or contradicting flags, n_proofs 0, proofs NULL, the input's
 *                              pointers NULL (witnesses, witness_list, witness_list[p] (the message
 *                              names p), or any of a, b, c, assignment), only one of r and s, the
 *                              n_proofs inputs overflow size_t, unknown witness_format, a witness
 *                              value, an evaluation, an assignment value, r or s not < r;
 *   CUZK_ERR_FORMAT            a malformed .wtns record;
 *   CUZK_ERR_CURVE_MISMATCH    a .wtns over another field than the key's;
 *   CUZK_ERR_WITNESS_LENGTH    a witness's value count (RAW: witness_stride) differs from n_vars;
 *   CUZK_ERR_UNSATISFIED       w[0] != 1, or a constraint of the attached .r1cs fails (message names it);
 *   CUZK_ERR_SHORT_BUFFER      proofs_cap < n_proofs * proof_bytes;
 *   CUZK_ERR_SELF_CHECK        (unless CUZK_PROVE_NO_SELF_CHECK) a proof failed its pairing check: no
 *                              proof is returned (the proofs buffer is zeroed). The message names the
 *                              likely cause: with an attached .r1cs, "the witness does not satisfy the
 *                              circuit" or "the key (or the backend) is at fault"; without one, that
 *                              either is possible and that attaching the .r1cs tells which;
 *   CUZK_ERR_NO_DEVICE, CUZK_ERR_DEVICE  the GPU of a CUDA context failed;
 *   CUZK_ERR_OUT_OF_MEMORY     host or device memory ran out;
 *   CUZK_ERR_CANCELLED         progress->cancel was set: no proof is returned (the buffer is zeroed);
 *   CUZK_ERR_INTERNAL          the OS CSPRNG failed, or a bug (please report the message).
 */
CUZK_API cuzk_status cuzk_prove(cuzk_prover* prover, const cuzk_prove_args* args, char* err, size_t err_cap);

/* ---------------------------------------------------------------------------------------------
 * Verification (native pairing check).
 *  vk: as written by cuzk_key_export_vk for a key with n_public public signals.
 *  public_signals: n_public Fr values (standard LE), each must be < r.
 *  *out_valid: 1 when the proof is valid, 0 when not (status CUZK_OK in both cases).
 * ------------------------------------------------------------------------------------------- */
CUZK_API cuzk_status cuzk_verify(uint32_t curve, const uint8_t* vk, size_t vk_len, const uint8_t* proof,
                                 size_t proof_len, const uint8_t* public_signals, size_t n_public,
                                 int32_t* out_valid, char* err, size_t err_cap);

/* ---------------------------------------------------------------------------------------------
 * Kernels on their own (benchmarks, tests, callers with their own pipeline). Serialised per
 * context: a second kernel call on the same context waits for the first.
 * ------------------------------------------------------------------------------------------- */
typedef enum cuzk_group { CUZK_G1 = 1, CUZK_G2 = 2 } cuzk_group;

/* out = sum scalars[i] * points[i], n < 2^31 (else CUZK_ERR_INVALID_ARGUMENT). points: key encoding;
 * scalars: Fr standard LE (any 256-bit value is reduced mod r); out: one point, output encoding.
 * timings may be NULL. */
CUZK_API cuzk_status cuzk_msm(cuzk_context* ctx, uint32_t curve, uint32_t group, const uint8_t* points,
                              const uint8_t* scalars, size_t n, uint8_t* out, size_t out_cap,
                              cuzk_timings* timings, char* err, size_t err_cap);

/* In-place NTT over Fr of `curve` on 2^log_n values (standard LE).
 * kind: CUZK_NTT_FORWARD, CUZK_NTT_INVERSE, CUZK_NTT_COSET_FORWARD (evaluate on the coset g*<w>,
 * g = the 2^(log_n+1)-th root of unity, as snarkjs), CUZK_NTT_COSET_INVERSE.
 * Natural order in and out. log_n <= 27 (else CUZK_ERR_INVALID_ARGUMENT). */
#define CUZK_NTT_FORWARD 0u
#define CUZK_NTT_INVERSE 1u
#define CUZK_NTT_COSET_FORWARD 2u
#define CUZK_NTT_COSET_INVERSE 3u
CUZK_API cuzk_status cuzk_ntt(cuzk_context* ctx, uint32_t curve, uint8_t* values, uint32_t log_n, uint32_t kind,
                              cuzk_timings* timings, char* err, size_t err_cap);

/* ---------------------------------------------------------------------------------------------
 * Host memory. Pinned (page-locked) memory makes host<->GPU copies ~7x faster, but allocating it
 * is slow (seconds per GiB): allocate once, reuse. Without a CUDA driver, CUZK_HOST_PINNED falls
 * back to ordinary page-aligned memory and *out_flags says so.
 * cuzk_host_alloc does not zero the memory: its contents are undefined until written.
 * ------------------------------------------------------------------------------------------- */
/* Flags of cuzk_host_alloc. */
#define CUZK_HOST_PINNED 0x1u /* page-locked through the CUDA driver when one is present */
/* Bits reported back by cuzk_host_alloc in *out_flags. */
#define CUZK_HOST_IS_PINNED 0x1u /* the memory really is page-locked */

/* bytes: 1 .. this machine's physical memory (more is CUZK_ERR_OUT_OF_MEMORY, before any allocation);
 * device: the GPU whose driver pins the memory, >= 0 (negative: CUZK_ERR_INVALID_ARGUMENT). */
CUZK_API cuzk_status cuzk_host_alloc(size_t bytes, uint32_t flags, int32_t device, void** out_ptr,
                                     uint32_t* out_flags, char* err, size_t err_cap);
/* Frees memory from cuzk_host_alloc; NULL is a no-op. CUZK_ERR_INVALID_ARGUMENT for a pointer the
 * library did not hand out (or already freed). */
CUZK_API cuzk_status cuzk_host_free(void* ptr, char* err, size_t err_cap);
/* Page-locks caller memory (cudaHostRegister); slow (~0.04 s/GiB): do it once, not per proof.
 * CUZK_ERR_NO_DEVICE without a driver; bytes beyond this machine's physical memory is
 * CUZK_ERR_INVALID_ARGUMENT. *out_ns receives the time it took (may be NULL). */
CUZK_API cuzk_status cuzk_host_register(void* ptr, size_t bytes, uint64_t* out_ns, char* err, size_t err_cap);
CUZK_API cuzk_status cuzk_host_unregister(void* ptr, char* err, size_t err_cap);
/* Live allocations made by cuzk_host_alloc, and pinned ones among them (for leak checks). */
CUZK_API cuzk_status cuzk_host_stats(uint64_t* live_buffers, uint64_t* live_bytes, uint64_t* pinned_bytes,
                                     uint64_t* total_pin_ns);
/* Page-locked memory the library allocated for itself (GPU upload staging, MSM download areas;
 * not the caller's cuzk_host_alloc buffers): bytes held now, allocations made since load and the
 * time they took. A proving loop allocates only in its first proof, so after it neither
 * *allocations nor *alloc_ns grow. All zero without CUDA. Any argument may be NULL. */
CUZK_API cuzk_status cuzk_staging_stats(uint64_t* pinned_bytes, uint64_t* allocations, uint64_t* alloc_ns);

/* ---------------------------------------------------------------------------------------------
 * Synthetic circuits and an INSECURE development setup, for tests and benchmarks at sizes no
 * real circuit or trusted setup exists for (docs/benchmarks.md, "Synthetic circuits").
 * ------------------------------------------------------------------------------------------- */
/* Profiles of the synthetic circuits. */
#define CUZK_SYNTH_UNIFORM 0u /* 2/2/2 terms in A/B/C per row; coefficients and witness random full-width */
#define CUZK_SYNTH_POREP 1u   /* Filecoin PoRep shape: 2.4/1.0/2.2 terms per row, witness mostly 0 or 1 */

/*
 * Makes an R1CS of n_constraints rows with n_public public inputs, and a witness that satisfies
 * it, as the bytes of a snarkjs .r1cs and .wtns file. Deterministic: the same (curve, profile,
 * n_constraints, n_public, seed) always gives the same bytes. Witness: w[0] = 1, the public
 * inputs w[1..n_public], private inputs, then one output per constraint.
 *  curve: cuzk_curve; profile: CUZK_SYNTH_*; 1 <= n_constraints <= 2^30; n_public <= n_constraints.
 *  r1cs/wtns: caller memory of r1cs_cap/wtns_cap bytes. *r1cs_len and *wtns_len receive the sizes
 *    (also when a buffer is too short: then CUZK_ERR_SHORT_BUFFER and nothing is generated). To ask
 *    the sizes, pass NULL buffers with capacity 0.
 */
CUZK_API cuzk_status cuzk_synth_circuit(uint32_t curve, uint32_t profile, uint32_t n_constraints, uint32_t n_public,
                                        uint64_t seed, uint8_t* r1cs, size_t r1cs_cap, size_t* r1cs_len,
                                        uint8_t* wtns, size_t wtns_cap, size_t* wtns_len, char* err, size_t err_cap);
/* Same, written to files (each created whole through a temporary and a rename; CUZK_ERR_IO when a
 * path cannot be written). The .r1cs is streamed: memory is the witness (32 bytes per wire). */
CUZK_API cuzk_status cuzk_synth_circuit_write(uint32_t curve, uint32_t profile, uint32_t n_constraints,
                                              uint32_t n_public, uint64_t seed, const char* r1cs_path,
                                              const char* wtns_path, char* err, size_t err_cap);

/*
 * Witnesses of other inputs to one synthetic circuit (the circuit of curve, profile, n_constraints,
 * n_public and seed, as cuzk_synth_circuit makes it), as raw values: n_wires x 32 bytes, standard
 * form LE, what cuzk_prove takes as a witness. witness_seeds[i] picks witness i's public and
 * private inputs (0: cuzk_synth_circuit's own witness; any other value its own inputs; every
 * output follows from the inputs, so each witness satisfies the circuit). values[i]: caller memory
 * of values_cap bytes each (cuzk_synth_circuit's wtns_len less its 64-byte header is the size
 * needed; shorter: CUZK_ERR_SHORT_BUFFER naming it). The witnesses are made in parallel on the
 * library's pool. 1 <= n_witnesses <= 1024; other arguments as cuzk_synth_circuit.
 */
CUZK_API cuzk_status cuzk_synth_witnesses(uint32_t curve, uint32_t profile, uint32_t n_constraints, uint32_t n_public,
                                          uint64_t seed, const uint64_t* witness_seeds, uint8_t* const* values,
                                          size_t n_witnesses, size_t values_cap, char* err, size_t err_cap);

typedef struct cuzk_setup_info {
  uint32_t struct_size;    /* = sizeof(cuzk_setup_info) = 80 */
  uint32_t curve;          /* cuzk_curve of the .r1cs */
  uint32_t n_vars;         /* wires, w[0] = 1 included */
  uint32_t n_public;
  uint32_t n_constraints;
  uint32_t domain_size;    /* 2^ceil(log2(n_constraints + n_public + 1)), as snarkjs */
  uint32_t threads;        /* threads that computed the points */
  uint32_t g1_window_bits; /* fixed-base window widths chosen for G1 and G2 */
  uint32_t g2_window_bits;
  uint32_t gpu;            /* 1: the key points were computed on GPU 0; 0: on the CPU tables */
  uint64_t zkey_bytes;     /* size of the file written */
  uint64_t total_ns;       /* the whole call */
  uint64_t scalars_ns;     /* Lagrange basis at tau, per-signal sums, H scalars */
  uint64_t tables_ns;      /* fixed-base tables of the two generators (CPU; small ones for the header on the GPU path) */
  uint64_t points_ns;      /* scalar multiplications and writing the file */
} cuzk_setup_info;

/*
 * INSECURE: FOR TESTS AND BENCHMARKS ONLY. Makes a Groth16 proving key for the circuit at r1cs_path
 * from toxic waste (tau, alpha, beta, gamma, delta) drawn from the OS CSPRNG inside this call. The
 * values are dropped when it returns, but nothing proves it: whoever could read this process's
 * memory could forge proofs for the key. Never use such a key to protect anything of value.
 *
 * Writes a snarkjs .zkey (the layout of `snarkjs groth16 setup` followed by a contribution, with
 * the H points of the odd-coset convention; formats.md 1) to zkey_path, whole or not at all. The
 * contributions section records none and its circuit hash is zero: there is no ceremony transcript
 * to check (`snarkjs zkey verify` cannot check this key; prove, verify and `zkey export
 * verificationkey` work). The verification key is read back with cuzk_key_open + cuzk_key_export_vk.
 * The scalars are computed multi-threaded on the CPU: cpu_threads = 0 uses the library's shared pool,
 * n > 0 a pool of its own, bounded as for cuzk_context_create (CUZK_ERR_INVALID_ARGUMENT above
 * cuzk_library_info.cpu_threads, CUZK_ERR_OUT_OF_MEMORY when the OS refuses a thread). The key
 * points (k_i * G1 or G2) are computed on GPU 0 when the library
 * was built with CUDA and a GPU is present, else (or with CUZK_SETUP_CPU_ONLY, or if the GPU fails:
 * the call then falls back silently) with CPU fixed-base tables; info->gpu says which ran. Both
 * paths give the same points for the same scalars; the toxic waste differs on every call anyway.
 *  flags: 0 or CUZK_SETUP_CPU_ONLY. info: NULL, or receives sizes and timings.
 *  progress: NULL or a cuzk_progress: stage CUZK_STAGE_SETUP, units the key points made (total
 *    known once the .r1cs is read); cancel is checked between chunks of points (at most 2^20 each)
 *    and between the scalar steps: CUZK_ERR_CANCELLED, and no file is left at zkey_path (nor its
 *    temporary).
 * CUZK_ERR_IO (r1cs unreadable or not a regular file: it is read whole as by cuzk_key_attach_r1cs;
 * zkey unwritable), CUZK_ERR_FORMAT (malformed .r1cs),
 * CUZK_ERR_CURVE_MISMATCH (another field), CUZK_ERR_UNSUPPORTED (domain too large for the field's
 * NTT: the H points need the 2*domain_size-th roots of unity), CUZK_ERR_OUT_OF_MEMORY (checked before
 * any work: about 104 bytes per signal, 16 per R1CS term and 128 per domain point).
 * The library never prints: callers must warn their users (the CLI does, on stderr).
 */
#define CUZK_SETUP_CPU_ONLY 1u /* cuzk_setup_insecure_dev: never use a GPU */

CUZK_API cuzk_status cuzk_setup_insecure_dev(const char* r1cs_path, const char* zkey_path, uint32_t cpu_threads,
                                             uint32_t flags, cuzk_setup_info* info, cuzk_progress* progress,
                                             char* err, size_t err_cap);

/*
 * INSECURE: FOR TESTS AND BENCHMARKS ONLY, as cuzk_setup_insecure_dev. The same key, made in
 * memory instead of a file, for sizes whose .zkey would not fit a disk (a 2^27 BLS12-381 key is
 * ~97 GB): *out is a key handle (close it with cuzk_key_close) that holds the headers, IC and
 * coefficients, and the setup's scalars (u, v, k per signal, h per domain point: 128 bytes per
 * signal and 32 per domain point); its point sections are never stored on the host: a prover made
 * from it makes the points it reads (k * G1 or G2; on GPU 0 as the file setup does, else CPU
 * tables), so making a prover costs the key's scalar multiplications, and a section the prover
 * streams costs them again per read (per proof, or per group of a batch's proofs). The key works as any other (cuzk_key_info, cuzk_key_export_vk,
 * provers on either backend); info->zkey_bytes is the host memory it holds (as key_host_bytes).
 *  progress: NULL or a cuzk_progress (stage CUZK_STAGE_SETUP, units the header and IC points);
 *    cancel as for cuzk_setup_insecure_dev (then *out stays NULL).
 * Codes as cuzk_setup_insecure_dev (no zkey path: CUZK_ERR_IO only for the .r1cs).
 */
CUZK_API cuzk_status cuzk_setup_insecure_dev_key(const char* r1cs_path, uint32_t cpu_threads, uint32_t flags,
                                                 cuzk_key** out, cuzk_setup_info* info, cuzk_progress* progress,
                                                 char* err, size_t err_cap);

/* ---------------------------------------------------------------------------------------------
 * Progress of a long call, and the caller's request to stop it. The caller owns the memory (its
 * own, or cuzk_host_alloc; 8-byte aligned) and sets struct_size; it passes the pointer to one call
 * at a time (NULL: no progress, no cancellation). While the call runs the library updates
 * done/total/stage with atomic stores (readable from any thread, e.g. a JS timer reading a
 * typed-array view) and reads `cancel` with atomic loads between units of work: the circuits of a
 * proving batch, the chunks of a setup or a key upload. A call that sees cancel != 0 stops at the
 * next such point, frees what it allocated, leaves no output (proof bytes zeroed; setup output
 * files removed) and returns CUZK_ERR_CANCELLED. struct_size < 32 or a pointer not 8-byte aligned
 * is CUZK_ERR_INVALID_ARGUMENT. A cancel set before the call stops it before any work.
 * ------------------------------------------------------------------------------------------- */
typedef enum cuzk_stage {
  CUZK_STAGE_IDLE = 0,
  CUZK_STAGE_KEY_UPLOAD = 1, /* cuzk_prover_create: key rows/points to the engine (units: bytes) */
  CUZK_STAGE_PROVE = 2,      /* cuzk_prove (units: proofs of the batch) */
  CUZK_STAGE_SETUP = 3       /* cuzk_setup_insecure_dev (units: key points made) */
} cuzk_stage;

struct cuzk_progress {
  uint32_t struct_size; /* sizeof(cuzk_progress) = 32, set by the caller */
  uint32_t cancel;      /* set non-zero by the caller: stop at the next unit boundary */
  uint32_t stage;       /* cuzk_stage, written by the library */
  uint32_t phase;       /* CUZK_STAGE_PROVE: 1 + the cuzk_phase the proof in work is in (a, b, c, the
                           NTTs, each MSM, finalizing, the self-check; not the checks that run ahead
                           on another thread), 0 before the first; written by the library */
  uint64_t done;        /* units finished, written by the library */
  uint64_t total;       /* units in all (0 until known), written by the library */
};

#ifdef __cplusplus
}
#endif

#endif /* CUZK_H */
