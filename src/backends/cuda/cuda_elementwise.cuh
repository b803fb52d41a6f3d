// Launch machinery of the elementwise kernels (copy, fill, unary, binary, where): a flat kernel for
// contiguous and broadcast-scalar operands with 16-byte vector accesses when aligned, and a strided
// kernel on StridedIndexer with 32-bit index math, split into chunks for 2^31+ elements.
#pragma once

#include <cuda/std/tuple>
#include <cuda/std/utility>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "tensorlet/backends/backend.h"
#include "tensorlet/backends/cuda/cuda_dependent_launch.h"
#include "tensorlet/backends/cuda/cuda_loop.cuh"
#include "tensorlet/tensor/convert.h"

namespace tensorlet::cuda {

// An input of Elementwise::run: a tensor on out's device, or a value the kernel takes as a
// parameter, as the bits of one element of its input type (element_bits, backends/backend.h).
struct KernelInput {
  KernelInput(const Tensor* t) : tensor(t) {}  // NOLINT: implicit, so that `{&a, &b}` reads well
  static KernelInput value(uint64_t bits) {
    KernelInput in(nullptr);
    in.bits = bits;
    return in;
  }
  const Tensor* tensor;  // null: the input is `bits`
  uint64_t bits = 0;
};

// An elementwise kernel's input of element dtype `dtype`: a scalar goes by value, never through
// memory.
inline KernelInput kernel_input(const ElementwiseArg& arg, DType dtype) {
  return arg.tensor ? KernelInput(arg.tensor) : KernelInput::value(element_bits(arg.scalar, dtype));
}

// Elements per vector access: 16 bytes of the widest operand.
template <typename... T>
__host__ __device__ constexpr int vec_width() {
  size_t widest = 1;
  ((widest = sizeof(T) > widest ? sizeof(T) : widest), ...);
  return static_cast<int>(16 / widest);
}

template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// The unsigned type of T's size: copies, fills and where move bits, so float and int32 (and
// double and int64) share one kernel.
template <typename T>
using BitsOf =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

// Operands of the flat kernel; out and every non-scalar input are contiguous with n elements.
template <int N>
struct FlatArgs {
  void* out;
  const void* in[N > 0 ? N : 1];
  int64_t n;
  uint32_t scalar_mask;  // bit k: input k is one element broadcast to all (stride 0 everywhere)
  uint32_t host_mask;    // bit k: input k is a scalar passed by value in host_bits[k]
  uint64_t host_bits[N > 0 ? N : 1];
  bool vectorize;          // every non-scalar pointer is aligned to its vector
  int vectors_per_thread;  // of the op's U at most: fewer where more threads fill the GPU better
  bool dependent;  // launched early in a graph (cuda_dependent_launch.h): wait on the device first
};

// The value of a scalar input of type T from the bits it was passed in (a bool from its byte).
template <typename T>
__device__ __forceinline__ T from_bits(uint64_t bits) {
  Stored<T> value;
  memcpy(&value, &bits, sizeof(T));
  return from_stored<T>(value);
}

// Element i of an input of type T. Inputs are read as Stored<T>: a bool byte other than 0/1 (an
// uninitialised tensor) is true, where loading it as a bool would be undefined.
template <typename T>
__device__ __forceinline__ T load_at(const void* p, int64_t i) {
  return from_stored<T>(static_cast<const Stored<T>*>(p)[i]);
}

// Operands of the strided kernel (out first); n < 2^31 so the indexer runs on 32-bit math.
template <int M>
struct StridedArgs {
  StridedIndexer<M> ix;
  void* ptr[M];
  uint32_t n;
  uint32_t host_mask;  // bit k: operand k + 1 is a scalar passed by value in host_bits[k + 1]
  uint64_t host_bits[M];
  bool dependent;  // as FlatArgs::dependent
};

// Vectors each thread of the flat kernel may load before it computes and stores: an op asks for
// more than one with `static constexpr int kVectorsPerThread`. One 16-byte load per thread leaves
// a unary math op short of the copy rate on an H200 (G4: sin/cos at 0.86-0.90 of the copy): too
// few bytes are in flight per SM to cover the memory latency, all the more as the op's registers
// lower the occupancy. Ops behind a runtime switch keep one (their code would be inlined U times).
template <typename Op>
__host__ __device__ constexpr int vectors_per_thread() {
  if constexpr (requires { Op::kVectorsPerThread; })
    return Op::kVectorsPerThread;
  else
    return 1;
}

// The most vectors per thread the host hands out: the op's own count, or fewer with
// TL_CUDA_VECTORS_PER_THREAD (1-4), to measure the flat kernel with and without the extra loads
// in one binary (bench_cuda G4).
inline int max_vectors_per_thread() {
  static const int cap = [] {
    const char* v = std::getenv("TL_CUDA_VECTORS_PER_THREAD");
    const int n = v ? std::atoi(v) : 4;
    return n < 1 ? 1 : (n > 4 ? 4 : n);
  }();
  return cap;
}

template <typename Op, typename Out, typename... In>
struct ElementwiseBody {
  static constexpr int N = sizeof...(In);
  static constexpr int V = vec_width<Out, In...>();
  static constexpr int U = vectors_per_thread<Op>();

  template <size_t... I>
  static __device__ __forceinline__ void flat(const Op& op, const FlatArgs<N>& a,
                                              ::cuda::std::index_sequence<I...>) {
    // Only a launch that may start early runs these (eager kernels skip them: no cost to big ones).
    if (a.dependent) {
      wait_for_prior_kernels();
      allow_next_kernel();
    }
    Out* out = static_cast<Out*>(a.out);
    const int64_t step = int64_t{gridDim.x} * blockDim.x;
    const int64_t first = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
    // A broadcast scalar is read once per thread: from the kernel parameters for a scalar input
    // (`x + 1.5`), else from device memory (a 0-dim device tensor, never copied to the host). It
    // cannot alias out: the front-end copies such in-place operands.
    [[maybe_unused]] const ::cuda::std::tuple<In...> scalar{
        (is_scalar<I>(a)
             ? ((a.host_mask >> I) & 1u ? from_bits<In>(a.host_bits[I]) : load_at<In>(a.in[I], 0))
             : In{})...};
    int64_t start = 0;
    if constexpr (V > 1) {
      if (a.vectorize) {
        // A block takes U * blockDim vectors at a time, thread t vectors t, t + blockDim, ...:
        // each load instruction is coalesced across the warp, and a thread's U loads are all
        // issued before the first result is needed.
        const int64_t nv = a.n / V;
        const int64_t tile = int64_t{a.vectors_per_thread} * blockDim.x;
        const int64_t tile_step = int64_t{gridDim.x} * tile;
        for (int64_t base = int64_t{blockIdx.x} * tile + threadIdx.x; base < nv;
             base += tile_step) {
          if constexpr (U > 1) {
            // A whole tile of U vectors per thread, the bulk of a large tensor: no guards, as a
            // unary math op is near its instruction limit at the copy rate.
            if (a.vectors_per_thread == U && base - threadIdx.x + tile <= nv) {
              ::cuda::std::tuple<Vec<In, V>...> y[U];
#pragma unroll
              for (int u = 0; u < U; ++u)
                y[u] = ::cuda::std::tuple<Vec<In, V>...>{
                    load_vec<In>(a.in[I], is_scalar<I>(a), ::cuda::std::get<I>(scalar),
                                 base + int64_t{u} * blockDim.x)...};
#pragma unroll
              for (int u = 0; u < U; ++u) {
                Vec<Out, V> r;
#pragma unroll
                for (int j = 0; j < V; ++j) r.v[j] = op(::cuda::std::get<I>(y[u]).v[j]...);
                reinterpret_cast<Vec<Out, V>*>(out)[base + int64_t{u} * blockDim.x] = r;
              }
              continue;
            }
          }
          // All loads before any store: out may be an input (in place, same position).
          ::cuda::std::tuple<Vec<In, V>...> x[U];
#pragma unroll
          for (int u = 0; u < U; ++u) {
            const int64_t v = base + int64_t{u} * blockDim.x;
            if (u < a.vectors_per_thread && v < nv)
              x[u] = ::cuda::std::tuple<Vec<In, V>...>{
                  load_vec<In>(a.in[I], is_scalar<I>(a), ::cuda::std::get<I>(scalar), v)...};
          }
#pragma unroll
          for (int u = 0; u < U; ++u) {
            const int64_t v = base + int64_t{u} * blockDim.x;
            if (u >= a.vectors_per_thread || v >= nv) break;
            Vec<Out, V> r;
#pragma unroll
            for (int j = 0; j < V; ++j) r.v[j] = op(::cuda::std::get<I>(x[u]).v[j]...);
            reinterpret_cast<Vec<Out, V>*>(out)[v] = r;
          }
        }
        start = nv * V;
      }
    }
    for (int64_t i = start + first; i < a.n; i += step)
      out[i] = op((is_scalar<I>(a) ? ::cuda::std::get<I>(scalar) : load_at<In>(a.in[I], i))...);
  }

  template <size_t... I>
  static __device__ __forceinline__ void strided(const Op& op, const StridedArgs<N + 1>& a,
                                                 ::cuda::std::index_sequence<I...>) {
    if (a.dependent) {
      wait_for_prior_kernels();
      allow_next_kernel();
    }
    const uint32_t step = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
      int64_t off[N + 1];
      a.ix.offsets(i, off);
      static_cast<Out*>(a.ptr[0])[off[0]] =
          op(((a.host_mask >> (I + 1)) & 1u ? from_bits<In>(a.host_bits[I + 1])
                                            : load_at<In>(a.ptr[I + 1], off[I + 1]))...);
    }
  }

 private:
  template <size_t I>
  static __device__ __forceinline__ bool is_scalar(const FlatArgs<N>& a) {
    return (a.scalar_mask >> I) & 1u;
  }
  template <typename T>
  static __device__ __forceinline__ Vec<T, V> load_vec(const void* p, bool scalar, T value,
                                                       int64_t v) {
    Vec<T, V> r;
    if (!scalar) {
      if constexpr (std::is_same_v<T, Stored<T>>) {
        return static_cast<const Vec<T, V>*>(p)[v];
      } else {
        const Vec<Stored<T>, V> stored = static_cast<const Vec<Stored<T>, V>*>(p)[v];
#pragma unroll
        for (int j = 0; j < V; ++j) r.v[j] = from_stored<T>(stored.v[j]);
        return r;
      }
    }
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = value;
    return r;
  }
};

template <typename Op, typename Out, typename... In>
__global__ void __launch_bounds__(kElementwiseThreads)
    elementwise_flat_kernel(Op op, FlatArgs<sizeof...(In)> args) {
  ElementwiseBody<Op, Out, In...>::flat(op, args, ::cuda::std::index_sequence_for<In...>{});
}

template <typename Op, typename Out, typename... In>
__global__ void __launch_bounds__(kElementwiseThreads)
    elementwise_strided_kernel(Op op, StridedArgs<sizeof...(In) + 1> args) {
  ElementwiseBody<Op, Out, In...>::strided(op, args, ::cuda::std::index_sequence_for<In...>{});
}

// How an operand is walked: as the flat run of out's n elements, as one element broadcast to all,
// or through the strided indexer.
enum class Layout : uint8_t { Flat, Scalar, Strided };

inline Layout layout_of(const TensorImpl& t, int64_t n) {
  bool contiguous = true, zero = true;
  int64_t expected = 1;
  for (int64_t d = t.shape.size() - 1; d >= 0; --d) {
    const int64_t size = t.shape[d];
    if (size == 1) continue;
    const int64_t stride = t.strides[d];
    contiguous &= stride == expected;
    zero &= stride == 0;
    expected *= size;
  }
  if (contiguous && expected == n) return Layout::Flat;
  return zero ? Layout::Scalar : Layout::Strided;
}

inline bool is_aligned(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// Calls launch(indexer, base pointers, count) over pieces of at most 2^31 elements, so the kernel
// can use 32-bit index math: rows of the outermost dim, or one outermost index at a time (and
// recursing) when a single row is already too large. elem: byte size of each operand's element;
// limit: the largest piece (a parameter only so that tests can make it small).
template <int M, typename Launch>
void for_each_32bit_chunk(const StridedIndexer<M>& ix, const std::array<char*, M>& ptr,
                          const std::array<int64_t, M>& elem, const Launch& launch,
                          int64_t limit = int64_t{1} << 31) {
  int64_t numel = 1;
  for (int d = 0; d < ix.ndim; ++d) numel *= ix.sizes[d];
  if (numel <= limit) return launch(ix, ptr, numel);
  const int64_t rows = ix.sizes[0], inner = numel / rows;
  if (inner <= limit) {
    const int64_t step = limit / inner;
    for (int64_t r = 0; r < rows; r += step) {
      StridedIndexer<M> sub = ix;
      sub.sizes[0] = std::min(step, rows - r);
      std::array<char*, M> p = ptr;
      for (int k = 0; k < M; ++k) p[k] += r * ix.strides[k][0] * elem[k];
      launch(sub, p, sub.sizes[0] * inner);
    }
    return;
  }
  StridedIndexer<M> sub;
  sub.ndim = ix.ndim - 1;
  for (int d = 1; d < ix.ndim; ++d) {
    sub.sizes[d - 1] = ix.sizes[d];
    for (int k = 0; k < M; ++k) sub.strides[k][d - 1] = ix.strides[k][d];
  }
  for (int64_t r = 0; r < rows; ++r) {
    std::array<char*, M> p = ptr;
    for (int k = 0; k < M; ++k) p[k] += r * ix.strides[k][0] * elem[k];
    for_each_32bit_chunk<M>(sub, p, elem, launch, limit);
  }
}

// out[i] = op(in_0[i], ..., in_{N-1}[i]) over out's shape, on the current stream of out's device.
// Out and In are the element types; every tensor input broadcasts to out (stride 0 or fewer dims)
// and may be out itself at the same positions; a value input is the same for every element.
template <typename Out, typename... In>
struct Elementwise {
  static constexpr int N = sizeof...(In);
  static constexpr int V = vec_width<Out, In...>();

  template <typename Op>
  static void run(const Op& op, const Tensor& out, const std::array<KernelInput, N>& in) {
    const TensorImpl& o = out.impl();
    const int64_t n = o.shape.numel();
    if (n == 0) return;
    cudaStream_t stream = current_stream_handle(out.device().index());
    constexpr size_t in_size[N > 0 ? N : 1] = {sizeof(In)...};

    // The common cases (all contiguous, or `x + 1.5` with a 0-dim b) build no indexer: a few
    // checks, then a launch with a small parameter block.
    FlatArgs<N> args;
    args.out = out.data_ptr();
    args.n = n;
    args.scalar_mask = 0;
    args.host_mask = 0;
    bool flat = layout_of(o, n) == Layout::Flat;
    bool aligned = is_aligned(args.out, V * sizeof(Out));
    for (int k = 0; k < N && flat; ++k) {
      if (!in[k].tensor) {  // a scalar: a kernel parameter, never read from memory
        args.in[k] = nullptr;
        args.host_bits[k] = in[k].bits;
        args.host_mask |= 1u << k;
        args.scalar_mask |= 1u << k;
        continue;
      }
      const Tensor& t = *in[k].tensor;
      args.in[k] = t.data_ptr();
      switch (layout_of(t.impl(), n)) {
        case Layout::Flat:
          aligned &= is_aligned(args.in[k], V * in_size[k]);
          break;
        case Layout::Scalar:
          args.scalar_mask |= 1u << k;
          break;
        case Layout::Strided:
          flat = false;
          break;
      }
    }
    if (flat) {
      args.vectorize = V > 1 && aligned;
      args.dependent = dependent_launch(out.device().index());
      int64_t work = args.vectorize ? (n + V - 1) / V : n;
      args.vectors_per_thread = 1;
      if constexpr (vectors_per_thread<Op>() > 1) {
        // Only once every thread the GPU holds has a vector anyway: a mid-size tensor is better
        // spread over all SMs one vector per thread than over a few SMs several per thread.
        const int64_t resident = int64_t{multiprocessor_count(out.device().index())} * 2048;
        if (args.vectorize && work > resident) {
          const int64_t u = std::min<int64_t>(
              std::min(vectors_per_thread<Op>(), max_vectors_per_thread()), work / resident);
          args.vectors_per_thread = static_cast<int>(u);
          work = (work + u - 1) / u;
        }
      }
      // cudaLaunchKernel returns the launch error itself, so the hot path of small ops needs no
      // separate cudaGetLastError call.
      void* params[] = {const_cast<Op*>(&op), &args};
      const cudaError_t err =
          launch_kernel(reinterpret_cast<const void*>(&elementwise_flat_kernel<Op, Out, In...>),
                        dim3(grid_for(work, elementwise_threads())), dim3(elementwise_threads()),
                        params, 0, stream, args.dependent);
      check_launched(err, stream, "elementwise_flat_kernel");
      return;
    }
    run_strided(op, out, in, stream);
  }

 private:
  template <typename Op>
  static void run_strided(const Op& op, const Tensor& out, const std::array<KernelInput, N>& in,
                          cudaStream_t stream) {
    std::array<const Tensor*, N + 1> ops;
    std::array<char*, N + 1> ptr;
    ops[0] = &out;
    ptr[0] = static_cast<char*>(out.data_ptr());
    uint32_t host_mask = 0;
    uint64_t host_bits[N + 1] = {};
    for (int k = 0; k < N; ++k) {
      ops[k + 1] = in[k].tensor;  // null for a scalar: stride 0 in the indexer
      ptr[k + 1] = in[k].tensor ? static_cast<char*>(in[k].tensor->data_ptr()) : nullptr;
      if (in[k].tensor) continue;
      host_bits[k + 1] = in[k].bits;
      host_mask |= 1u << (k + 1);
    }
    constexpr std::array<int64_t, N + 1> elem{int64_t{sizeof(Out)}, int64_t{sizeof(In)}...};
    const bool dependent = dependent_launch(out.device().index());
    const StridedIndexer<N + 1> ix = make_indexer<N + 1>(out.shape(), ops);
    for_each_32bit_chunk<N + 1>(
        ix, ptr, elem,
        [&](const StridedIndexer<N + 1>& sub, const std::array<char*, N + 1>& p, int64_t count) {
          StridedArgs<N + 1> args;
          args.ix = sub;
          for (int k = 0; k <= N; ++k) args.ptr[k] = p[k];
          args.n = static_cast<uint32_t>(count);
          args.host_mask = host_mask;
          for (int k = 0; k <= N; ++k) args.host_bits[k] = host_bits[k];
          args.dependent = dependent;
          void* params[] = {const_cast<Op*>(&op), &args};
          const cudaError_t err = launch_kernel(
              reinterpret_cast<const void*>(&elementwise_strided_kernel<Op, Out, In...>),
              dim3(grid_for(count, elementwise_threads())), dim3(elementwise_threads()), params, 0,
              stream, dependent);
          check_launched(err, stream, "elementwise_strided_kernel");
        });
  }
};

}  // namespace tensorlet::cuda
