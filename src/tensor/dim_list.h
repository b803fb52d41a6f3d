// DimList: the dims a reduction takes, written as torch takes them: one int (`x.sum(1)`), a list
// (`x.amax({0, 2})`) or nothing / `{}` (every dim). An IntArrayRef, named for what it holds.
#pragma once

#include "tensorlet/tensor/int_array_ref.h"

namespace tensorlet {

using DimList = IntArrayRef;

}  // namespace tensorlet
