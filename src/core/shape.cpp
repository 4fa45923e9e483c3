// Shape manipulation (views) and joining (copies) with NumPy's rules.
#include "core/cast.hpp"
#include "npc/shape.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "npc/creation.hpp"
#include "npc/indexing.hpp"
#include "npc/ops.hpp"
#include "core/parallel.hpp"

namespace npc {

namespace {
std::vector<int64_t> normalize_axes(std::span<const int64_t> axes, int64_t ndim, const char* what) {
  std::vector<int64_t> r;
  std::vector<bool> seen(static_cast<size_t>(ndim), false);
  for (int64_t ax : axes) {
    int64_t a = normalize_axis(ax, ndim);
    if (seen[a]) throw ValueError(std::string("repeated axis") + what);
    seen[a] = true;
    r.push_back(a);
  }
  return r;
}

using detail::casting_name;

void check_cast(DType from, DType to, Casting casting) {
  if (!can_cast(from, to, casting))
    throw TypeError("Cannot cast array data from dtype('" + std::string(name(from)) + "') to dtype('" +
                    std::string(name(to)) + "') according to the rule '" + casting_name(casting) + "'");
}
}  // namespace

ndarray squeeze(const ndarray& a, std::optional<std::vector<int64_t>> axes) {
  std::vector<bool> drop(a.ndim(), false);
  if (axes && a.ndim() == 0) {
    normalize_axes(*axes, 1, "");  // a 0-d array accepts axis 0 and -1
  } else if (axes) {
    for (int64_t ax : normalize_axes(*axes, a.ndim(), "")) {
      if (a.shape()[ax] != 1) throw ValueError("cannot select an axis to squeeze out which has size not equal to one");
      drop[ax] = true;
    }
  } else {
    for (int d = 0; d < a.ndim(); ++d) drop[d] = a.shape()[d] == 1;
  }
  Shape sh;
  Strides st;
  for (int d = 0; d < a.ndim(); ++d)
    if (!drop[d]) { sh.push_back(a.shape()[d]); st.push_back(a.strides()[d]); }
  return a.with_geometry(a.offset(), a.dtype(), sh, st);
}

ndarray expand_dims(const ndarray& a, std::span<const int64_t> axes) {
  const int64_t nd = a.ndim() + static_cast<int64_t>(axes.size());
  std::vector<int64_t> ax = normalize_axes(axes, nd, "");
  std::vector<bool> is_new(static_cast<size_t>(nd), false);
  for (int64_t x : ax) is_new[x] = true;
  Shape sh;
  Strides st;
  int src = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (is_new[d]) { sh.push_back(1); st.push_back(0); }
    else { sh.push_back(a.shape()[src]); st.push_back(a.strides()[src]); ++src; }
  }
  return a.with_geometry(a.offset(), a.dtype(), sh, st);
}

ndarray swapaxes(const ndarray& a, int64_t axis1, int64_t axis2) {
  int64_t x, y;
  try { x = normalize_axis(axis1, a.ndim()); } catch (const AxisError& e) { throw AxisError(std::string("axis1: ") + e.what()); }
  try { y = normalize_axis(axis2, a.ndim()); } catch (const AxisError& e) { throw AxisError(std::string("axis2: ") + e.what()); }
  std::vector<int64_t> perm(a.ndim());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[x], perm[y]);
  return a.transpose(perm);
}

ndarray moveaxis(const ndarray& a, std::span<const int64_t> source, std::span<const int64_t> destination) {
  if (source.size() != destination.size())
    throw ValueError("`source` and `destination` arguments must have the same number of elements");
  std::vector<int64_t> src = normalize_axes(source, a.ndim(), " in `source` argument");
  std::vector<int64_t> dst = normalize_axes(destination, a.ndim(), " in `destination` argument");
  std::vector<int64_t> order;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (std::find(src.begin(), src.end(), d) == src.end()) order.push_back(d);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i < src.size(); ++i) pairs.emplace_back(dst[i], src[i]);
  std::sort(pairs.begin(), pairs.end());
  for (auto [d, s] : pairs) order.insert(order.begin() + d, s);
  return a.transpose(order);
}

ndarray flip(const ndarray& a, std::optional<std::vector<int64_t>> axes) {
  std::vector<int64_t> ax;
  if (axes) ax = normalize_axes(*axes, a.ndim(), "");
  else { ax.resize(a.ndim()); std::iota(ax.begin(), ax.end(), 0); }
  int64_t off = a.offset();
  Strides st = a.strides();
  for (int64_t d : ax) {
    if (a.shape()[d] > 0) off += (a.shape()[d] - 1) * st[d];
    st[d] = -st[d];
  }
  return a.with_geometry(off, a.dtype(), a.shape(), st);
}

ndarray diagonal(const ndarray& a, int64_t offset, int64_t axis1, int64_t axis2) {
  if (a.ndim() < 2) throw ValueError("diag requires an array of at least two dimensions");
  int64_t x = normalize_axis(axis1, a.ndim()), y = normalize_axis(axis2, a.ndim());
  if (x == y) throw ValueError("axis1 and axis2 cannot be the same");
  int64_t off = a.offset();
  int64_t n1 = a.shape()[x], n2 = a.shape()[y];
  int64_t len;
  if (offset >= 0) {
    len = std::max<int64_t>(0, std::min(n1, n2 - offset));
    if (len > 0) off += offset * a.strides()[y];
  } else {
    len = std::max<int64_t>(0, std::min(n1 + offset, n2));
    if (len > 0) off -= offset * a.strides()[x];
  }
  Shape sh;
  Strides st;
  for (int d = 0; d < a.ndim(); ++d)
    if (d != x && d != y) { sh.push_back(a.shape()[d]); st.push_back(a.strides()[d]); }
  sh.push_back(len);
  st.push_back(a.strides()[x] + a.strides()[y]);
  ndarray r = a.with_geometry(off, a.dtype(), sh, st);
  r.set_writeable(false);
  return r;
}

ndarray ravel(const ndarray& a, Order order) {
  // NumPy's ravel returns a view only of arrays contiguous in the requested order (unlike
  // reshape(-1), which also views uniformly strided arrays).
  std::vector<int64_t> flat{-1};
  if (order == Order::A) order = a.is_f_contiguous() && !a.is_c_contiguous() ? Order::F : Order::C;
  if (order == Order::C && !a.is_c_contiguous()) return a.copy(Order::C).reshape(flat);
  if (order == Order::F && !a.is_f_contiguous()) return a.copy(Order::F).reshape(flat, Order::F);
  if (order == Order::K) {
    // Memory order: a view when the strides (sorted, made positive) describe one run.
    std::vector<int> axes;
    for (int d = 0; d < a.ndim(); ++d)
      if (a.shape()[d] != 1) axes.push_back(d);
    std::stable_sort(axes.begin(), axes.end(),
                     [&](int p, int q) { return std::abs(a.strides()[p]) > std::abs(a.strides()[q]); });
    bool positive = true;
    for (int d : axes) positive = positive && a.strides()[d] > 0;
    if (positive) {
      Shape sh;
      Strides st;
      for (int d : axes) { sh.push_back(a.shape()[d]); st.push_back(a.strides()[d]); }
      ndarray t = a.with_geometry(a.offset(), a.dtype(), sh, st);
      if (t.is_c_contiguous()) return t.reshape(flat);
    }
    // Not contiguous in any axis order: a copy in memory order.
    ndarray c = a.copy(Order::K);
    Shape sh;
    Strides st;
    std::vector<int> axes2;
    for (int d = 0; d < a.ndim(); ++d) axes2.push_back(d);
    std::stable_sort(axes2.begin(), axes2.end(),
                     [&](int p, int q) { return std::abs(c.strides()[p]) > std::abs(c.strides()[q]); });
    for (int d : axes2) { sh.push_back(c.shape()[d]); st.push_back(c.strides()[d]); }
    return c.with_geometry(c.offset(), c.dtype(), sh, st).reshape(flat);
  }
  return a.reshape(flat, order);
}

ndarray concatenate(std::span<const ndarray> arrays, std::optional<int64_t> axis, std::optional<DType> dtype,
                    Casting casting, const ndarray* out) {
  if (arrays.empty()) throw ValueError("need at least one array to concatenate");
  std::vector<ndarray> in(arrays.begin(), arrays.end());
  if (!axis) {
    for (ndarray& x : in) x = x.reshape(std::vector<int64_t>{-1});
  }
  const int nd = in[0].ndim();
  if (nd == 0) throw ValueError("zero-dimensional arrays cannot be concatenated");
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].ndim() != nd)
      throw ValueError("all the input arrays must have same number of dimensions, but the array at index 0 has " +
                       std::to_string(nd) + " dimension(s) and the array at index " + std::to_string(i) + " has " +
                       std::to_string(in[i].ndim()) + " dimension(s)");
  const int64_t ax = axis ? normalize_axis(*axis, nd) : 0;
  Shape shape = in[0].shape();
  int64_t total = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    for (int d = 0; d < nd; ++d) {
      if (d == ax || in[i].shape()[d] == shape[d]) continue;
      throw ValueError("all the input array dimensions except for the concatenation axis must match exactly, but "
                       "along dimension " + std::to_string(d) + ", the array at index 0 has size " +
                       std::to_string(shape[d]) + " and the array at index " + std::to_string(i) + " has size " +
                       std::to_string(in[i].shape()[d]));
    }
    total += in[i].shape()[ax];
  }
  shape[ax] = total;
  DType rt;
  if (out) {
    rt = out->dtype();
  } else if (dtype) {
    rt = *dtype;
  } else {
    std::vector<DType> ts;
    for (const ndarray& x : in) ts.push_back(x.dtype());
    rt = result_type(ts);
  }
  for (const ndarray& x : in) check_cast(x.dtype(), rt, casting);
  ndarray r;
  if (out) {
    if (out->shape() != shape) throw ValueError("Output array is the wrong shape");
    r = *out;
  } else {
    const std::vector<int> axes = concat_axes(in);  // Note [concatenate layout] in creation.cpp
    if (ndarray::trace_hooks().empty &&
        std::any_of(in.begin(), in.end(), [](const ndarray& x) { return x.is_traced(); }))
      r = ndarray::trace_hooks().empty(shape, rt, axes);  // Note [traced views and writes]
    else
      r = empty_in_axes(shape, rt, axes);
  }
  // Contiguous same-dtype pieces along axis 0 of a C-contiguous result are single memcpys.
  int64_t pos = 0;
  std::vector<IndexItem> key;  // built on first use: each IndexItem allocates
  for (const ndarray& x : in) {
    int64_t n = x.shape()[ax];
    // An empty traced piece is written too: the write ties the result's static shape to the
    // piece's symbolic dims (Note [specialised symbols] in src/tracer/trace_nodes.cpp).
    if (n > 0 || x.is_traced()) {
      // Along axis 0 of a C-contiguous result each piece is one contiguous block.
      const bool block = ax == 0 && r.is_c_contiguous() && x.is_c_contiguous() && x.dtype() == rt &&
                         x.storage() != r.storage() && !r.is_traced() && !x.is_traced();
      std::optional<ndarray> dst;
      if (!block) {
        if (key.empty()) {
          key.assign(static_cast<size_t>(ax), IndexItem(Slice{}));
          key.emplace_back(Slice{});
        }
        key.back() = IndexItem(Slice{pos, pos + n, 1});
        dst = index(r, key);
      }
      if (block) {
        const size_t bytes = static_cast<size_t>(x.nbytes());
        std::byte* d = r.data() + pos * (r.ndim() > 0 ? r.strides()[0] : 0);
        const std::byte* s = x.data();
        // Large copies in parallel chunks: one core cannot saturate memory bandwidth.
        const int64_t chunk = 1 << 22;
        const int64_t nchunks = static_cast<int64_t>((bytes + chunk - 1) / chunk);
        if (nchunks > 4) {  // Note [no idle parallel regions] in src/ops/registry.cpp
          parallel::for_chunks(parallel::threads_for(static_cast<int64_t>(bytes)), nchunks, [&](int64_t c) {
            size_t b0 = static_cast<size_t>(c * chunk);
            std::memcpy(d + b0, s + b0, std::min<size_t>(chunk, bytes - b0));
          });
        } else {
          std::memcpy(d, s, bytes);
        }
      } else {
        assign_array(*dst, x);
      }
    }
    pos += n;
  }
  return r;
}

ndarray stack(std::span<const ndarray> arrays, int64_t axis, std::optional<DType> dtype, Casting casting,
              const ndarray* out) {
  if (arrays.empty()) throw ValueError("need at least one array to stack");
  for (const ndarray& x : arrays)
    if (x.shape() != arrays[0].shape()) throw ValueError("all input arrays must have the same shape");
  const int64_t ax = normalize_axis(axis, arrays[0].ndim() + 1);
  std::vector<ndarray> expanded;
  std::vector<int64_t> one{ax};
  for (const ndarray& x : arrays) expanded.push_back(expand_dims(x, one));
  return concatenate(expanded, ax, dtype, casting, out);
}

ndarray repeat(const ndarray& a, const ndarray& repeats, std::optional<int64_t> axis) {
  // A 0-d array repeats as a 1-d one (axis 0 or -1 allowed, as NumPy).
  ndarray src = axis && a.ndim() > 0 ? a : a.reshape(std::vector<int64_t>{-1});
  const int64_t ax = axis ? normalize_axis(*axis, std::max(a.ndim(), 1)) : 0;
  const int64_t n = src.shape()[ax];
  if (!is_integer(repeats.dtype()) && repeats.dtype() != DType::Bool)
    throw TypeError("Cannot cast array data from dtype('" + std::string(name(repeats.dtype())) +
                    "') to dtype('int64') according to the rule 'safe'");
  ndarray rep = repeats.astype(DType::Int64, Order::C);
  if (rep.ndim() > 1 || (rep.size() != 1 && rep.size() != n))
    throw ValueError("operands could not be broadcast together with shape (" + std::to_string(n) + ",) " +
                     shape_str(rep.shape()));
  const int64_t* r = reinterpret_cast<const int64_t*>(rep.data());
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = r[rep.size() == 1 ? 0 : i];
    if (k < 0) throw ValueError("negative dimensions are not allowed");
    idx.insert(idx.end(), static_cast<size_t>(k), i);
  }
  ndarray ind = from_memory(idx.data(), DType::Int64, Shape{static_cast<int64_t>(idx.size())}, Strides{8});
  ndarray ind_copy = ind.copy();
  std::vector<IndexItem> key(static_cast<size_t>(ax), IndexItem(Slice{}));
  key.emplace_back(ind_copy);
  return index(src, key);
}

ndarray roll(const ndarray& a, std::span<const int64_t> shifts, std::span<const int64_t> axes) {
  if (axes.empty()) {
    int64_t total = 0;
    for (int64_t s : shifts) total += s;
    std::vector<int64_t> ax0{0};
    std::vector<int64_t> sh0{total};
    return roll(a.reshape(std::vector<int64_t>{-1}), sh0, ax0).reshape(a.shape());
  }
  // shifts and axes broadcast against each other (NumPy: np.broadcast(shift, axis), so an
  // empty list beside one axis rolls nothing); shifts on the same axis add up.
  if (shifts.size() != axes.size() && shifts.size() != 1 && axes.size() != 1)
    throw ValueError("shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between arg 0 "
                     "with shape (" + std::to_string(shifts.size()) + ",) and arg 1 with shape (" +
                     std::to_string(axes.size()) + ",).");
  const size_t n = shifts.size() == 1 ? axes.size() : shifts.size();
  std::vector<int64_t> total(a.ndim(), 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t ax = normalize_axis(axes[axes.size() == 1 ? 0 : i], a.ndim());
    total[ax] += shifts[shifts.size() == 1 ? 0 : i];
  }
  // NumPy: empty_like(a), in a's layout; traced, a traced buffer whose pieces are recorded
  // writes (Note [traced views and writes]), as concatenate's.
  ndarray r = a.is_traced() && ndarray::trace_hooks().empty
                  ? ndarray::trace_hooks().empty(a.shape(), a.dtype(), like_axes(a, Order::K))
                  : empty_like(a, std::nullopt, Order::K);
  // Each axis splits into two blocks; copy the 2^k block combinations.
  std::vector<int> rolled;
  for (int d = 0; d < a.ndim(); ++d) {
    if (a.shape()[d] == 0) return r;
    int64_t s = total[d] % a.shape()[d];
    if (s < 0) s += a.shape()[d];
    total[d] = s;
    if (s != 0) rolled.push_back(d);
  }
  const size_t combos = size_t{1} << rolled.size();
  for (size_t c = 0; c < combos; ++c) {
    std::vector<IndexItem> src(a.ndim(), IndexItem(Slice{})), dst(a.ndim(), IndexItem(Slice{}));
    for (size_t j = 0; j < rolled.size(); ++j) {
      int d = rolled[j];
      int64_t s = total[d], len = a.shape()[d];
      if (c & (size_t{1} << j)) {  // tail of the source moves to the front
        src[d] = IndexItem(Slice{len - s, std::nullopt, std::nullopt});
        dst[d] = IndexItem(Slice{std::nullopt, s, std::nullopt});
      } else {
        src[d] = IndexItem(Slice{std::nullopt, len - s, std::nullopt});
        dst[d] = IndexItem(Slice{s, std::nullopt, std::nullopt});
      }
    }
    copy_into(index(r, dst), index(a, src));
  }
  return r;
}

namespace {
ndarray tri_mask_apply(const ndarray& a, int64_t k, bool lower) {
  ndarray r = a.copy();
  if (a.ndim() < 2) throw ValueError("tril/triu requires an array of at least two dimensions");
  const int64_t rows = a.shape()[a.ndim() - 2], cols = a.shape()[a.ndim() - 1];
  if (r.size() == 0) return r;
  const int64_t batch = r.size() / (rows * cols);
  const size_t isz = r.itemsize();
  std::byte* p = r.data();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      std::byte* row = p + ((b * rows + i) * cols) * static_cast<int64_t>(isz);
      // lower keeps j <= i + k; upper keeps j >= i + k.
      int64_t lo = lower ? std::clamp<int64_t>(i + k + 1, 0, cols) : 0;
      int64_t hi = lower ? cols : std::clamp<int64_t>(i + k, 0, cols);
      if (hi > lo) std::memset(row + lo * static_cast<int64_t>(isz), 0, static_cast<size_t>(hi - lo) * isz);
    }
  }
  return r;
}
}  // namespace

ndarray tril(const ndarray& a, int64_t k) { return tri_mask_apply(a, k, true); }
ndarray triu(const ndarray& a, int64_t k) { return tri_mask_apply(a, k, false); }

}  // namespace npc
