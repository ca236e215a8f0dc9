// Synthetic circuits: an R1CS of any size with a witness that satisfies it, written as snarkjs
// .r1cs and .wtns bytes (formats.md 2, 3), for benchmarks and tests at sizes no real circuit and
// no trusted setup exist for. The profiles are described in docs/benchmarks.md ("Synthetic
// circuits"). Everything is a function of (curve, profile, n_constraints, n_public, seed).
//
// Wires: 0 = the constant 1; 1..n_public = public inputs (no public outputs); then the private
// inputs; then one output wire per constraint, in constraint order. Every constraint writes its
// output as the last term of C and the generator solves for it (w_out = (a*b - rest) / coef), so
// the witness satisfies every row by construction.
#pragma once

#include <cstdint>
#include <string>

#include "cuzk.h"
#include "formats/status.hpp"
#include "setup/output_file.hpp"

namespace cuzk::setup {

struct SynthParams {
  uint32_t curve = CUZK_CURVE_BN254;
  uint32_t profile = CUZK_SYNTH_POREP;
  uint32_t n_constraints = 0;
  uint32_t n_public = 0;
  uint64_t seed = 0;
};

// What the parameters imply, known before anything is generated (the row shapes do not depend on
// the random draws, so the file sizes are exact).
struct SynthShape {
  uint32_t n_wires = 0;    // 1 + n_public + n_prv_in + n_constraints
  uint32_t n_prv_in = 0;
  uint64_t n_terms[3] = {0, 0, 0};  // A, B, C over all rows
  uint64_t constraints_bytes = 0;   // payload of the .r1cs constraints section
  uint64_t r1cs_bytes = 0;
  uint64_t wtns_bytes = 0;
};

// Checks the parameters: CUZK_ERR_INVALID_ARGUMENT (with the reason) or CUZK_OK and the shape.
formats::Status synth_shape(const SynthParams& params, SynthShape& out, std::string& err);

// Which witness of the circuit is made, and how it is written.
struct SynthWitness {
  uint64_t seed = 0;  // 0: the circuit's own inputs; else the public and private inputs drawn from it
  bool raw = false;   // only the n_wires x 32 value bytes (what cuzk_prove takes), not a .wtns file
};

// Generates the circuit: the .r1cs bytes go to `r1cs` (NULL: not made) as the rows are made, the
// witness to `wtns`. The parameters must have passed synth_shape. Throws IoError when a sink fails.
void synth_generate(const SynthParams& params, ByteSink* r1cs, ByteSink& wtns, const SynthWitness& witness = {});

// The same bytes by the generic solver (every row solved in Fr): the reference the porep profile's
// fast generator is tested against.
void synth_generate_reference(const SynthParams& params, ByteSink* r1cs, ByteSink& wtns,
                              const SynthWitness& witness = {});

}  // namespace cuzk::setup
