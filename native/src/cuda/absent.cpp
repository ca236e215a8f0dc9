// The CUDA seam in a build without the CUDA backend: the library reports, through every call,
// that it was built without CUDA, and the CPU backend serves everything.
#ifndef CUZK_WITH_CUDA

#include "cuda/backend.hpp"

namespace cuzk::cuda {

namespace {
cuzk_status absent(std::string& err) {
  err = "this library was built without the CUDA backend (configure with nvcc present, CUZK_CUDA=AUTO or ON)";
  return CUZK_ERR_UNSUPPORTED;
}
}  // namespace

bool compiled_in() { return false; }
cuzk_status device_count(int* out, std::string&) {
  *out = 0;
  return CUZK_OK;
}
cuzk_status device_info(int, cuzk_device_info*, std::string& err) {
  err = "no GPU: this library was built without the CUDA backend";
  return CUZK_ERR_NO_DEVICE;
}
int runtime_version() { return 0; }
int driver_version() { return 0; }
cuzk_status open_device(int, DeviceContext**, std::string& err) { return absent(err); }
void close_device(DeviceContext*) {}

template <class C>
cuzk_status make_engine(DeviceContext*, const engine::KeyView<C>&, const engine::EngineOptions&, const Progress&,
                        std::unique_ptr<engine::Engine<C>>*, std::string& err) {
  return absent(err);
}
template cuzk_status make_engine<curve::Bn254>(DeviceContext*, const engine::KeyView<curve::Bn254>&,
                                               const engine::EngineOptions&, const Progress&,
                                               std::unique_ptr<engine::Engine<curve::Bn254>>*, std::string&);
template cuzk_status make_engine<curve::Bls12381>(DeviceContext*, const engine::KeyView<curve::Bls12381>&,
                                                  const engine::EngineOptions&, const Progress&,
                                                  std::unique_ptr<engine::Engine<curve::Bls12381>>*, std::string&);

cuzk_status msm(DeviceContext*, cuzk_curve, cuzk_group, const uint8_t*, const uint8_t*, size_t, uint8_t*, engine::PhaseTimes&,
                std::string& err) {
  return absent(err);
}
cuzk_status ntt(DeviceContext*, cuzk_curve, uint8_t*, uint32_t, uint32_t, engine::PhaseTimes&, std::string& err) {
  return absent(err);
}
cuzk_status fixed_base_mul(DeviceContext*, cuzk_curve, cuzk_group, const uint8_t*, size_t, uint8_t*, std::string& err) {
  return absent(err);
}
cuzk_status host_alloc_pinned(size_t, int, void**, std::string& err) { return absent(err); }
cuzk_status host_free_pinned(void*, std::string& err) { return absent(err); }
cuzk_status host_register(void*, size_t, std::string& err) { return absent(err); }
cuzk_status host_unregister(void*, std::string& err) { return absent(err); }
void staging_stats(uint64_t* bytes, uint64_t* allocations, uint64_t* ns) { *bytes = *allocations = *ns = 0; }

}  // namespace cuzk::cuda

#endif  // CUZK_WITH_CUDA
