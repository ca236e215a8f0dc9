// The MSM kernels for BLS12-381 G1, compiled here once (see msm.cuh).
#include "cuda/msm/msm.cuh"

namespace cuzk::cuda {
using HC = curve::Bls12381;
template cuzk_status msm_accumulate_into<HC, 1>(const MsmPlan&, const Group<HC, 1>::Affine*, MsmScratch&,
                                                cudaStream_t, Group<HC, 1>::Xyzz*, bool, std::string&,
                                                const MsmShape*);
template cuzk_status msm_walk_in_waves<HC, 1>(const MsmPlan&, bool, MsmShape&, std::string&);
template cuzk_status msm_add_ones<HC, 1>(const MsmPlan&, const Group<HC, 1>::Affine*, MsmScratch&, cudaStream_t,
                                         Group<HC, 1>::Xyzz*, std::string&);
template cuzk_status msm_reduce_into<HC, 1>(int, int, const Group<HC, 1>::Xyzz*, MsmScratch&, cudaStream_t,
                                            Group<HC, 1>::Xyzz*, std::string&);
// The scalar side (digits, sort) of every MSM over this curve's Fr.
template cuzk_status msm_plan<HC::Fr::Params>(MsmPlan&, const uint32_t*, uint32_t, bool, int, cudaStream_t, std::string&,
                                               int, uint32_t, int);
template cuzk_status msm_sort_windows<HC::Fr::Params>(MsmPlan&, int, cudaStream_t, std::string&);
}  // namespace cuzk::cuda
