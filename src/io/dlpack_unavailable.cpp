// DLPack exchange in a build without <dlpack/dlpack.h> (libdlpack-dev): both calls say so.
#include "tensorlet/io/dlpack.h"

#include "tensorlet/tensor/error.h"

namespace tensorlet {

DLManagedTensor* to_dlpack(const Tensor&, std::optional<std::intptr_t>) {
  fail<Error>("tl::to_dlpack",
              "tensorlet was built without DLPack (install libdlpack-dev and rebuild)");
}

Tensor from_dlpack(DLManagedTensor*, std::optional<std::intptr_t>) {
  fail<Error>("tl::from_dlpack",
              "tensorlet was built without DLPack (install libdlpack-dev and rebuild)");
}

}  // namespace tensorlet
