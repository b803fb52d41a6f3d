// DimList: the dims a reduction takes, written as torch takes them: one int (`x.sum(1)`), a list
// (`x.amax({0, 2})`) or nothing / `{}` (every dim).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace tensorlet {

struct DimList {
  DimList() = default;                 // every dim; `{}` picks this one too
  DimList(int64_t dim) : dims{dim} {}  // NOLINT(google-explicit-constructor): x.sum(1)
  DimList(std::initializer_list<int64_t> list) : dims(list) {}
  DimList(std::vector<int64_t> list) : dims(std::move(list)) {}  // NOLINT: a built list

  std::vector<int64_t> dims;
};

}  // namespace tensorlet
