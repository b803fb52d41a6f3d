// nonzero, masked_select, index_select and gather on CUDA, and the index bounds the front-end
// checks before any of them writes. nonzero and masked_select synchronize once, for their size.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/block/block_reduce.cuh>

#include "tensorlet/backends/cuda/cuda_capture.h"
#include "tensorlet/backends/cuda/cuda_index_compact.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"

namespace tensorlet::cuda {
namespace {

using compact::FlagSource;
using compact::kThreads;
using compact::kTile;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <typename Bits>
FlagSource<Bits> flag_source(const Tensor& t, Bits mask) {
  FlagSource<Bits> src;
  src.data = static_cast<const Bits*>(t.data_ptr());
  src.mask = mask;
  src.ix = make_indexer<1>(t.shape(), {&t});
  src.contiguous = is_contiguous_run(src.ix);
  src.vector = src.contiguous && reinterpret_cast<uintptr_t>(src.data) % 16 == 0;
  return src;
}

// The bits that make an element of this dtype non-zero (not the sign bit of a float: -0.0 == 0;
// float16 and bfloat16 too keep their sign in the top bit).
template <typename Bits>
Bits nonzero_mask(DType dtype) {
  const Bits all = static_cast<Bits>(~Bits{0});
  return is_floating_point(dtype) ? static_cast<Bits>(all >> 1) : all;
}

// Counts the selected elements of every tile and turns the counts into the ends of each tile's
// output (`ends`, one int64 per tile). Returns the total: the op's one wait for the device.
template <typename Bits, typename IndexT>
int64_t count_selected(const FlagSource<Bits>& src, IndexT n, int64_t tiles, int64_t* ends,
                       cudaStream_t s) {
  compact::count_kernel<Bits, IndexT>
      <<<static_cast<unsigned>(tiles), kThreads, 0, s>>>(src, n, ends);
  check_launch(s, "compact::count_kernel");
  if (tiles > 1) {
    compact::scan_kernel<<<1, compact::kScanThreads, 0, s>>>(ends, tiles);
    check_launch(s, "compact::scan_kernel");
  }
  int64_t total = 0;
  check_not_capturing("waits for the GPU to learn how many elements it returns");
  TL_CUDA_CHECK(cudaMemcpyAsync(&total, ends + tiles - 1, sizeof total, cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaStreamSynchronize(s));
  return total;
}

template <typename Bits, typename IndexT>
Tensor nonzero_impl(const Tensor& in, cudaStream_t s) {
  const int64_t n = in.numel(), nd = in.dim();
  const Device device = in.device();
  const FlagSource<Bits> src = flag_source<Bits>(in, nonzero_mask<Bits>(in.dtype()));
  const int64_t tiles = ceil_div(n, kTile<Bits>);
  Tensor ends = make_tensor({tiles}, kInt64, device);
  int64_t* ends_ptr = static_cast<int64_t*>(ends.data_ptr());
  const int64_t total =
      count_selected<Bits, IndexT>(src, static_cast<IndexT>(n), tiles, ends_ptr, s);
  Tensor out = make_tensor({total, nd}, kInt64, device);
  if (total == 0 || nd == 0) return out;
  compact::Unravel un;
  un.ndim = static_cast<int>(nd);
  un.by_ndim = FastDiv(static_cast<uint32_t>(nd));
  int64_t inner = 1;
  for (int64_t d = nd - 1; d >= 0; --d) {
    un.inner[d] = inner;
    un.size[d] = in.shape()[d];
    if constexpr (sizeof(IndexT) == 4) {
      un.inner32[d] = FastDiv(static_cast<uint32_t>(inner));
      un.size32[d] = FastDiv(static_cast<uint32_t>(in.shape()[d]));
    }
    inner *= in.shape()[d];
  }
  compact::nonzero_kernel<Bits, IndexT><<<static_cast<unsigned>(tiles), kThreads, 0, s>>>(
      src, static_cast<IndexT>(n), ends_ptr, un, static_cast<int64_t*>(out.data_ptr()));
  check_launch(s, "compact::nonzero_kernel");
  return out;
}

template <typename IndexT>
Tensor masked_select_impl(const Tensor& in, const Tensor& mask, cudaStream_t s) {
  const int64_t n = in.numel();
  const Device device = in.device();
  const FlagSource<uint8_t> src = flag_source<uint8_t>(mask, 0xff);
  const int64_t tiles = ceil_div(n, kTile<uint8_t>);
  Tensor ends = make_tensor({tiles}, kInt64, device);
  int64_t* ends_ptr = static_cast<int64_t*>(ends.data_ptr());
  const int64_t total =
      count_selected<uint8_t, IndexT>(src, static_cast<IndexT>(n), tiles, ends_ptr, s);
  Tensor out = make_tensor({total}, in.dtype(), device);
  if (total == 0) return out;
  const StridedIndexer<1> in_ix = make_indexer<1>(in.shape(), {&in});
  const bool in_contiguous = is_contiguous_run(in_ix);
  dispatch_bits(in.element_size(), [&]<typename V>() {
    compact::masked_select_kernel<V, IndexT><<<static_cast<unsigned>(tiles), kThreads, 0, s>>>(
        src, static_cast<IndexT>(n), ends_ptr, static_cast<const V*>(in.data_ptr()), in_ix,
        in_contiguous, static_cast<V*>(out.data_ptr()));
    check_launch(s, "compact::masked_select_kernel");
  });
  return out;
}

// ---- index_select and gather: out[p] = in[p with coordinate `dim` replaced by an index value] ---

constexpr int kTakeThreads = 256;

// Operands of ix: 0 = out, 1 = in with a zero stride along dim, 2 = the index value for p.
template <typename T, typename IndexT>
__global__ void __launch_bounds__(kTakeThreads)
    take_kernel(T* __restrict__ out, const T* __restrict__ in, const int64_t* __restrict__ index,
                const __grid_constant__ StridedIndexer<3> ix, int64_t step, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t off[3];
    ix.offsets(static_cast<IndexT>(i), off);
    out[off[0]] = in[off[1] + index[off[2]] * step];
  }
}

// index_strides: the index operand's stride for each of out's dims (0 where it does not vary).
void take_along(const Tensor& in, int64_t dim, const Tensor& index,
                const int64_t (&index_strides)[kMaxDims], const Tensor& out) {
  const int64_t n = out.numel(), nd = out.dim();
  if (n == 0) return;
  int64_t strides[3][kMaxDims];
  for (int64_t d = 0; d < nd; ++d) {
    strides[0][d] = out.strides()[d];
    strides[1][d] = d == dim ? 0 : in.strides()[d];
    strides[2][d] = index_strides[d];
  }
  const StridedIndexer<3> ix = make_indexer_raw<3>(nd, out.shape().data(), strides);
  const int64_t step = in.dim() > 0 ? in.strides()[dim] : 0;
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  cudaStream_t s = current_stream_handle(out.device().index());
  const unsigned grid = grid_for(n, kTakeThreads);
  dispatch_bits(in.element_size(), [&]<typename T>() {
    T* dst = static_cast<T*>(out.data_ptr());
    const T* src = static_cast<const T*>(in.data_ptr());
    if (n < kMax32BitElements) {
      take_kernel<T, uint32_t><<<grid, kTakeThreads, 0, s>>>(dst, src, idx, ix, step, n);
    } else {
      take_kernel<T, uint64_t><<<grid, kTakeThreads, 0, s>>>(dst, src, idx, ix, step, n);
    }
    check_launch(s, "take_kernel");
  });
}

// ---- index bounds ---------------------------------------------------------------------------

constexpr int kBoundsThreads = 256;
constexpr int64_t kBoundsOneBlock = 16384;  // up to here one block does it all (no atomics)
constexpr unsigned kBoundsMaxBlocks = 1024;
constexpr uint64_t kSignBit = uint64_t{1} << 63;

// Signed order as unsigned order, so one atomicMax per bound merges blocks; the min is kept as
// the max of the complement. A zeroed pair is the identity of both.
__device__ __forceinline__ unsigned long long max_key(int64_t v) {
  return static_cast<uint64_t>(v) ^ kSignBit;
}
__device__ __forceinline__ unsigned long long min_key(int64_t v) {
  return ~(static_cast<uint64_t>(v) ^ kSignBit);
}

// keys[0] = min_key(min), keys[1] = max_key(max) of the n index values. With one block the keys
// are stored; with several they are merged into keys zeroed beforehand.
template <typename I>
__global__ void __launch_bounds__(kBoundsThreads)
    index_bounds_kernel(const I* __restrict__ index, const __grid_constant__ StridedIndexer<1> ix,
                        bool contiguous, int64_t n, unsigned long long* keys) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t off = i;
    if (!contiguous) {
      off = n < kMax32BitElements ? element_offset(ix, static_cast<uint32_t>(i))
                                  : element_offset(ix, static_cast<uint64_t>(i));
    }
    const int64_t v = index[off];
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  using Reduce = cub::BlockReduce<int64_t, kBoundsThreads>;
  __shared__ typename Reduce::TempStorage storage;
  lo = Reduce(storage).Reduce(lo, [](int64_t a, int64_t b) { return a < b ? a : b; });
  __syncthreads();
  hi = Reduce(storage).Reduce(hi, [](int64_t a, int64_t b) { return a > b ? a : b; });
  if (threadIdx.x != 0) return;
  if (gridDim.x == 1) {
    keys[0] = min_key(lo);
    keys[1] = max_key(hi);
  } else {
    atomicMax(keys, min_key(lo));
    atomicMax(keys + 1, max_key(hi));
  }
}

}  // namespace

Tensor nonzero(const Tensor& in) {
  const int64_t n = in.numel();
  if (n == 0) return make_tensor({0, in.dim()}, kInt64, in.device());
  cudaStream_t s = current_stream_handle(in.device().index());
  Tensor out;
  dispatch_bits(in.element_size(), [&]<typename Bits>() {
    out = n < kMax32BitElements ? nonzero_impl<Bits, uint32_t>(in, s)
                                : nonzero_impl<Bits, uint64_t>(in, s);
  });
  return out;
}

Tensor masked_select(const Tensor& in, const Tensor& mask) {
  const int64_t n = in.numel();
  if (n == 0) return make_tensor({0}, in.dtype(), in.device());
  cudaStream_t s = current_stream_handle(in.device().index());
  return n < kMax32BitElements ? masked_select_impl<uint32_t>(in, mask, s)
                               : masked_select_impl<uint64_t>(in, mask, s);
}

void index_select(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) {
  int64_t index_strides[kMaxDims] = {};
  index_strides[dim] = index.strides()[0];
  take_along(in, dim, index, index_strides, out);
}

void gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) {
  int64_t index_strides[kMaxDims] = {};
  for (int64_t d = 0; d < index.dim(); ++d) index_strides[d] = index.strides()[d];
  take_along(in, dim, index, index_strides, out);
}

void index_bounds(const Tensor& index, int64_t* lo, int64_t* hi) {
  const int device = index.device().index();
  OnDevice on_device(device);
  // Dims of one element or of stride 0 (an expanded index) repeat values: the bounds do not
  // need them, and an expanded index is read once per distinct value.
  int64_t sizes[kMaxDims], strides[1][kMaxDims];
  int64_t nd = 0, n = 1;
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (index.shape()[d] == 1 || index.strides()[d] == 0) continue;
    sizes[nd] = index.shape()[d];
    strides[0][nd] = index.strides()[d];
    n *= sizes[nd++];
  }
  const StridedIndexer<1> ix = make_indexer_raw<1>(nd, sizes, strides);
  const bool contiguous = is_contiguous_run(ix);
  cudaStream_t s = current_stream_handle(device);
  Tensor keys_tensor = make_tensor({2}, kInt64, index.device());
  auto* keys = static_cast<unsigned long long*>(keys_tensor.data_ptr());
  unsigned grid = 1;
  if (n > kBoundsOneBlock) {
    grid = std::min(grid_for(n, kBoundsThreads * 16), kBoundsMaxBlocks);
    TL_CUDA_CHECK(cudaMemsetAsync(keys, 0, 2 * sizeof(unsigned long long), s));
  }
  if (index.dtype() == kInt32) {
    index_bounds_kernel<int32_t><<<grid, kBoundsThreads, 0, s>>>(
        static_cast<const int32_t*>(index.data_ptr()), ix, contiguous, n, keys);
  } else {
    index_bounds_kernel<int64_t><<<grid, kBoundsThreads, 0, s>>>(
        static_cast<const int64_t*>(index.data_ptr()), ix, contiguous, n, keys);
  }
  check_launch(s, "index_bounds_kernel");
  uint64_t host[2] = {0, 0};
  check_not_capturing("waits for the GPU to check that its indices are in range");
  TL_CUDA_CHECK(cudaMemcpyAsync(host, keys, sizeof host, cudaMemcpyDeviceToHost, s));
  TL_CUDA_CHECK(cudaStreamSynchronize(s));
  *lo = static_cast<int64_t>(~host[0] ^ kSignBit);
  *hi = static_cast<int64_t>(host[1] ^ kSignBit);
}

}  // namespace tensorlet::cuda
