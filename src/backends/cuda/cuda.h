// tl::cuda device queries that exist in every build: without the CUDA backend, a driver or a GPU
// they report no devices instead of failing, so programs can choose a device at run time.
#pragma once

namespace tensorlet::cuda {

// True when tensorlet was built with its CUDA backend.
bool is_built();
// True when the CUDA backend is built and at least one CUDA device can be used.
bool is_available();
// The number of usable CUDA devices; 0 without the backend, a driver or a GPU.
int device_count();

}  // namespace tensorlet::cuda
