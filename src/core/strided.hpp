#pragma once
// Internal: N-d strided iteration over K operands sharing one shape.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace npc::detail {

/// Geometry of K operands after axis sorting and coalescing: `shape[d]`, `strides[k][d]`,
/// the last axis innermost.
template <size_t K>
struct LoopGeometry {
  std::vector<int64_t> shape;
  std::array<std::vector<int64_t>, K> strides;
  bool empty = false;
};

// Note [loop order]
// Axes are ordered by operand 0's |stride| (largest outermost, stable), so the innermost loop
// walks memory of the output contiguously whatever the layout (C, F, transposed); then
// neighbouring axes that every operand walks as one are merged, so contiguous arrays become
// one flat loop.
template <size_t K>
LoopGeometry<K> make_geometry(std::span<const int64_t> shape, const std::array<std::span<const int64_t>, K>& strides) {
  LoopGeometry<K> g;
  std::vector<int> axes;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) { g.empty = true; return g; }
    if (shape[d] != 1) axes.push_back(static_cast<int>(d));
  }
  std::stable_sort(axes.begin(), axes.end(), [&](int a, int b) {
    return std::abs(strides[0][a]) > std::abs(strides[0][b]);
  });
  for (int a : axes) {
    if (!g.shape.empty()) {
      bool merge = true;
      for (size_t k = 0; k < K; ++k)
        if (g.strides[k].back() != strides[k][a] * shape[a]) { merge = false; break; }
      if (merge) {
        g.shape.back() *= shape[a];
        for (size_t k = 0; k < K; ++k) g.strides[k].back() = strides[k][a];
        continue;
      }
    }
    g.shape.push_back(shape[a]);
    for (size_t k = 0; k < K; ++k) g.strides[k].push_back(strides[k][a]);
  }
  return g;
}

/// Calls inner(ptrs, inner_strides, n) for every innermost run, in loop order.
template <size_t K, class F>
void strided_loop(std::span<const int64_t> shape, std::array<std::byte*, K> ptrs,
                  const std::array<std::span<const int64_t>, K>& strides, F&& inner) {
  LoopGeometry<K> g = make_geometry<K>(shape, strides);
  if (g.empty) return;
  std::array<int64_t, K> is{};
  if (g.shape.empty()) { inner(ptrs, is, int64_t{1}); return; }
  const size_t nd = g.shape.size();
  for (size_t k = 0; k < K; ++k) is[k] = g.strides[k][nd - 1];
  const int64_t n = g.shape[nd - 1];
  if (nd == 1) { inner(ptrs, is, n); return; }
  std::vector<int64_t> idx(nd - 1, 0);
  for (;;) {
    inner(ptrs, is, n);
    int d = static_cast<int>(nd) - 2;
    for (; d >= 0; --d) {
      for (size_t k = 0; k < K; ++k) ptrs[k] += g.strides[k][d];
      if (++idx[d] < g.shape[d]) break;
      for (size_t k = 0; k < K; ++k) ptrs[k] -= g.strides[k][d] * g.shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace npc::detail
