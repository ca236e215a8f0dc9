#include "prover/vk.hpp"

namespace cuzk::prover {

cuzk_status export_vk(const formats::ZkeyGroth16& z, uint8_t* out, size_t cap, size_t* len, std::string& err) {
  auto write = [&](auto tag) -> cuzk_status {
    using C = decltype(tag);
    size_t need = vk_bytes<C>(z.n_public);
    if (len) *len = need;
    if (!out || cap < need) {
      err = "vk buffer holds " + std::to_string(cap) + " bytes; " + std::to_string(need) + " needed";
      return CUZK_ERR_SHORT_BUFFER;
    }
    vk_write<C>(vk_from_zkey<C>(z), out);
    return CUZK_OK;
  };
  return z.curve == CUZK_CURVE_BN254 ? write(curve::Bn254{}) : write(curve::Bls12381{});
}

}  // namespace cuzk::prover
