#pragma once
/// \file sorting.hpp
/// Sorting, searching and set kernels with NumPy's ordering: NaN sorts last, complex numbers
/// order lexicographically (real, then imaginary; NaNs last as NumPy orders them).
/// Mirrors numpy.sort, argsort, lexsort, partition, argpartition, searchsorted, unique,
/// isin, bincount.
#include <optional>
#include <span>
#include <vector>

#include "npc/ndarray.hpp"

namespace npc {

/// numpy.sort(a, axis): a sorted copy (C order); axis nullopt sorts the flattened array.
/// Uses Highway's vqsort where available (values only; equal values are indistinguishable).
/// `descending` reverses the order but keeps NaNs last, as NumPy.
ndarray sort(const ndarray& a, std::optional<int64_t> axis = -1, bool descending = false);
/// numpy.argsort(a, axis, kind="stable"): int64 indices; always stable (ties keep input order),
/// which is one of the orders NumPy's default kind may return and exactly kind="stable".
/// With `descending`, largest first, ties in input order, NaNs last (NumPy's descending=True).
ndarray argsort(const ndarray& a, std::optional<int64_t> axis = -1, bool descending = false);
/// numpy.lexsort(keys): indices sorting by the last key first; keys must share one shape;
/// sorts along `axis` of that shape.
ndarray lexsort(std::span<const ndarray> keys, int64_t axis = -1);
/// numpy.partition(a, kth, axis): a copy where each kth element is in its sorted position,
/// smaller-or-equal ones before it and greater-or-equal ones after. ValueError
/// ("kth(=5) out of bounds (3)") for out-of-range kth.
ndarray partition(const ndarray& a, std::span<const int64_t> kth, std::optional<int64_t> axis = -1);
/// numpy.argpartition: the int64 indices of partition().
ndarray argpartition(const ndarray& a, std::span<const int64_t> kth, std::optional<int64_t> axis = -1);
/// numpy.searchsorted(a, v, side, sorter): int64 insertion points of `v` (any shape) in the
/// sorted 1-d `a` (both cast to their common dtype first). `right` selects side="right".
ndarray searchsorted(const ndarray& a, const ndarray& v, bool right = false,
                     const std::optional<ndarray>& sorter = std::nullopt);

/// The pieces of numpy.unique on a flattened array.
struct UniqueResult {
  ndarray values;   ///< sorted unique values (a's dtype)
  ndarray index;    ///< int64: first occurrence of each value in the flattened input
  ndarray inverse;  ///< int64: for each input element, its position in `values` (input's shape)
  ndarray counts;   ///< int64: occurrences of each value
};
/// numpy.unique on the flattened array; with `equal_nan` all NaNs count as one value.
UniqueResult unique(const ndarray& a, bool equal_nan = true);
/// numpy.isin(element, test_elements, invert): bool array of element's shape.
ndarray isin(const ndarray& element, const ndarray& test_elements, bool invert = false);
/// numpy.bincount(x, weights, minlength): x non-negative integers (1-d). int64 counts, or
/// float64 sums of weights. ValueError for negative values or minlength < 0.
ndarray bincount(const ndarray& x, const std::optional<ndarray>& weights = std::nullopt, int64_t minlength = 0);

/// Counts (or sums of `weights`, as float64) of the points whose coordinates `coords[d]`
/// fall in the bins between consecutive `edges[d]` (each increasing, float64), as
/// numpy.histogramdd counts them: bins are half-open except the last, which includes its
/// right edge; points outside (or NaN) are dropped. With `density` the result is divided by
/// each dimension's bin widths and then by the total, as NumPy does. With `block` > 0 the
/// weights are summed per block of that many points and the block sums added to the totals
/// in order, as numpy.histogram's equal-width path sums them (blocks of 65536);
/// numpy.histogramdd sums them in one pass (block 0).
ndarray histogram_counts(std::span<const ndarray> coords, std::span<const ndarray> edges,
                         const std::optional<ndarray>& weights = std::nullopt, bool density = false,
                         int64_t block = 0);
/// 1 when the 1-d `a` is non-decreasing, -1 when non-increasing (and not constant), 0 otherwise
/// (NaN compares as NumPy's sort order places it).
int monotonic(const ndarray& a);
/// Smallest and largest value of a real array as doubles (NaN when any value is NaN);
/// ValueError for an empty array.
std::pair<double, double> value_range(const ndarray& a);

}  // namespace npc
