// TL_HOST_DEVICE: marks header code that the CPU and the CUDA kernels share.
#pragma once

#if defined(__CUDACC__)
#define TL_HOST_DEVICE __host__ __device__
#else
#define TL_HOST_DEVICE
#endif
