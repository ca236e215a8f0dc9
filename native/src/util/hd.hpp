// CUZK_HD marks code shared by host and device (curve formulas over any field type).
#pragma once
#if defined(__CUDACC__)
#define CUZK_HD __host__ __device__ __forceinline__
#else
#define CUZK_HD inline
#endif
