// cat on CUDA: one launch copies a batch of up to kCatBatch inputs, each described in the
// kernel's parameters (its pointer, row length, column in the output and row stride, or a strided
// indexer for inputs whose rows are not contiguous).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tensorlet/backends/cuda/cuda_index_common.cuh"
#include "tensorlet/backends/cuda/cuda_kernels.h"

namespace tensorlet::cuda {
namespace {

constexpr int kCatThreads = 256;
constexpr int kCatItems = 4;  // elements (or 16-byte vectors) per thread, loaded together
constexpr int kCatChunk = kCatThreads * kCatItems;
constexpr int kCatBatch = 48;  // inputs per launch
constexpr int kCatSlots = 4;   // of which strided (each needs a 264-byte indexer)
// Rows shorter than this (stack along the last dim, dstack) are written output-major, so that a
// warp's stores are coalesced instead of one element per input row.
constexpr int64_t kShortRowBytes = 64;

// The output and every input seen as [outer, row] (dims before `dim` flattened into rows): input
// element (o, c) is at src[o * row_stride + c] (or at its strided indexer's offset of o * len + c
// when slot >= 0) and goes to out[o * out_row + col + c]. Lengths are in units of the kernel's
// element type.
struct CatEntry {
  const void* src;
  int64_t len;
  int64_t col;
  int64_t row_stride;
  int64_t first_block;  // by-input kernel: the first block that copies this input
  FastDiv len_div;      // by-input kernel, 32-bit index math
  int32_t slot;
};

struct CatBatch {
  void* out;
  int64_t outer, out_row;
  int64_t col_first, width;  // the output columns this batch fills
  FastDiv width_div;         // by-output kernel
  FastDiv len_div;           // by-output kernel, when every input has the same len
  int32_t count;
  int32_t uniform;
  CatEntry entries[kCatBatch];
  StridedIndexer<1> slots[kCatSlots];
};
static_assert(sizeof(CatBatch) <= 4096, "kernel parameters are limited to 4 KB");

// Each block copies kCatChunk consecutive elements of one input: contiguous runs of long rows,
// loaded 16 bytes at a time when everything is aligned (T = uint4).
template <typename T, typename IndexT>
__global__ void __launch_bounds__(kCatThreads)
    cat_by_input_kernel(const __grid_constant__ CatBatch b) {
  // The input of this block: the last one whose first block is not after it (uniform per block).
  int lo = 0, hi = b.count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (b.entries[mid].first_block <= blockIdx.x) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const CatEntry& e = b.entries[lo];
  const IndexT len = static_cast<IndexT>(e.len);
  const IndexT total = static_cast<IndexT>(b.outer) * len;
  const IndexT start = static_cast<IndexT>(blockIdx.x - e.first_block) * kCatChunk;
  const T* src = static_cast<const T*>(e.src);
  T* out = static_cast<T*>(b.out) + e.col;
  T v[kCatItems];
  int64_t to[kCatItems];
#pragma unroll
  for (int k = 0; k < kCatItems; ++k) {
    const IndexT i = start + k * kCatThreads + threadIdx.x;
    to[k] = -1;
    if (i >= total) continue;
    IndexT o;
    if constexpr (sizeof(IndexT) == 4) {
      o = e.len_div.div(i);
    } else {
      o = i / len;
    }
    const IndexT c = i - o * len;
    const int64_t from = e.slot < 0 ? static_cast<int64_t>(o) * e.row_stride + c
                                    : element_offset(b.slots[e.slot], i);
    v[k] = src[from];
    to[k] = static_cast<int64_t>(o) * b.out_row + c;
  }
#pragma unroll
  for (int k = 0; k < kCatItems; ++k)
    if (to[k] >= 0) out[to[k]] = v[k];
}

// Each thread writes consecutive output elements and finds the input of each: for short rows, where
// input-major copying would scatter every warp's stores over as many rows. No strided inputs;
// 32-bit index math.
template <typename T>
__global__ void __launch_bounds__(kCatThreads)
    cat_by_output_kernel(const __grid_constant__ CatBatch b) {
  // Threads of a warp read different inputs' fields: shared memory serves them in one pass.
  __shared__ uint32_t col[kCatBatch];  // relative to the batch's first column
  __shared__ uint32_t len[kCatBatch];
  __shared__ int64_t row_stride[kCatBatch];
  __shared__ const T* src[kCatBatch];
  for (int k = threadIdx.x; k < b.count; k += kCatThreads) {
    col[k] = static_cast<uint32_t>(b.entries[k].col - b.col_first);
    len[k] = static_cast<uint32_t>(b.entries[k].len);
    row_stride[k] = b.entries[k].row_stride;
    src[k] = static_cast<const T*>(b.entries[k].src);
  }
  __syncthreads();
  const uint32_t n = static_cast<uint32_t>(b.outer * b.width);
  const uint32_t width = static_cast<uint32_t>(b.width);
  const uint32_t start = blockIdx.x * kCatChunk;
  T* out = static_cast<T*>(b.out) + b.col_first;
  T v[kCatItems];
  int64_t to[kCatItems];
#pragma unroll
  for (int k = 0; k < kCatItems; ++k) {
    const uint32_t j = start + k * kCatThreads + threadIdx.x;
    to[k] = -1;
    if (j >= n) continue;
    const uint32_t o = b.width_div.div(j);
    const uint32_t c = j - o * width;
    int in = 0;
    if (b.uniform) {
      in = static_cast<int>(b.len_div.div(c));
    } else {
      int hi = b.count - 1;
      while (in < hi) {
        const int mid = (in + hi + 1) / 2;
        if (col[mid] <= c) {
          in = mid;
        } else {
          hi = mid - 1;
        }
      }
    }
    v[k] = src[in][static_cast<int64_t>(o) * row_stride[in] + (c - col[in])];
    to[k] = static_cast<int64_t>(o) * b.out_row + c;
  }
#pragma unroll
  for (int k = 0; k < kCatItems; ++k)
    if (to[k] >= 0) out[to[k]] = v[k];
}

// True when in's elements, seen as [outer, len], sit at o * row_stride + c: the dims from `dim`
// on are contiguous and the dims before it flatten into one stride (contiguous inputs, slices
// along an outer dim, expanded outer dims).
bool rows_of(const Tensor& in, int64_t dim, int64_t len, int64_t* row_stride) {
  const Shape& shape = in.shape();
  const Shape& strides = in.strides();
  int64_t expected = 1;
  for (int64_t d = in.dim() - 1; d >= dim; --d) {
    if (shape[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  int64_t stride = len, next = -1;  // next: the stride the next outer dim must have
  for (int64_t d = dim - 1; d >= 0; --d) {
    if (shape[d] == 1) continue;
    if (next < 0) {
      stride = strides[d];
    } else if (strides[d] != next) {
      return false;
    }
    next = strides[d] * shape[d];
  }
  *row_stride = stride;
  return true;
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

class CatLauncher {
 public:
  CatLauncher(const Tensor& out, int64_t dim, cudaStream_t stream)
      : es_(static_cast<int64_t>(out.element_size())),
        idx32_(out.numel() < kMax32BitElements),
        stream_(stream) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= out.shape()[d];
    for (int64_t d = dim + 1; d < out.dim(); ++d) inner *= out.shape()[d];
    inner_ = inner;
    b_.out = out.data_ptr();
    b_.outer = outer;
    b_.out_row = out.shape()[dim] * inner;
    b_.count = 0;
  }

  // Adds the input that fills output columns from `along` (in units along dim) on.
  void add(const Tensor& in, int64_t dim, int64_t along) {
    const int64_t len = in.shape()[dim] * inner_;
    if (len == 0) return;
    int64_t row_stride = len;
    const bool strided = !in.is_contiguous() && !rows_of(in, dim, len, &row_stride);
    if (b_.count == kCatBatch || (strided && slots_ == kCatSlots)) flush();
    CatEntry& e = b_.entries[b_.count++];
    e.src = in.data_ptr();
    e.len = len;
    e.col = along * inner_;
    e.row_stride = row_stride;
    e.slot = -1;
    if (strided) {
      b_.slots[slots_] = make_indexer<1>(in.shape(), {&in});
      e.slot = slots_++;
    }
  }

  // Launches the batch collected so far.
  void flush() {
    if (b_.count == 0) return;
    const CatEntry& last = b_.entries[b_.count - 1];
    b_.col_first = b_.entries[0].col;
    b_.width = last.col + last.len - b_.col_first;
    int64_t min_len = last.len;
    bool uniform = true;
    for (int k = 0; k < b_.count; ++k) {
      min_len = std::min(min_len, b_.entries[k].len);
      uniform = uniform && b_.entries[k].len == last.len;
    }
    if (idx32_ && slots_ == 0 && b_.outer > 1 && min_len * es_ < kShortRowBytes) {
      launch_by_output(uniform);
    } else {
      launch_by_input();
    }
    b_.count = 0;
    slots_ = 0;
  }

 private:
  void launch_by_output(bool uniform) {
    b_.width_div = FastDiv(static_cast<uint32_t>(b_.width));
    b_.uniform = uniform;
    if (uniform) b_.len_div = FastDiv(static_cast<uint32_t>(b_.entries[0].len));
    const unsigned grid = static_cast<unsigned>((b_.outer * b_.width + kCatChunk - 1) / kCatChunk);
    dispatch_bits(static_cast<size_t>(es_), [&]<typename T>() {
      cat_by_output_kernel<T><<<grid, kCatThreads, 0, stream_>>>(b_);
      check_launch(stream_, "cat_by_output_kernel");
    });
  }

  // 16-byte units when no input is strided and every pointer, row and column is a multiple of 16
  // bytes (a row stride or output row only matters when there is more than one row).
  bool vectorizable() const {
    const bool rows = b_.outer > 1;
    if (slots_ > 0 || !aligned16(b_.out) || (rows && b_.out_row * es_ % 16 != 0)) return false;
    for (int k = 0; k < b_.count; ++k) {
      const CatEntry& e = b_.entries[k];
      if (!aligned16(e.src) || e.len * es_ % 16 != 0 || e.col * es_ % 16 != 0 ||
          (rows && e.row_stride * es_ % 16 != 0))
        return false;
    }
    return true;
  }

  void launch_by_input() {
    const bool vector = vectorizable();
    const int64_t per = vector ? 16 / es_ : 1;  // elements per unit
    if (vector) {
      b_.out_row /= per;
      for (int k = 0; k < b_.count; ++k) {
        b_.entries[k].len /= per;
        b_.entries[k].col /= per;
        b_.entries[k].row_stride /= per;
      }
    }
    int64_t blocks = 0;
    for (int k = 0; k < b_.count; ++k) {
      CatEntry& e = b_.entries[k];
      e.first_block = blocks;
      blocks += (b_.outer * e.len + kCatChunk - 1) / kCatChunk;
      if (idx32_) e.len_div = FastDiv(static_cast<uint32_t>(e.len));
    }
    const unsigned grid = static_cast<unsigned>(blocks);
    auto launch = [&]<typename T>() {
      if (idx32_) {
        cat_by_input_kernel<T, uint32_t><<<grid, kCatThreads, 0, stream_>>>(b_);
      } else {
        cat_by_input_kernel<T, uint64_t><<<grid, kCatThreads, 0, stream_>>>(b_);
      }
      check_launch(stream_, "cat_by_input_kernel");
    };
    if (vector) {
      launch.template operator()<uint4>();
    } else {
      dispatch_bits(static_cast<size_t>(es_), launch);
    }
    if (vector) b_.out_row *= per;  // later batches start from element units again
  }

  CatBatch b_;
  int64_t inner_ = 1;
  const int64_t es_;
  const bool idx32_;
  int slots_ = 0;
  cudaStream_t stream_;
};

}  // namespace

void cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out) {
  if (out.numel() == 0) return;
  CatLauncher launcher(out, dim, current_stream_handle(out.device().index()));
  int64_t along = 0;
  for (const Tensor& in : inputs) {
    if (in.dtype() != out.dtype())
      fail<DTypeError>(current_op_name(), "CUDA cat expects inputs of the output's dtype ",
                       out.dtype(), ", got ", in.dtype());
    launcher.add(in, dim, along);
    along += in.shape()[dim];
  }
  launcher.flush();
}

}  // namespace tensorlet::cuda
