// NumPy broadcasting of shapes.
#include "tensorlet/tensor/broadcast.h"

#include <algorithm>

namespace tensorlet {

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  if (a == b) return a;
  int64_t n = std::max(a.size(), b.size());
  Shape out = Shape::filled(n, 1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      fail<ShapeError>(op, "shapes ", a, " and ", b, " cannot be broadcast together (dim ", i, ": ",
                       da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const int64_t lead = to.size() - from.size();
  for (int64_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[lead + d]) return false;
  return true;
}

}  // namespace tensorlet
