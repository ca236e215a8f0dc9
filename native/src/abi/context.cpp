// cuzk.h: contexts (a backend on a device) and provers (a key bound to a context), and proving.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>

#include "abi/abi_util.hpp"
#include "abi/handles.hpp"
#include "cpu/cpu_engine.hpp"
#include "cuda/backend.hpp"
#include "setup/synth.hpp"
#include "util/machine.hpp"
#include "prover/verify.hpp"

using cuzk::abi::guarded;
using cuzk::abi::still_used;

static_assert(sizeof(cuzk_prover_options) == 40 && offsetof(cuzk_prover_options, memory_budget) == 8 &&
                  offsetof(cuzk_prover_options, h_copies) == 16 && offsetof(cuzk_prover_options, reserved) == 20 &&
                  offsetof(cuzk_prover_options, host_memory_budget) == 24 &&
                  offsetof(cuzk_prover_options, chunk_points) == 32,
              "cuzk_prover_options layout");
static_assert(sizeof(cuzk_memory_plan) == 416 && offsetof(cuzk_memory_plan, h_chunk_points) == 400 &&
                  offsetof(cuzk_memory_plan, h_window_groups) == 408 && offsetof(cuzk_memory_plan, shared_bytes) == 368 &&
                  offsetof(cuzk_memory_plan, overlap_bytes) == 376 && offsetof(cuzk_memory_plan, h_copies_bytes) == 384 &&
                  offsetof(cuzk_memory_plan, h_copies) == 392 && offsetof(cuzk_memory_plan, msm_window_groups) == 396 &&
                  offsetof(cuzk_memory_plan, points_dropped) == 56 &&
                  offsetof(cuzk_memory_plan, placement) == 64 && offsetof(cuzk_memory_plan, pinned_sections) == 84 &&
                  offsetof(cuzk_memory_plan, points) == 88 && offsetof(cuzk_memory_plan, infinity) == 128 &&
                  offsetof(cuzk_memory_plan, stored) == 168 && offsetof(cuzk_memory_plan, stored_bytes) == 208 &&
                  offsetof(cuzk_memory_plan, rows_bytes) == 248 && offsetof(cuzk_memory_plan, predicted_extra_ns) == 336,
              "cuzk_memory_plan layout");
static_assert(sizeof(cuzk_plan_request) == 48 && offsetof(cuzk_plan_request, n_coefs) == 32 &&
                  offsetof(cuzk_plan_request, batch) == 40,
              "cuzk_plan_request layout");
static_assert(sizeof(void*) != 8 ||
                  (sizeof(cuzk_prove_args) == 128 && offsetof(cuzk_prove_args, n_proofs) == 16 &&
                   offsetof(cuzk_prove_args, witnesses) == 32 && offsetof(cuzk_prove_args, r) == 80 &&
                   offsetof(cuzk_prove_args, proofs_cap) == 104 && offsetof(cuzk_prove_args, progress) == 120),
              "cuzk_prove_args layout (8-byte pointers)");

namespace {

// The engine of a context's backend: the one place that picks cpu/ or cuda/ for a prover. Keeps
// the memory plan of the engine it made (for cuzk_prover_memory_plan).
class ContextEngines final : public cuzk::engine::EngineMaker {
 public:
  ContextEngines(const cuzk_context& ctx, const cuzk::engine::EngineOptions& options, const cuzk::Progress& progress)
      : ctx_(ctx), options_(options), progress_(progress) {}
  cuzk_status make(const cuzk::engine::KeyView<cuzk::curve::Bn254>& key,
                   std::unique_ptr<cuzk::engine::Engine<cuzk::curve::Bn254>>* out, std::string& err) const override {
    return make_for(key, out, err);
  }
  cuzk_status make(const cuzk::engine::KeyView<cuzk::curve::Bls12381>& key,
                   std::unique_ptr<cuzk::engine::Engine<cuzk::curve::Bls12381>>* out,
                   std::string& err) const override {
    return make_for(key, out, err);
  }
  const cuzk::engine::MemoryPlan& plan() const { return plan_; }

 private:
  template <class C>
  cuzk_status make_for(const cuzk::engine::KeyView<C>& key, std::unique_ptr<cuzk::engine::Engine<C>>* out,
                       std::string& err) const {
    cuzk_status st = ctx_.backend == CUZK_BACKEND_CUDA
                         ? cuzk::cuda::make_engine<C>(ctx_.gpu, key, options_, progress_, out, err)
                         : cuzk::cpu::make_engine<C>(key, *ctx_.pool, options_, progress_, out, err);
    if (st == CUZK_OK) plan_ = (*out)->memory_plan();
    return st;
  }
  const cuzk_context& ctx_;
  const cuzk::engine::EngineOptions options_;
  const cuzk::Progress& progress_;
  mutable cuzk::engine::MemoryPlan plan_;
};

// cuzk_prover_create and cuzk_prover_create_with.
cuzk_status create_prover(cuzk_context* ctx, cuzk_key* key, const cuzk::engine::EngineOptions& options,
                          cuzk_prover** out, cuzk_progress* progress, std::string& msg) {
  cuzk::Progress prog;
  cuzk_status st = cuzk::abi::checked_progress(progress, &prog, msg);
  if (st != CUZK_OK) return st;
  prog.begin(CUZK_STAGE_KEY_UPLOAD, 0);
  if (prog.cancelled()) { msg = "cancelled before the key upload"; return CUZK_ERR_CANCELLED; }
  auto p = std::make_unique<cuzk_prover>();
  ContextEngines engines(*ctx, options, prog);
  st = cuzk::prover::make_prover(key->zkey, *ctx->pool, engines, &p->impl, msg);
  if (st != CUZK_OK) return st;
  // The upload is done; a cancel that arrived meanwhile still means "no prover" (it is freed here).
  if (prog.cancelled()) { msg = "cancelled during the key upload"; return CUZK_ERR_CANCELLED; }
  p->plan = engines.plan();
  p->ctx = ctx;
  p->key = key;
  ctx->provers++;
  key->provers++;
  *out = p.release();
  return CUZK_OK;
}

// Counts a running call on a handle for as long as it lives (destroy is refused meanwhile).
struct CallGuard {
  std::atomic<int>& n;
  explicit CallGuard(std::atomic<int>& counter) : n(counter) { n++; }
  ~CallGuard() { n--; }
};

// Checks the handle and flags, counts the call on the prover, and proves.
cuzk_status run_prove(cuzk_prover* prover, cuzk::prover::ProveArgs& args, std::string& msg) {
  cuzk_status checked = cuzk::abi::checked_progress(args.progress_record, &args.progress, msg);
  if (checked != CUZK_OK) return checked;
  if (args.flags & ~(CUZK_PROVE_SELF_CHECK | CUZK_PROVE_SKIP_R1CS_CHECK | CUZK_PROVE_NO_SELF_CHECK)) {
    msg = "unknown flags";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  if ((args.flags & CUZK_PROVE_SELF_CHECK) && (args.flags & CUZK_PROVE_NO_SELF_CHECK)) {
    msg = "CUZK_PROVE_SELF_CHECK and CUZK_PROVE_NO_SELF_CHECK contradict each other";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  CallGuard guard(prover->calls);
  return prover->impl->prove(args, prover->key->r1cs.get(), msg);
}

// The caller's cuzk_prove_args as the prover's arguments: struct_size, input, and the pointer fields
// the input does not use (NULL: a field set for another input is a mistake, not something to ignore).
cuzk_status read_prove_args(const cuzk_prove_args& in, cuzk::prover::ProveArgs& args, std::string& msg) {
  if (in.struct_size < sizeof(cuzk_prove_args)) {
    msg = "args->struct_size is " + std::to_string(in.struct_size) + "; cuzk_prove_args needs " +
          std::to_string(sizeof(cuzk_prove_args));
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  struct Field {
    const void* value;
    const char* name;
  };
  // The name of the first of `fields` that is set, or NULL.
  auto first_set = [](std::initializer_list<Field> fields) -> const char* {
    for (const Field& f : fields)
      if (f.value) return f.name;
    return nullptr;
  };
  const char* stray = nullptr;  // a pointer field the input does not use, set
  const char* input = nullptr;
  switch (in.input) {
    case CUZK_INPUT_WITNESSES:
      input = "CUZK_INPUT_WITNESSES";
      stray = first_set({{in.witness_list, "witness_list"}, {in.a, "a"}, {in.b, "b"}, {in.c, "c"},
                         {in.assignment, "assignment"}});
      break;
    case CUZK_INPUT_WITNESS_LIST:
      input = "CUZK_INPUT_WITNESS_LIST";
      stray = first_set({{in.witnesses, "witnesses"}, {in.a, "a"}, {in.b, "b"}, {in.c, "c"},
                         {in.assignment, "assignment"}});
      break;
    case CUZK_INPUT_ABC:
      input = "CUZK_INPUT_ABC";
      stray = first_set({{in.witnesses, "witnesses"}, {in.witness_list, "witness_list"}});
      break;
    default:
      msg = "unknown input " + std::to_string(in.input);
      return CUZK_ERR_INVALID_ARGUMENT;
  }
  if (stray) {
    msg = std::string("args->") + stray + " must be NULL with " + input;
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  // The prover reads a set `a` as the ABC path: without it the call would be refused as one
  // without witnesses.
  if (in.input == CUZK_INPUT_ABC && !in.a) { msg = "a is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
  // Where size_t is narrower than 64 bits, a size it cannot hold is refused, not truncated.
  auto fits = [](uint64_t v) { return (uint64_t)(size_t)v == v; };
  if (!fits(in.n_proofs) || !fits(in.witness_stride) || !fits(in.proofs_cap)) {
    msg = "n_proofs, witness_stride and proofs_cap must fit size_t";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  args.progress_record = in.progress;
  args.n = (size_t)in.n_proofs;
  args.r = in.r;
  args.s = in.s;
  args.flags = in.flags;
  args.proofs = in.proofs;
  args.proofs_cap = (size_t)in.proofs_cap;
  args.timings = in.timings;
  if (in.input == CUZK_INPUT_ABC) {
    args.a = in.a;
    args.b = in.b;
    args.c = in.c;
    args.assignment = in.assignment;
  } else {
    args.witnesses = in.witnesses;
    args.witness_list = in.witness_list;
    args.witness_stride = (size_t)in.witness_stride;
    args.witness_format = in.witness_format;
  }
  return CUZK_OK;
}
}  // namespace

extern "C" {

CUZK_API cuzk_status cuzk_context_create(uint32_t backend, int32_t device, uint32_t cpu_threads, uint32_t flags,
                                         cuzk_context** out, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!out) { msg = "out is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    *out = nullptr;
    if (flags & ~CUZK_CONTEXT_G2_ON_CPU) { msg = "unknown flags"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (backend > CUZK_BACKEND_CUDA) { msg = "unknown backend " + std::to_string(backend); return CUZK_ERR_INVALID_ARGUMENT; }
    if (device < 0) { msg = "device " + std::to_string(device) + " is negative (a GPU index is >= 0)"; return CUZK_ERR_INVALID_ARGUMENT; }
    auto ctx = std::make_unique<cuzk_context>();
    if (cpu_threads > 0) {
      cuzk_status st = cuzk::abi::make_thread_pool(cpu_threads, &ctx->own_pool, msg);
      if (st != CUZK_OK) return st;
      ctx->pool = ctx->own_pool.get();
    } else {
      ctx->pool = &cuzk::default_thread_pool();
    }
    ctx->backend = CUZK_BACKEND_CPU;
    ctx->g2_on_cpu = (flags & CUZK_CONTEXT_G2_ON_CPU) != 0;
    if (backend == CUZK_BACKEND_CUDA || backend == CUZK_BACKEND_AUTO) {
      const int dev = device;
      std::string cuda_msg;
      int count = 0;
      cuzk_status st = cuzk::cuda::compiled_in() ? cuzk::cuda::device_count(&count, cuda_msg) : CUZK_ERR_UNSUPPORTED;
      if (st == CUZK_OK && dev >= count) {
        st = CUZK_ERR_NO_DEVICE;
        cuda_msg = "GPU " + std::to_string(dev) + " requested but " + std::to_string(count) + " present";
      }
      if (st == CUZK_OK) st = cuzk::cuda::open_device(dev, &ctx->gpu, cuda_msg);
      if (st == CUZK_OK) {
        ctx->backend = CUZK_BACKEND_CUDA;
        ctx->device = dev;
      } else if (backend == CUZK_BACKEND_CUDA) {
        msg = cuda_msg.empty() ? "the CUDA backend is not available" : cuda_msg;
        if (!cuzk::cuda::compiled_in()) msg = "this library was built without the CUDA backend";
        return st;
      }
      // AUTO without a usable GPU: the CPU backend.
    }
    *out = ctx.release();
    return CUZK_OK;
  });
}

CUZK_API uint32_t cuzk_context_backend(const cuzk_context* ctx) { return ctx ? (uint32_t)ctx->backend : 0u; }

CUZK_API cuzk_status cuzk_context_destroy(cuzk_context* ctx, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!ctx) return CUZK_OK;
    if (still_used(ctx->provers.load(), "context", msg)) return CUZK_ERR_BUSY;
    std::lock_guard<std::mutex> lock(ctx->kernel_mutex);
    if (ctx->gpu) cuzk::cuda::close_device(ctx->gpu);
    delete ctx;
    return CUZK_OK;
  });
}

CUZK_API cuzk_status cuzk_prover_create(cuzk_context* ctx, cuzk_key* key, uint32_t flags, cuzk_prover** out,
                                        cuzk_progress* progress, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!ctx || !key || !out) { msg = "ctx, key and out must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    *out = nullptr;
    if (flags != 0) { msg = "unknown flags"; return CUZK_ERR_INVALID_ARGUMENT; }
    cuzk::engine::EngineOptions opts;
    opts.g2_on_cpu = ctx->g2_on_cpu;
    return create_prover(ctx, key, opts, out, progress, msg);
  });
}

namespace {

// cuzk_prover_options into engine options, every field checked (NULL: the defaults).
cuzk_status read_options(const cuzk_prover_options* options, cuzk::engine::EngineOptions& opts, std::string& msg) {
  if (!options) return CUZK_OK;
  constexpr uint32_t kFirstLayout = 16;   // struct_size, flags, memory_budget
  constexpr uint32_t kSecondLayout = 24;  // then h_copies, reserved
  const uint32_t size = options->struct_size;
  if (size != kFirstLayout && size != kSecondLayout && size < sizeof(cuzk_prover_options)) {
    msg = "options->struct_size is " + std::to_string(size) + ", expected " + std::to_string(sizeof(cuzk_prover_options)) +
          " (or 16 or 24, the fields before h_copies or before host_memory_budget)";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  constexpr uint32_t kKnown =
      CUZK_PROVER_STREAM_ALL | CUZK_PROVER_STREAM_PER_PROOF | CUZK_PROVER_KEEP_INFINITY | CUZK_PROVER_STREAM_ROWS |
      CUZK_PROVER_OVERLAP;
  if (options->flags & ~kKnown) { msg = "unknown option flags"; return CUZK_ERR_INVALID_ARGUMENT; }
  opts.memory_budget = options->memory_budget;
  opts.stream_all = (options->flags & CUZK_PROVER_STREAM_ALL) != 0;
  opts.stream_per_proof = (options->flags & CUZK_PROVER_STREAM_PER_PROOF) != 0;
  opts.keep_infinity = (options->flags & CUZK_PROVER_KEEP_INFINITY) != 0;
  opts.stream_rows = (options->flags & CUZK_PROVER_STREAM_ROWS) != 0;
  opts.overlap = (options->flags & CUZK_PROVER_OVERLAP) != 0;
  if (size >= kSecondLayout) {
    const int32_t t = options->h_copies;
    if (t < CUZK_H_COPIES_AUTO || t > CUZK_H_COPIES_MAX) {
      msg = "h_copies is " + std::to_string(t) + ": CUZK_H_COPIES_AUTO (-1), 0 for none, or up to " +
            std::to_string(CUZK_H_COPIES_MAX) + " copies";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    if (options->reserved != 0) { msg = "options->reserved must be 0"; return CUZK_ERR_INVALID_ARGUMENT; }
    opts.h_copies = t;
  }
  if (size >= sizeof(cuzk_prover_options)) {
    const uint32_t q = options->chunk_points;
    if (q != 0 && (q < CUZK_CHUNK_POINTS_MIN || q > CUZK_CHUNK_POINTS_MAX || (q & (q - 1)))) {
      msg = "chunk_points is " + std::to_string(q) + ": 0 (the plan chooses) or a power of two from " +
            std::to_string(CUZK_CHUNK_POINTS_MIN) + " to " + std::to_string(CUZK_CHUNK_POINTS_MAX);
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    if (options->reserved2 != 0) { msg = "options->reserved2 must be 0"; return CUZK_ERR_INVALID_ARGUMENT; }
    opts.host_budget = options->host_memory_budget;
    opts.chunk_points = q;
  }
  return CUZK_OK;
}

// The engine's plan as the ABI reports it.
void write_plan(const cuzk::engine::MemoryPlan& p, uint32_t backend, uint64_t key_host_bytes, cuzk_memory_plan* out) {
  std::memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  out->backend = backend;
  out->budget = p.budget;
  out->fixed_bytes = p.fixed;
  out->resident_bytes = p.resident_bytes();
  out->stream_buffer_bytes = p.stream_buffer_bytes();
  out->streamed_bytes_per_proof = p.streamed_bytes();
  out->key_host_bytes = key_host_bytes;
  out->pinned_sections = p.pinned;
  for (int s = 0; s < CUZK_POINT_SECTIONS; s++) {
    out->placement[s] = p.placement[s];
    out->points[s] = p.points[s];
    out->infinity[s] = p.infinity[s];
    out->stored[s] = p.stored[s];
    out->stored_bytes[s] = p.stored_bytes[s];
    // Fewer stored than the key has: the infinities dropped (C may store more: its leading ones).
    if (p.stored[s] && p.stored[s] < p.points[s]) out->points_dropped += p.points[s] - p.stored[s];
  }
  out->rows_bytes = p.rows_bytes;
  out->rows_chunk_bytes = p.rows_chunk;
  out->msm_chunk_points = p.msm_chunk;
  out->msm_workspace_bytes = p.msm_workspace;
  out->total_bytes = p.total();
  out->min_budget = p.min_budget;
  out->host_budget = p.host_budget;
  out->host_bytes = p.host_bytes;
  out->batch = p.batch;
  out->group_size = p.group;
  out->link_bytes_per_proof = p.link_bytes_per_proof;
  out->predicted_extra_ns = (uint64_t)(p.predicted_extra_s * 1e9);
  out->group_max = p.group_max;
  out->vector_bytes = p.vector_bytes;
  out->ntt_vectors = p.vectors;
  out->phases_shared = p.phases_shared ? 1 : 0;
  out->shared_bytes = p.shared_bytes;
  out->overlap_bytes = p.overlap_bytes;
  out->h_copies_bytes = p.h_copies_bytes;
  out->msm_window_groups = p.msm_window_groups;
  out->h_chunk_points = p.chunk_of(cuzk::engine::kGroupH);
  out->h_window_groups = p.window_groups_of(cuzk::engine::kGroupH);
  out->h_copies = p.h_copies;
}

}  // namespace

CUZK_API cuzk_status cuzk_prover_create_with(cuzk_context* ctx, cuzk_key* key, const cuzk_prover_options* options,
                                             cuzk_prover** out, cuzk_progress* progress, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!ctx || !key || !out) { msg = "ctx, key and out must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    *out = nullptr;
    cuzk::engine::EngineOptions opts;
    opts.g2_on_cpu = ctx->g2_on_cpu;
    if (cuzk_status st = read_options(options, opts, msg); st != CUZK_OK) return st;
    return create_prover(ctx, key, opts, out, progress, msg);
  });
}

CUZK_API cuzk_status cuzk_plan_memory(const cuzk_plan_request* request, const cuzk_prover_options* options,
                                      cuzk_memory_plan* out, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!request || !out) { msg = "request and out must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    const cuzk_plan_request& r = *request;
    if (r.struct_size != sizeof(cuzk_plan_request)) {
      msg = "request->struct_size is " + std::to_string(r.struct_size) + ", expected " + std::to_string(sizeof(cuzk_plan_request));
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    if (r.backend != CUZK_BACKEND_CPU && r.backend != CUZK_BACKEND_CUDA) {
      msg = "request->backend must be CUZK_BACKEND_CPU or CUZK_BACKEND_CUDA";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    if (r.curve != CUZK_CURVE_BN254 && r.curve != CUZK_CURVE_BLS12_381) { msg = "unknown curve"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (r.flags & ~(CUZK_PLAN_POINTS_ON_DEMAND | CUZK_PLAN_SYNTH_POREP)) { msg = "unknown request flags"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (r.reserved != 0) { msg = "request->reserved must be 0"; return CUZK_ERR_INVALID_ARGUMENT; }
    constexpr uint64_t kMaxRows = 1ull << 28;  // the NTT's largest domain
    if (r.n_constraints < 1 || (uint64_t)r.n_constraints + r.n_public + 1 > kMaxRows) {
      msg = "n_constraints is " + std::to_string(r.n_constraints) + ": 1 to 2^28 - n_public - 1";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    uint64_t n_vars = r.n_vars, n_coefs = r.n_coefs;
    if (r.flags & CUZK_PLAN_SYNTH_POREP) {
      if (n_vars || n_coefs) { msg = "n_vars and n_coefs are derived for a synthetic circuit: pass 0"; return CUZK_ERR_INVALID_ARGUMENT; }
      cuzk::setup::SynthParams params;
      params.curve = r.curve;
      params.profile = CUZK_SYNTH_POREP;
      params.n_constraints = r.n_constraints;
      params.n_public = r.n_public;
      cuzk::setup::SynthShape synth;
      if (cuzk::formats::Status st = cuzk::setup::synth_shape(params, synth, msg); st != CUZK_OK) return (cuzk_status)st;
      n_vars = synth.n_wires;
      n_coefs = synth.n_terms[0] + synth.n_terms[1];
    }
    if (n_vars < (uint64_t)r.n_public + 1) { msg = "n_vars must be at least n_public + 1"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (n_coefs > (uint64_t)UINT32_MAX) { msg = "n_coefs is above 2^32 - 1"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (r.batch < 1 || r.batch > (1u << 20)) { msg = "batch is " + std::to_string(r.batch) + ": 1 to 2^20"; return CUZK_ERR_INVALID_ARGUMENT; }
    cuzk::engine::EngineOptions opts;
    if (cuzk_status st = read_options(options, opts, msg); st != CUZK_OK) return st;
    cuzk::engine::KeyShape shape = cuzk::engine::describe_key(r.curve, n_vars, r.n_public, r.n_constraints, n_coefs);
    // The PoRep profile's A and B rows use eight distinct coefficients (its bit gadgets: powers of
    // two); a key's own count is known only once its rows are read.
    if (r.flags & CUZK_PLAN_SYNTH_POREP) shape.coef_values = 8;
    cuzk::engine::PlanLimits limits;
    limits.batch = r.batch;
    limits.stream_all = opts.stream_all;
    limits.stream_rows = opts.stream_rows;
    limits.overlap = opts.overlap;
    limits.h_copies = opts.h_copies;
    limits.chunk_points = opts.chunk_points;
    limits.budget = opts.memory_budget;
    cuzk::engine::EngineCosts costs;
    if (r.backend == CUZK_BACKEND_CUDA) {
      if (!limits.budget) {
        cuzk_device_info device{};
        cuzk_status st = cuzk::cuda::device_info(0, &device, msg);
        limits.budget = device.free_memory;
        if (st != CUZK_OK) {
          msg = "no GPU to measure its free memory (" + msg + "): give a device memory budget to plan for one";
          return CUZK_ERR_NO_DEVICE;
        }
      }
      limits.host_budget = opts.host_budget ? opts.host_budget : cuzk::physical_memory() / 4 * 3;
      costs = cuzk::cuda::gpu_costs(shape, false);
    } else {
      if (!limits.budget) limits.budget = cuzk::physical_memory();
      limits.host_budget = limits.budget;
      costs = cuzk::cpu::cpu_costs(shape, (r.flags & CUZK_PLAN_POINTS_ON_DEMAND) != 0);
    }
    cuzk::engine::MemoryPlan plan;
    cuzk_status st = cuzk::engine::plan_memory(costs, limits, plan, msg);
    for (int s = 0; s < CUZK_POINT_SECTIONS; s++) plan.points[s] = shape.points[s];
    write_plan(plan, r.backend, 0, out);
    out->min_budget = plan.min_budget;
    return st;
  });
}

CUZK_API cuzk_status cuzk_prover_memory_plan(const cuzk_prover* prover, cuzk_memory_plan* out, char* err,
                                             size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!prover || !out) { msg = "prover and out must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    write_plan(prover->plan, prover->ctx->backend, prover->key->file.bytes_in_memory(), out);
    return CUZK_OK;
  });
}

CUZK_API cuzk_status cuzk_prover_destroy(cuzk_prover* prover, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!prover) return CUZK_OK;
    if (prover->calls.load() > 0) { msg = "the prover is running a proof"; return CUZK_ERR_BUSY; }
    prover->ctx->provers--;
    prover->key->provers--;
    delete prover;
    return CUZK_OK;
  });
}

CUZK_API cuzk_status cuzk_prove(cuzk_prover* prover, const cuzk_prove_args* args, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!prover) { msg = "prover is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (!args) { msg = "args is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    cuzk::prover::ProveArgs prove_args;
    cuzk_status st = read_prove_args(*args, prove_args, msg);
    if (st != CUZK_OK) return st;
    return run_prove(prover, prove_args, msg);
  });
}

CUZK_API cuzk_status cuzk_verify(uint32_t curve, const uint8_t* vk, size_t vk_len, const uint8_t* proof,
                                 size_t proof_len, const uint8_t* public_signals, size_t n_public, int32_t* out_valid,
                                 char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!vk || !proof || !out_valid || (n_public > 0 && !public_signals)) {
      msg = "vk, proof, out_valid (and public_signals when n_public > 0) must not be NULL";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    *out_valid = 0;
    bool valid = false;
    cuzk_status st = cuzk::prover::verify_proof((cuzk_curve)curve, vk, vk_len, proof, proof_len, public_signals,
                                                n_public, &valid, msg);
    if (st == CUZK_OK) *out_valid = valid ? 1 : 0;
    return st;
  });
}

}  // extern "C"
