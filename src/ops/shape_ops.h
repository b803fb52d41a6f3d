// Shape ops with torch's semantics: views (split, chunk, unbind, movedim, broadcast_to, diagonal,
// meshgrid) and copies (repeat, tile, flip, roll, tril, triu, diag, diag_embed).
#pragma once

#include <string_view>
#include <vector>

#include "tensorlet/tensor/dim_list.h"
#include "tensorlet/tensor/tensor.h"

namespace tensorlet {

// Views along dim: pieces of split_size (the last may be smaller), or of the given sizes (which
// must add up to the dim's size; split_with_sizes is that form's LibTorch name); chunk: `chunks`
// pieces of ceil(size / chunks).
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& a, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& a, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim = 0);
// Every index of dim, as views without that dim.
std::vector<Tensor> unbind(const Tensor& a, int64_t dim = 0);
// A view with dim `source` moved to `destination` (the others keep their order).
Tensor movedim(const Tensor& a, int64_t source, int64_t destination);
Tensor movedim(const Tensor& a, IntArrayRef source, IntArrayRef destination);
Tensor broadcast_to(const Tensor& a, IntArrayRef size);
// A view of the diagonal `offset` of the (dim1, dim2) planes, as the last dim.
Tensor diagonal(const Tensor& a, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// Views that broadcast 1-D tensors over a grid; indexing "ij" (matrix) or "xy" (Cartesian: the
// first two dims swapped).
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing = "ij");

// Copies. repeat: each dim times repeats[d] (at least a.dim() entries, leading ones add dims);
// tile: the same with fewer entries padded by leading ones.
Tensor repeat(const Tensor& a, IntArrayRef repeats);
Tensor tile(const Tensor& a, IntArrayRef reps);
Tensor flip(const Tensor& a, const DimList& dims);
// Elements shifted along dims (wrapping around); without dims, over the flattened tensor.
Tensor roll(const Tensor& a, IntArrayRef shifts, IntArrayRef dims = {});
// The lower / upper triangle of the last two dims (from diagonal k), zeros elsewhere.
Tensor tril(const Tensor& a, int64_t diagonal = 0);
Tensor triu(const Tensor& a, int64_t diagonal = 0);
// 1-D: a square matrix with a on diagonal k; 2-D: diagonal k as a new 1-D tensor.
Tensor diag(const Tensor& a, int64_t diagonal = 0);
// The last dim of a on the diagonals of new (dim1, dim2) planes, zeros elsewhere.
Tensor diag_embed(const Tensor& a, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);

// torch.nn.functional.one_hot: int64 class indices -> int64 [..., num_classes]; num_classes -1
// takes max + 1. Reads the indices' range (a wait for a GPU), as torch does.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);

}  // namespace tensorlet
