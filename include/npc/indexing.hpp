#pragma once
/// \file indexing.hpp
/// NumPy's indexing (numpy.ndarray.__getitem__ / __setitem__): basic indexing returns views,
/// advanced indexing (integer and boolean arrays) returns copies, with NumPy's rules for
/// where the advanced dimensions go; plus the gather/scatter primitives built on it
/// (take, nonzero, compress, put).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "npc/ndarray.hpp"

namespace npc {

/// A Python slice `start:stop:step`; absent parts take NumPy's defaults. Out-of-range bounds
/// clamp (as Python's slice.indices); step 0 is a ValueError.
struct Slice {
  std::optional<int64_t> start, stop, step;
};

/// One component of an index expression: an integer, a slice, `...`, `None` (newaxis), or an
/// integer/boolean index array.
struct IndexItem {
  enum class Kind : uint8_t { Integer, Slice, Ellipsis, NewAxis, Array };
  Kind kind = Kind::Ellipsis;
  int64_t integer = 0;
  Slice slice;
  ndarray array;

  IndexItem() = default;
  /// An integer index (negative counts from the end).
  IndexItem(int64_t i) : kind(Kind::Integer), integer(i) {}  // NOLINT: implicit, as a[i]
  IndexItem(int i) : IndexItem(static_cast<int64_t>(i)) {}  // NOLINT
  /// A slice.
  IndexItem(Slice s) : kind(Kind::Slice), slice(s) {}  // NOLINT
  /// An integer or boolean index array (a 0-d integer array acts as an integer).
  IndexItem(ndarray a) : kind(Kind::Array), array(std::move(a)) {}  // NOLINT
  /// `...`
  static IndexItem ellipsis() { return IndexItem(); }
  /// `None` / numpy.newaxis.
  static IndexItem newaxis() { IndexItem r; r.kind = Kind::NewAxis; return r; }
};

/// `a[idx]` (numpy.ndarray.__getitem__). Basic indices (integers, slices, `...`, newaxis) give
/// a view of `a`; any index array gives a copy. Integer indexing of every dimension gives a
/// 0-d view (the Python layer turns it into a NumPy scalar; see index_is_scalar).
/// Throws IndexError for out-of-range integers ("index 5 is out of bounds for axis 0 with
/// size 3"), too many indices, several ellipses, non-integer index arrays, boolean masks of
/// the wrong shape and index arrays that do not broadcast; ValueError for a zero slice step.
ndarray index(const ndarray& a, std::span<const IndexItem> idx);
/// True when `a[idx]` selects one element with integers only, where NumPy returns a scalar.
bool index_is_scalar(const ndarray& a, std::span<const IndexItem> idx);
/// True when `idx` holds no index arrays other than 0-d integer arrays, so a[idx] is a view.
bool index_is_basic(std::span<const IndexItem> idx);
/// Raises the IndexError NumPy's index preparation raises for `a[idx]` (too many indices, an
/// integer out of bounds, a boolean array that does not match its axes), before the value of an
/// assignment is converted (Note [index before value] in python/npc/csrc/bind_indexing.cpp).
/// Index arrays' values are not looked at: NumPy checks them while it assigns.
void check_index_items(const ndarray& a, std::span<const IndexItem> idx);

/// `a[idx] = value` (numpy.ndarray.__setitem__): `value` broadcasts to the shape of `a[idx]`
/// and is cast unsafely to a.dtype(). Overlapping memory gives NumPy's result (the value is
/// read completely before it is written). Repeated advanced indices do not accumulate: the
/// last write wins. ValueError when `a` is read-only or shapes do not broadcast.
void index_assign(const ndarray& a, std::span<const IndexItem> idx, const ndarray& value);

/// numpy.copyto(dst, src) for equal shapes (src already broadcast), casting unsafely, with
/// NumPy's handling of overlapping memory (Note [assignment overlap] in src/core/indexing.cpp).
void assign_array(const ndarray& dst, const ndarray& src);

/// numpy.nonzero: one int64 array per dimension (a 0-d input acts as 1-d, as NumPy 2 raises
/// for it; npc raises ValueError "Calling nonzero on 0d arrays is not allowed...").
std::vector<ndarray> nonzero(const ndarray& a);
/// numpy.count_nonzero over the whole array.
int64_t count_nonzero(const ndarray& a);

/// Out-of-range handling of take/put/choose (numpy's mode=).
enum class ClipMode : uint8_t { Raise, Wrap, Clip };
/// numpy.take(a, indices, axis, mode): with no axis, `a` is flattened. Result shape:
/// a.shape[:axis] + indices.shape + a.shape[axis+1:]. IndexError for out-of-range indices
/// with mode Raise; TypeError for non-integer indices.
ndarray take(const ndarray& a, const ndarray& indices, std::optional<int64_t> axis = std::nullopt,
             ClipMode mode = ClipMode::Raise);
/// numpy.put(a, indices, values, mode): flat indices; values repeat cyclically.
void put(const ndarray& a, const ndarray& indices, const ndarray& values, ClipMode mode = ClipMode::Raise);
/// numpy.compress(condition, a, axis): the slices along `axis` where condition is true
/// (flattened when no axis). IndexError when condition is longer than the axis.
ndarray compress(const ndarray& condition, const ndarray& a, std::optional<int64_t> axis = std::nullopt);

// Note [index trace hooks]
// Indexing a traced array (ndarray::is_traced) must record a graph node instead of touching
// data. src/core does not know the tracer; it calls these hooks, installed by src/tracer,
// when `a` or any index array is traced.
using IndexTraceHook = ndarray (*)(const ndarray& a, std::span<const IndexItem> idx);
using IndexAssignTraceHook = void (*)(const ndarray& a, std::span<const IndexItem> idx, const ndarray& value);
void set_index_trace_hooks(IndexTraceHook get, IndexAssignTraceHook set);

}  // namespace npc
