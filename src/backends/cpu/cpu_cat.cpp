// CPU cat: one parallel loop over the output in order, i.e. over (outer index, input) pieces, each
// piece one input's row of an output row. Contiguous inputs copy their rows directly; strided
// ones walk the window of the output they fill with a StridedLoop.
#include <algorithm>
#include <cstring>
#include <vector>

#include "tensorlet/backends/cpu/cpu_backend.h"
#include "tensorlet/backends/cpu/strided_loop.h"
#include "tensorlet/tensor/dispatch.h"
#include "tensorlet/tensor/convert.h"

namespace tensorlet::cpu {
namespace {

// Where one input goes: element (o, j) of the input, seen as [outer, row], lands at
// out[o * out_row + col + j].
// Whole output rows are copied in blocks of about this many bytes (see the loop below).
constexpr int64_t kBlockBytes = 32 * 1024;

struct Piece {
  const char* src;
  int64_t row;      // input elements per outer index
  int64_t col;      // first output column of this input within an output row
  int64_t strided;  // index into the strided loops, or -1 for a contiguous input
};

template <typename T>
void copy_strided_range(const StridedLoop<2>& loop, int64_t begin, int64_t end) {
  loop.run_range(begin, end, [](std::array<char*, 2> p, std::array<int64_t, 2> s, int64_t n) {
    if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
      std::memcpy(p[0], p[1], n * sizeof(T));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const T*>(p[1] + i * s[1]);
    }
  });
}

}  // namespace

void CpuBackend::cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out) {
  int64_t rest = 1;  // elements per unit step along dim
  for (int64_t d = dim + 1; d < out.dim(); ++d) rest *= out.shape()[d];
  const int64_t out_row = out.shape()[dim] * rest;
  // Pieces stay small (they are scanned once per output row); the bulky loops live apart.
  std::vector<Piece> pieces;
  std::vector<StridedLoop<2>> loops;
  pieces.reserve(inputs.size());
  int64_t along = 0;
  for (const Tensor& in : inputs) {
    if (in.dtype() != out.dtype())
      fail<DTypeError>("tl::cat", "CPU cat expects inputs of the output's dtype ", out.dtype(),
                       ", got ", in.dtype());
    Piece p{static_cast<const char*>(in.data_ptr()), in.shape()[dim] * rest, along * rest, -1};
    if (!in.is_contiguous()) {
      // The window of out this input fills: its shape with out's strides.
      Tensor window =
          make_view(out, in.shape(), out.strides(), out.offset() + along * out.strides()[dim]);
      p.strided = static_cast<int64_t>(loops.size());
      loops.emplace_back(std::array<const Tensor*, 2>{&window, &in});
    }
    along += in.shape()[dim];
    pieces.push_back(p);
  }
  // Elements move as bits (a bool as its byte: loading a byte other than 0/1 as a bool is
  // undefined; tensor/convert.h), so dtypes of one size share code.
  dispatch_bits(out.element_size(), [&]<typename T>() {
    T* dst = static_cast<T*>(out.data_ptr());
    const int64_t block_rows =
        std::max<int64_t>(1, kBlockBytes / (out_row * static_cast<int64_t>(sizeof(T))));
    // Copies columns [c, c + n) of output row o, all inside piece p.
    auto copy_piece = [&](const Piece& p, int64_t o, int64_t c, int64_t n) {
      const int64_t from = o * p.row + (c - p.col);  // index into the input, row-major
      T* to = dst + o * out_row + c;
      if (p.strided >= 0) {
        copy_strided_range<T>(loops[p.strided], from, from + n);
      } else if (n < 16) {  // short rows (dstack of matrices: one element) skip memcpy
        const T* src = reinterpret_cast<const T*>(p.src) + from;
        for (int64_t k = 0; k < n; ++k) to[k] = src[k];
      } else {
        std::memcpy(to, reinterpret_cast<const T*>(p.src) + from, n * sizeof(T));
      }
    };
    // Writes go through the output in order, row by row and inside a row input by input; a long
    // row is split between chunks like any other run.
    parallel_for(out.numel(), kGrainSize, [&](int64_t begin, int64_t end) {
      int64_t o = begin / out_row, c = begin % out_row, pos = begin;
      while (pos < end) {
        if (c == 0 && end - pos >= out_row) {
          // Whole rows, a block (~32 KB of output, which stays in cache) at a time, input by
          // input: an input's short row pieces (one element each in a dstack of matrices) are
          // then read as one sequential run instead of one cache line per input per row, which
          // thrashes L1 when inputs sit at power-of-two spacing and defeats the prefetcher when
          // they are cold.
          const int64_t rows = std::min<int64_t>((end - pos) / out_row, block_rows);
          for (const Piece& p : pieces) {
            if (p.strided >= 0 || p.row >= 16) {
              for (int64_t r = 0; r < rows; ++r) copy_piece(p, o + r, p.col, p.row);
              continue;
            }
            const T* src = reinterpret_cast<const T*>(p.src) + o * p.row;
            T* to = dst + o * out_row + p.col;
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t k = 0; k < p.row; ++k) to[r * out_row + k] = src[r * p.row + k];
          }
          pos += rows * out_row;
          o += rows;
          continue;
        }
        // A partial row at either end of the chunk: from column c to the row's or chunk's end.
        auto it = std::upper_bound(pieces.begin(), pieces.end(), c,
                                   [](int64_t v, const Piece& p) { return v < p.col; });
        for (size_t i = it - pieces.begin() - 1; i < pieces.size() && pos < end; ++i) {
          const int64_t n = std::min(pieces[i].col + pieces[i].row - c, end - pos);
          copy_piece(pieces[i], o, c, n);
          pos += n;
          c += n;
        }
        if (c == out_row) {
          c = 0;
          ++o;
        }
      }
    });
  });
}

}  // namespace tensorlet::cpu
