// How unique compares rows of m elements, shared by every backend: lexicographically by
// order_key (NaN last, -0.0 == 0.0), and equal when every element compares == (so a NaN makes a
// row distinct from every other, as torch's unique treats each NaN as its own value).
#pragma once

#include <cstdint>

#include "tensorlet/backends/math/order_key.h"
#include "tensorlet/tensor/dtype.h"
#include "tensorlet/tensor/host_device.h"

namespace tensorlet {

// Whether two elements with these keys compare equal with ==: equal keys, except NaN (the
// all-ones key of a floating type, which no number has) equals nothing.
template <typename T>
TL_HOST_DEVICE inline bool keys_equal(order_key_t<T> a, order_key_t<T> b) {
  using K = order_key_t<T>;
  if constexpr (is_floating_v<T>)
    return a == b && a != static_cast<K>(~K{0});
  else
    return a == b;
}

// Rows a and b of m elements: negative when a orders first, positive when b does, 0 when every
// element has the same key.
template <typename T>
TL_HOST_DEVICE inline int rows_compare(const order_load_t<T>* a, const order_load_t<T>* b,
                                       int64_t m) {
  for (int64_t j = 0; j < m; ++j) {
    const order_key_t<T> ka = order_key<T>(a[j]), kb = order_key<T>(b[j]);
    if (ka != kb) return ka < kb ? -1 : 1;
  }
  return 0;
}

// Whether rows a and b of m elements compare equal element by element (NaN equals nothing).
template <typename T>
TL_HOST_DEVICE inline bool rows_equal(const order_load_t<T>* a, const order_load_t<T>* b,
                                      int64_t m) {
  for (int64_t j = 0; j < m; ++j)
    if (!keys_equal<T>(order_key<T>(a[j]), order_key<T>(b[j]))) return false;
  return true;
}

}  // namespace tensorlet
