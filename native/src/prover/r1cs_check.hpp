// Checks a witness against the circuit's .r1cs, constraint by constraint, in parallel, and names
// the first constraint that fails: the clear error a caller needs instead of an invalid proof.
#pragma once

#include <string>

#include "cuzk.h"
#include "formats/r1cs.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::prover {

// w: n_wires values, 32 bytes each, standard LE, already checked < r.
// CUZK_OK, or CUZK_ERR_UNSATISFIED with the index of the first failing constraint in `err`.
template <class C>
cuzk_status check_r1cs_witness(const formats::R1cs& r1cs, const uint8_t* w, ThreadPool& pool, std::string& err);

}  // namespace cuzk::prover
