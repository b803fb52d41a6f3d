// The process-wide float32 matmul precision: one atomic, read on every float32 matmul.
#include "tensorlet/backends/matmul_precision.h"

#include <atomic>

namespace tensorlet {
namespace {
std::atomic<MatmulPrecision> g_precision{MatmulPrecision::Highest};  // PyTorch's default
}  // namespace

void set_matmul_precision(MatmulPrecision precision) {
  g_precision.store(precision, std::memory_order_relaxed);
}
MatmulPrecision matmul_precision() { return g_precision.load(std::memory_order_relaxed); }

}  // namespace tensorlet
