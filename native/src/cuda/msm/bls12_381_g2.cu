// The MSM kernels for BLS12-381 G2, compiled here once (see msm.cuh).
#include "cuda/msm/msm.cuh"

namespace cuzk::cuda {
using HC = curve::Bls12381;
template cuzk_status msm_accumulate_into<HC, 2>(const MsmPlan&, const Group<HC, 2>::Affine*, MsmScratch&,
                                                cudaStream_t, Group<HC, 2>::Xyzz*, bool, std::string&,
                                                const MsmShape*);
template cuzk_status msm_walk_in_waves<HC, 2>(const MsmPlan&, bool, MsmShape&, std::string&);
template cuzk_status msm_add_ones<HC, 2>(const MsmPlan&, const Group<HC, 2>::Affine*, MsmScratch&, cudaStream_t,
                                         Group<HC, 2>::Xyzz*, std::string&);
template cuzk_status msm_reduce_into<HC, 2>(int, int, const Group<HC, 2>::Xyzz*, MsmScratch&, cudaStream_t,
                                            Group<HC, 2>::Xyzz*, std::string&);
}  // namespace cuzk::cuda
