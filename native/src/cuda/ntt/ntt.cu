// The NTT drivers and kernels for both scalar fields, compiled here once; see ntt.cuh.
#include "cuda/ntt/ntt_context.cuh"

namespace cuzk::cuda {

template class NttContext<curve::Bn254::Fr, DeviceCurve<curve::Bn254>::Fr>;
template class NttContext<curve::Bls12381::Fr, DeviceCurve<curve::Bls12381>::Fr>;

}  // namespace cuzk::cuda
