// Scans (cumsum, cumprod, cummax, cummin) on CUDA. The tensor is seen as [outer, n, inner]
// (softmax_rows); the host picks a kernel by that shape:
//  - few long rows (inner == 1): a single-pass decoupled look-back scan, one read and one write of
//    every element, temp storage from the caching allocator, on the current stream: for cumsum
//    our own kernel over all the rows at once (cuda_scan_single_pass.cuh: 16-byte accesses of T,
//    sums in acc_t<T>), for cumprod/cummax/cummin CUB's (cub::DeviceScan::InclusiveScan), one
//    launch per row;
//  - many rows of up to kWarpRowMax elements: one warp per row (cub::WarpScan), chunks of 32
//    with the running value carried between them;
//  - many longer rows: one block per row (cub::BlockLoad / BlockScan / BlockStore through shared
//    memory, so loads and stores are coalesced), tiles carried by a prefix callback;
//  - a dim with elements after it (inner > 1): one thread per column scanning down, adjacent
//    threads on adjacent columns (coalesced); when there are too few columns to fill the GPU and
//    the columns are long, the slices are transposed into rows (one copy in, one out) and scanned
//    as rows instead.
// Each functor (backends/math/scan_ops.h) reads its input through a transform iterator and writes
// its output (and cummax/cummin's indices) through a tabulate output iterator (the cumsum kernel
// calls the same load, combine and store directly), so every path accumulates in acc_t<T> as the
// CPU does.
#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "tensorlet/backends/cuda/cuda_internal.h"
#include "tensorlet/backends/cuda/cuda_kernels.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/backends/cuda/cuda_scan_single_pass.cuh"
#include "tensorlet/backends/softmax_rows.h"

namespace tensorlet::cuda {

namespace {

// Rows this long or longer, when there are at most kCubMaxRows of them, go to CUB's device-wide
// scan (a launch per row); shorter or more numerous rows fill the GPU with a block or warp each.
constexpr int64_t kCubMinLength = int64_t{1} << 16;
constexpr int64_t kCubMaxRows = 16;
constexpr int64_t kWarpRowMax = 256;
constexpr int kWarpsPerBlock = 8;
constexpr int kBlockThreads = 256;
constexpr int kBlockItems = 4;
constexpr int kColumnThreads = 256;
// Below this many columns a column kernel leaves most of the GPU idle; with columns at least this
// long, transposing them into rows pays for its two copies.
constexpr int64_t kMinColumns = 8192;
constexpr int64_t kTransposeMinLength = 2048;

// An element at position i along the dim as the functor's accumulator.
template <typename T, typename F>
__host__ __device__ typename F::Acc load_value(T v, int64_t i) {
  if constexpr (F::kIndexed)
    return F::load(v, i);
  else
    return F::load(v);
}

// Element i of a row.
template <typename T, typename F>
struct LoadAt {
  const T* x;
  __host__ __device__ typename F::Acc operator()(int64_t i) const {
    return load_value<T, F>(x[i], i);
  }
};

// Writes position i of a row: the value rounded to T, and the index for cummax/cummin.
template <typename T, typename F>
struct StoreAt {
  T* y;
  int64_t* indices;
  __host__ __device__ void operator()(int64_t i, typename F::Acc a) const {
    y[i] = F::store(a);
    if constexpr (F::kIndexed) indices[i] = a.index;
  }
};

template <typename F>
struct Combine {
  __host__ __device__ typename F::Acc operator()(typename F::Acc earlier,
                                                 typename F::Acc later) const {
    return F::combine(earlier, later);
  }
};

template <typename T, typename F>
__host__ __device__ auto row_input(const T* x) {
  return thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadAt<T, F>{x});
}
template <typename T, typename F>
__host__ __device__ auto row_output(T* y, int64_t* indices) {
  return thrust::make_tabulate_output_iterator(StoreAt<T, F>{y, indices});
}

// Few long rows: CUB's decoupled look-back scan, each row one launch sharing one temp buffer (the
// launches are ordered on the stream). 32-bit item counts when they fit (CUB's faster offsets).
template <typename T, typename F>
void scan_rows_cub(const T* x, T* y, int64_t* indices, int64_t rows, int64_t n, Device device,
                   cudaStream_t s) {
  auto run = [&](void* temp, size_t& bytes, int64_t r) {
    const int64_t base = r * n;
    auto in = row_input<T, F>(x + base);
    auto out = row_output<T, F>(y + base, indices ? indices + base : nullptr);
    if (n <= INT_MAX)
      return cub::DeviceScan::InclusiveScan(temp, bytes, in, out, Combine<F>{}, static_cast<int>(n),
                                            s);
    return cub::DeviceScan::InclusiveScan(temp, bytes, in, out, Combine<F>{}, n, s);
  };
  size_t bytes = 0;
  TL_CUDA_CHECK(run(nullptr, bytes, 0));
  Tensor temp = make_tensor({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, kUInt8, device);
  for (int64_t r = 0; r < rows; ++r) {
    TL_CUDA_CHECK(run(temp.data_ptr(), bytes, r));
    check_launch(s, "cub::DeviceScan::InclusiveScan");
  }
}

// One warp per row, 32 elements per step: lane l holds element t0 + l, the warp scans them and
// folds in the carry (the row's running value before the chunk), then lane 31's result becomes
// the carry. Lanes past the row's end scan a placeholder that no lane before them sees.
template <typename T, typename F>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    scan_warp_rows_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t* indices,
                          int64_t rows, int64_t n) {
  using Acc = typename F::Acc;
  using WarpScan = cub::WarpScan<Acc>;
  __shared__ typename WarpScan::TempStorage storage[kWarpsPerBlock];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kWarpsPerBlock) {
    const LoadAt<T, F> load{x + row * n};
    const StoreAt<T, F> store{y + row * n, indices ? indices + row * n : nullptr};
    Acc carry{};
    for (int64_t t0 = 0; t0 < n; t0 += 32) {
      const int64_t i = t0 + lane;
      Acc v = i < n ? load(i) : Acc{};
      WarpScan(storage[warp]).InclusiveScan(v, v, Combine<F>{});
      if (t0 > 0) v = F::combine(carry, v);
      if (i < n) store(i, v);
      carry = cub::ShuffleIndex<32>(v, 31, 0xffffffffu);
    }
  }
}

// The running value of a row before the tile, for BlockScan: warp 0 calls it with the tile's
// aggregate and it returns the prefix for the tile.
template <typename F>
struct TileCarry {
  typename F::Acc running;
  __device__ typename F::Acc operator()(typename F::Acc tile) {
    const typename F::Acc prefix = running;
    running = F::combine(running, tile);
    return prefix;
  }
};

// One block per row, tiles of kBlockThreads * kBlockItems elements.
template <typename T, typename F>
__global__ void __launch_bounds__(kBlockThreads)
    scan_block_rows_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t* indices,
                           int64_t rows, int64_t n) {
  using Acc = typename F::Acc;
  using Load = cub::BlockLoad<Acc, kBlockThreads, kBlockItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<Acc, kBlockThreads, kBlockItems, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using Scan = cub::BlockScan<Acc, kBlockThreads>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Scan::TempStorage scan;
  } storage;
  constexpr int64_t kTile = int64_t{kBlockThreads} * kBlockItems;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    auto in = row_input<T, F>(x + row * n);
    auto out = row_output<T, F>(y + row * n, indices ? indices + row * n : nullptr);
    TileCarry<F> carry{Acc{}};
    for (int64_t t0 = 0; t0 < n; t0 += kTile) {
      const int valid = static_cast<int>(n - t0 < kTile ? n - t0 : kTile);
      Acc items[kBlockItems];
      // Items past the end of the row come after every valid one: they change no valid result.
      Load(storage.load).Load(in + t0, items, valid, Acc{});
      __syncthreads();
      if (t0 == 0) {
        Acc aggregate;
        Scan(storage.scan).InclusiveScan(items, items, Combine<F>{}, aggregate);
        carry.running = aggregate;
      } else {
        Scan(storage.scan).InclusiveScan(items, items, Combine<F>{}, carry);
      }
      __syncthreads();
      Store(storage.store).Store(out + t0, items, valid);
      __syncthreads();
    }
  }
}

// One thread per column: element i of column (o, j) is at (o * n + i) * inner + j.
template <typename T, typename F>
__global__ void __launch_bounds__(kColumnThreads)
    scan_columns_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t* indices,
                        SoftmaxRows g) {
  const int64_t columns = g.outer * g.inner;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = c / g.inner, j = c - o * g.inner;
    const int64_t base = o * g.n * g.inner + j;
    typename F::Acc acc{};
    for (int64_t i = 0; i < g.n; ++i) {
      const int64_t at = base + i * g.inner;
      const typename F::Acc v = load_value<T, F>(x[at], i);
      acc = i == 0 ? v : F::combine(acc, v);
      y[at] = F::store(acc);
      if constexpr (F::kIndexed) indices[at] = acc.index;
    }
  }
}

template <typename T, typename F>
void scan_rows(const T* x, T* y, int64_t* indices, int64_t rows, int64_t n, Device device,
               cudaStream_t s) {
  if (rows <= kCubMaxRows && n >= kCubMinLength) {
    if constexpr (std::is_same_v<F, scan_ops::ArithmeticScan<T, false>>) {
      if (single_pass_scan::scan_sum_rows<T, F>(x, y, rows, n, device, s)) return;
    }
    scan_rows_cub<T, F>(x, y, indices, rows, n, device, s);
  } else if (n <= kWarpRowMax) {
    const int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(blocks, int64_t{1} << 24));
    scan_warp_rows_kernel<T, F><<<grid, kWarpsPerBlock * 32, 0, s>>>(x, y, indices, rows, n);
    check_launch(s, "scan_warp_rows_kernel");
  } else {
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 24));
    scan_block_rows_kernel<T, F><<<grid, kBlockThreads, 0, s>>>(x, y, indices, rows, n);
    check_launch(s, "scan_block_rows_kernel");
  }
}

// [outer, n, inner] as [outer, inner, n] rows: a view of `t` with the dim's stride last.
Tensor as_rows(const Tensor& t, const SoftmaxRows& g) {
  return make_view(t, {g.outer, g.inner, g.n}, {g.n * g.inner, 1, g.inner}, t.offset());
}

template <typename T, typename F>
void run(const Tensor& in, const Tensor& values, const Tensor& indices, const SoftmaxRows& g) {
  const Device device = values.device();
  cudaStream_t s = current_stream_handle(device.index());
  const T* x = typed_ptr<const T>(in);
  T* y = typed_ptr<T>(values);
  int64_t* idx = F::kIndexed ? typed_ptr<int64_t>(indices) : nullptr;
  if (g.inner == 1) return scan_rows<T, F>(x, y, idx, g.outer, g.n, device, s);
  const int64_t columns = g.outer * g.inner;
  if (columns >= kMinColumns || g.n < kTransposeMinLength) {
    scan_columns_kernel<T, F>
        <<<grid_for(columns, kColumnThreads), kColumnThreads, 0, s>>>(x, y, idx, g);
    check_launch(s, "scan_columns_kernel");
    return;
  }
  // Few long columns: transpose them into rows, scan the rows, transpose the results back.
  const Shape rows_shape{g.outer, g.inner, g.n};
  Tensor rows_in = make_tensor(rows_shape, in.dtype(), device);
  Tensor rows_out = make_tensor(rows_shape, in.dtype(), device);
  Tensor rows_idx = F::kIndexed ? make_tensor(rows_shape, kInt64, device) : Tensor();
  copy_same_device(as_rows(in, g), rows_in);
  scan_rows<T, F>(typed_ptr<const T>(rows_in), typed_ptr<T>(rows_out),
                  F::kIndexed ? typed_ptr<int64_t>(rows_idx) : nullptr, columns, g.n, device, s);
  copy_same_device(rows_out, as_rows(values, g));
  if constexpr (F::kIndexed) copy_same_device(rows_idx, as_rows(indices, g));
}

}  // namespace

void scan(ScanOp op, const Tensor& in, int64_t dim, const Tensor& values, const Tensor& indices) {
  if (in.numel() == 0) return;  // the front-end returns empty results as they are
  const SoftmaxRows g = softmax_rows(in.shape(), dim);
  dispatch_scan(op, in.dtype(),
                [&]<typename T, typename F>() { run<T, F>(in, values, indices, g); });
}

}  // namespace tensorlet::cuda
