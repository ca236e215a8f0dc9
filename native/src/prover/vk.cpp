#include "prover/vk.hpp"

#include "pairing/pairing.hpp"

namespace cuzk::prover {

namespace {

// The size protocol of the export calls: *len = need always; SHORT_BUFFER unless out holds it.
bool room_for(size_t need, const uint8_t* out, size_t cap, size_t* len, const char* what, std::string& err) {
  if (len) *len = need;
  if (out && cap >= need) return true;
  err = std::string(what) + " buffer holds " + std::to_string(cap) + " bytes; " + std::to_string(need) + " needed";
  return false;
}

}  // namespace

cuzk_status export_vk(const formats::ZkeyGroth16& z, uint8_t* out, size_t cap, size_t* len, std::string& err) {
  auto write = [&](auto tag) -> cuzk_status {
    using C = decltype(tag);
    if (!room_for(vk_bytes<C>(z.n_public), out, cap, len, "vk", err)) return CUZK_ERR_SHORT_BUFFER;
    vk_write<C>(vk_from_zkey<C>(z), out);
    return CUZK_OK;
  };
  return z.curve == CUZK_CURVE_BN254 ? write(curve::Bn254{}) : write(curve::Bls12381{});
}

cuzk_status export_vk_alphabeta(const formats::ZkeyGroth16& z, uint8_t* out, size_t cap, size_t* len, std::string& err) {
  auto write = [&](auto tag) -> cuzk_status {
    using C = decltype(tag);
    using Fq = typename C::Fq;
    if (!room_for(12 * Fq::BYTES, out, cap, len, "vk_alphabeta", err)) return CUZK_ERR_SHORT_BUFFER;
    auto alpha1 = curve::load_key_point<Fq>(z.alpha1);
    auto beta2 = curve::load_key_point<typename C::Fq2>(z.beta2);
    if (!pairing::in_subgroup_g1<C>(alpha1) || !pairing::in_subgroup_g2<C>(beta2)) {
      err = std::string("the key's alpha1 or beta2 is not in its order-r subgroup (") + C::name() + "): no pairing to export";
      return CUZK_ERR_FORMAT;
    }
    pairing::Fq12<C> e = pairing::pairing_snarkjs<C>(alpha1, beta2);
    for (const auto* six : {&e.c0, &e.c1})
      for (const auto* two : {&six->c0, &six->c1, &six->c2}) {
        two->to_bytes_std(out);
        out += 2 * Fq::BYTES;
      }
    return CUZK_OK;
  };
  return z.curve == CUZK_CURVE_BN254 ? write(curve::Bn254{}) : write(curve::Bls12381{});
}

}  // namespace cuzk::prover
