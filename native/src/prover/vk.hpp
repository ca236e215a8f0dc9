// The verification key: taken from a proving key, written in the byte layout of
// cuzk_key_export_vk, and read back for cuzk_verify. One place knows that layout.
#pragma once

#include <string>
#include <vector>

#include "cuzk.h"
#include "curve/ops.hpp"
#include "formats/zkey.hpp"
#include "pairing/verify.hpp"

namespace cuzk::prover {

// alpha1 (G1) | beta2 (G2) | gamma2 (G2) | delta2 (G2) | IC[0..n_public] (G1), output encoding.
template <class C>
size_t vk_bytes(size_t n_public) {
  return C::G1_BYTES + 3 * C::G2_BYTES + (n_public + 1) * C::G1_BYTES;
}

template <class C>
pairing::VerifyingKey<C> vk_from_zkey(const formats::ZkeyGroth16& z) {
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  pairing::VerifyingKey<C> vk;
  vk.alpha1 = curve::load_key_point<Fq>(z.alpha1);
  vk.beta2 = curve::load_key_point<Fq2>(z.beta2);
  vk.gamma2 = curve::load_key_point<Fq2>(z.gamma2);
  vk.delta2 = curve::load_key_point<Fq2>(z.delta2);
  vk.ic.resize((size_t)z.n_public + 1);
  for (size_t i = 0; i < vk.ic.size(); i++) vk.ic[i] = curve::load_key_point<Fq>(z.ic + i * C::G1_BYTES);
  return vk;
}

template <class C>
void vk_write(const pairing::VerifyingKey<C>& vk, uint8_t* out) {
  curve::store_output_point(vk.alpha1, out);
  out += C::G1_BYTES;
  for (const auto* g2 : {&vk.beta2, &vk.gamma2, &vk.delta2}) {
    curve::store_output_point(*g2, out);
    out += C::G2_BYTES;
  }
  for (const auto& p : vk.ic) {
    curve::store_output_point(p, out);
    out += C::G1_BYTES;
  }
}

// Reads a vk for n_public public signals; checks every coordinate is < q and every point is on
// its curve (the pairing code checks subgroups).
template <class C>
cuzk_status vk_read(const uint8_t* in, size_t len, size_t n_public, pairing::VerifyingKey<C>& vk, std::string& err) {
  using Fq = typename C::Fq;
  using Fq2 = typename C::Fq2;
  if (len != vk_bytes<C>(n_public)) {
    err = "verification key is " + std::to_string(len) + " bytes; " + std::to_string(vk_bytes<C>(n_public)) +
          " expected for " + std::to_string(n_public) + " public signals on " + C::name();
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  bool ok = true;
  auto g1 = [&](const uint8_t* p) {
    auto pt = curve::load_output_point<Fq>(p);
    Fq x, y;
    std::memcpy(x.l, p, Fq::BYTES);
    std::memcpy(y.l, p + Fq::BYTES, Fq::BYTES);
    ok &= x.is_canonical() && y.is_canonical() && curve::is_on_curve<C, Fq>(pt);
    return pt;
  };
  auto g2 = [&](const uint8_t* p) {
    auto pt = curve::load_output_point<Fq2>(p);
    for (int k = 0; k < 4; k++) {
      Fq v;
      std::memcpy(v.l, p + k * Fq::BYTES, Fq::BYTES);
      ok &= v.is_canonical();
    }
    ok &= curve::is_on_curve<C, Fq2>(pt);
    return pt;
  };
  vk.alpha1 = g1(in);
  in += C::G1_BYTES;
  vk.beta2 = g2(in);
  vk.gamma2 = g2(in + C::G2_BYTES);
  vk.delta2 = g2(in + 2 * C::G2_BYTES);
  in += 3 * C::G2_BYTES;
  vk.ic.resize(n_public + 1);
  for (auto& p : vk.ic) {
    p = g1(in);
    in += C::G1_BYTES;
  }
  if (!ok) {
    err = "verification key holds a coordinate >= q or a point off the curve";
    return CUZK_ERR_INVALID_ARGUMENT;
  }
  return CUZK_OK;
}

// Writes the key's verification key for cuzk_key_export_vk (out may be NULL to ask the size).
cuzk_status export_vk(const formats::ZkeyGroth16& zkey, uint8_t* out, size_t cap, size_t* len, std::string& err);

// Writes e(alpha1, beta2) for cuzk_key_export_vk_alphabeta as snarkjs's vk_alphabeta_12 holds it
// (pairing::pairing_snarkjs): 12 Fq, standard form LE, Fq12 = Fq6[w], Fq6 = Fq2[v] (tower.hpp) in
// the order c0.c0.c0, c0.c0.c1, c0.c1.c0, ..., c1.c2.c1, which is the order of snarkjs's JSON
// [[[c000, c001], [c010, c011], [c020, c021]], [[c100, c101], ...]]. out may be NULL to ask the size.
// CUZK_ERR_FORMAT when alpha1 or beta2 lies outside its order-r subgroup (the value would mean nothing).
cuzk_status export_vk_alphabeta(const formats::ZkeyGroth16& zkey, uint8_t* out, size_t cap, size_t* len, std::string& err);

}  // namespace cuzk::prover
