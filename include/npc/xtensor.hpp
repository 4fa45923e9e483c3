#pragma once
/// \file xtensor.hpp
/// Interop with xtensor (optional; include only where xtensor is available): zero-copy
/// xtensor views of an npc::ndarray of known element type, and ndarrays from xtensor
/// expressions. xtensor stays at the edge: npc's engine never uses expression templates.
#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>

#include "npc/creation.hpp"
#include "npc/ndarray.hpp"

namespace npc {

/// A zero-copy xtensor view of `a` with element type T (shapes and element strides of `a`).
/// Throws TypeError when T is not a's element type, ValueError when a stride is not a
/// multiple of the item size. Writes through the view show in `a`.
template <class T>
auto as_xtensor(const ndarray& a) {
  if (sizeof(T) != a.itemsize()) throw TypeError("as_xtensor: element type does not match the array's dtype");
  std::vector<std::size_t> shape(a.shape().begin(), a.shape().end());
  std::vector<std::ptrdiff_t> strides;
  for (int64_t s : a.strides()) {
    if (s % static_cast<int64_t>(sizeof(T)) != 0) throw ValueError("as_xtensor: stride is not a multiple of the item size");
    strides.push_back(static_cast<std::ptrdiff_t>(s / static_cast<int64_t>(sizeof(T))));
  }
  std::size_t size = static_cast<std::size_t>(a.size());
  return xt::adapt(reinterpret_cast<T*>(a.data()), size, xt::no_ownership(), shape, strides);
}

/// A new C-contiguous ndarray holding the evaluated xtensor expression `e` (dtype from its value type).
template <class E>
ndarray from_xtensor(const E& e) {
  using T = typename std::decay_t<E>::value_type;
  xt::xarray<T> v = e;
  Shape shape(v.shape().begin(), v.shape().end());
  ndarray r = npc::empty(shape, dtype_for<T>());
  std::copy(v.begin(), v.end(), reinterpret_cast<T*>(r.data()));
  return r;
}

}  // namespace npc
