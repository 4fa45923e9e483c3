// Array creation: numpy.empty/zeros/ones/full(_like), arange, linspace, logspace, eye.
#include "npc/creation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "core/dispatch.hpp"

namespace npc {

namespace {
ndarray allocate(std::span<const int64_t> shape, DType dtype, Order order, bool zero) {
  int64_t n = shape_size(shape, itemsize(dtype));
  Shape sh(shape.begin(), shape.end());
  std::shared_ptr<Storage> st;
  try {
    st = Storage::allocate(static_cast<size_t>(n) * itemsize(dtype), zero);
  } catch (const MemoryError& e) {
    throw ArrayMemoryError(std::string(e.what()) + " for an array with shape " + shape_str(sh) +
                               " and data type " + std::string(name(dtype)),
                           sh, static_cast<int>(dtype));
  }
  Strides strides = contiguous_strides(sh, itemsize(dtype), order == Order::F ? Order::F : Order::C);
  return ndarray(std::move(st), 0, dtype, std::move(sh), std::move(strides));
}

ndarray allocate_like(const ndarray& proto, DType dtype, Order order, const std::optional<Shape>& shape, bool zero) {
  const bool same_rank = !shape || static_cast<int>(shape->size()) == proto.ndim();
  Shape sh = shape ? *shape : proto.shape();
  if (order == Order::A) order = (proto.is_f_contiguous() && !proto.is_c_contiguous()) ? Order::F : Order::C;
  if (order == Order::K) {
    if (!same_rank || proto.is_c_contiguous()) order = Order::C;
    else if (proto.is_f_contiguous()) order = Order::F;
  }
  if (order != Order::K) return allocate(sh, dtype, order, zero);
  const std::vector<int> perm = like_axes(proto, order);
  const int nd = proto.ndim();
  Shape psh(nd);
  for (int i = 0; i < nd; ++i) psh[i] = sh[perm[i]];
  ndarray base = allocate(psh, dtype, Order::C, zero);
  Strides st(nd);
  for (int i = 0; i < nd; ++i) st[perm[i]] = base.strides()[i];
  return ndarray(base.storage(), 0, dtype, sh, st);
}
}  // namespace

// Layout of `proto` kept for a new array (NumPy's order='K'): axes ranked by |stride|,
// the new array C-contiguous in that ranking.
std::vector<int> like_axes(const ndarray& proto, Order order) {
  const int nd = proto.ndim();
  std::vector<int> perm(nd);
  std::iota(perm.begin(), perm.end(), 0);
  if (order == Order::A) order = (proto.is_f_contiguous() && !proto.is_c_contiguous()) ? Order::F : Order::C;
  if (order == Order::K) {
    if (proto.is_c_contiguous()) order = Order::C;
    else if (proto.is_f_contiguous()) order = Order::F;
  }
  if (order == Order::F) std::reverse(perm.begin(), perm.end());
  if (order != Order::K) return perm;
  std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) {
    return std::abs(proto.strides()[a]) > std::abs(proto.strides()[b]);
  });
  return perm;
}

// Note [concatenate layout]
// NumPy's concatenate (and stack, which concatenates its inputs with a new length-1 axis)
// allocates its result in the axis order of PyArray_CreateMultiSortedStridePerm: an
// insertion sort of the axes, outermost first, where an axis moves outwards past another
// when the first input that has both axes longer than 1 has the larger |stride| on it (C
// order wins conflicts: a later input that disagrees stops the move), ties and axes no input
// decides keep their place. So F-ordered inputs give an F-ordered result, and stack's new
// axis stays where it is inserted. The result is C-contiguous in that order.
std::vector<int> concat_axes(std::span<const ndarray> arrays) {
  const int nd = arrays.empty() ? 0 : arrays[0].ndim();
  std::vector<int> perm(nd);
  std::iota(perm.begin(), perm.end(), 0);
  for (int i0 = 1; i0 < nd; ++i0) {
    int pos = i0;
    const int j0 = perm[i0];
    for (int i1 = i0 - 1; i1 >= 0; --i1) {
      const int j1 = perm[i1];
      bool ambiguous = true, swap = false;
      for (const ndarray& a : arrays) {
        if (a.shape()[j0] == 1 || a.shape()[j1] == 1) continue;
        if (std::abs(a.strides()[j0]) <= std::abs(a.strides()[j1])) swap = false;
        else if (ambiguous) swap = true;
        ambiguous = false;
      }
      if (ambiguous) continue;
      if (!swap) break;
      pos = i1;
    }
    std::rotate(perm.begin() + pos, perm.begin() + i0, perm.begin() + i0 + 1);
  }
  return perm;
}

ndarray empty_in_axes(std::span<const int64_t> shape, DType dtype, const std::vector<int>& axes) {
  const int nd = static_cast<int>(shape.size());
  bool identity = true;
  for (int i = 0; i < nd; ++i) identity = identity && axes[i] == i;
  if (identity) return allocate(shape, dtype, Order::C, false);
  Shape psh(nd);
  for (int i = 0; i < nd; ++i) psh[i] = shape[axes[i]];
  ndarray base = allocate(psh, dtype, Order::C, false);
  Strides st(nd);
  for (int i = 0; i < nd; ++i) st[axes[i]] = base.strides()[i];
  return ndarray(base.storage(), 0, dtype, Shape(shape.begin(), shape.end()), st);
}

ndarray empty(std::span<const int64_t> shape, DType dtype, Order order) { return allocate(shape, dtype, order, false); }
ndarray zeros(std::span<const int64_t> shape, DType dtype, Order order) { return allocate(shape, dtype, order, true); }
ndarray ones(std::span<const int64_t> shape, DType dtype, Order order) {
  return full(shape, Scalar::from_int(1), dtype, order);
}
ndarray full(std::span<const int64_t> shape, const Scalar& value, DType dtype, Order order) {
  ndarray r = allocate(shape, dtype, order, false);
  r.fill(value);
  return r;
}

ndarray empty_like(const ndarray& p, std::optional<DType> dtype, Order order, std::optional<Shape> shape) {
  return allocate_like(p, dtype.value_or(p.dtype()), order, shape, false);
}
ndarray zeros_like(const ndarray& p, std::optional<DType> dtype, Order order, std::optional<Shape> shape) {
  return allocate_like(p, dtype.value_or(p.dtype()), order, shape, true);
}
ndarray ones_like(const ndarray& p, std::optional<DType> dtype, Order order, std::optional<Shape> shape) {
  return full_like(p, Scalar::from_int(1), dtype, order, shape);
}
ndarray full_like(const ndarray& p, const Scalar& v, std::optional<DType> dtype, Order order, std::optional<Shape> shape) {
  ndarray r = allocate_like(p, dtype.value_or(p.dtype()), order, shape, false);
  r.fill(v);
  return r;
}

// ---------------------------------------------------------------- arange
namespace {
Scalar add_scalars(const Scalar& a, const Scalar& b) {
  DType t = promote_types(a.dtype, b.dtype);
  switch (kind(t)) {
    case Kind::Bool: case Kind::Signed:
      return Scalar::from_int(static_cast<int64_t>(static_cast<uint64_t>(a.as_int()) + static_cast<uint64_t>(b.as_int())));
    case Kind::Unsigned: return Scalar::from_uint(a.cast(DType::UInt64).u + b.cast(DType::UInt64).u);
    case Kind::Float: return Scalar::from_double(a.as_double() + b.as_double());
    default: return Scalar::from_complex(a.as_complex() + b.as_complex());
  }
}

// NumPy's per-dtype "fill": element i = start + i * delta, delta = x[1] - x[0], in the dtype.
template <class T>
void arange_fill(T* x, int64_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    // two elements at most (checked by the caller)
  } else if constexpr (std::is_same_v<T, float16>) {
    float start = half_to_float(x[0]), delta = half_to_float(x[1]) - start;
    for (int64_t i = 2; i < n; ++i) x[i] = float_to_half(start + static_cast<float>(i) * delta);
  } else if constexpr (detail::is_complex_v<T>) {
    using R = typename T::value_type;
    R sr = x[0].real(), si = x[0].imag(), dr = x[1].real() - sr, di = x[1].imag() - si;
    for (int64_t i = 2; i < n; ++i) x[i] = T(sr + static_cast<R>(i) * dr, si + static_cast<R>(i) * di);
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    U start = static_cast<U>(x[0]), delta = static_cast<U>(static_cast<U>(x[1]) - start);
    for (int64_t i = 2; i < n; ++i) x[i] = static_cast<T>(static_cast<U>(start + static_cast<U>(i) * delta));
  } else {
    T start = x[0], delta = x[1] - start;
    for (int64_t i = 2; i < n; ++i) x[i] = start + static_cast<T>(i) * delta;
  }
}
}  // namespace

ndarray arange(const Scalar& start, const Scalar& stop, const Scalar& step, DType dtype) {
  // Length as NumPy computes it: ceil((stop - start) / step) in double (complex: real parts).
  double st = step.as_complex().real(), d = stop.as_complex().real() - start.as_complex().real();
  if (st == 0 && !is_complex(step.dtype)) throw ValueError("Maximum allowed size exceeded");
  double len = std::ceil(d / st);
  auto exact = [](const Scalar& v) -> __int128 {
    return kind(v.dtype) == Kind::Unsigned ? static_cast<__int128>(v.u) : static_cast<__int128>(v.as_int());
  };
  if (!is_inexact(start.dtype) && !is_inexact(stop.dtype) && !is_inexact(step.dtype)) {
    // Integer bounds: the exact difference (NumPy subtracts Python ints exactly).
    __int128 num = exact(stop) - exact(start), den = exact(step);
    __int128 q = num / den;
    if ((num % den != 0) && ((num < 0) == (den < 0))) q += 1;
    len = static_cast<double>(q);
  }
  if (std::isnan(len)) throw ValueError("arange: cannot compute length");
  if (len > 9.2e18) throw ValueError("Maximum allowed size exceeded");
  int64_t n = len > 0 ? static_cast<int64_t>(len) : 0;
  if (dtype == DType::Bool && n > 2) throw TypeError("arange() is only supported for booleans when the result has at most length 2.");
  Shape sh{n};
  ndarray r = empty(sh, dtype);
  if (n == 0) return r;
  start.store(dtype, r.data());
  if (n == 1) return r;
  add_scalars(start, step).store(dtype, r.data() + itemsize(dtype));
  detail::visit(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    arange_fill(reinterpret_cast<T*>(r.data()), n);
  });
  return r;
}

// ---------------------------------------------------------------- linspace / logspace
namespace {
// float64 values of numpy.linspace (before the final cast), NumPy's operation order:
// y = arange(num) * step + start (or (i / div) * delta when step underflows to 0), y[-1] = stop.
ndarray linspace_values(double start, double stop, int64_t num, bool endpoint) {
  if (num < 0) throw ValueError("Number of samples, " + std::to_string(num) + ", must be non-negative.");
  int64_t div = endpoint ? num - 1 : num;
  double delta = stop - start;
  Shape sh{num};
  ndarray r = empty(sh, DType::Float64);
  double* y = reinterpret_cast<double*>(r.data());
  if (div > 0) {
    double step = delta / static_cast<double>(div);
    if (step == 0) {
      for (int64_t i = 0; i < num; ++i) y[i] = (static_cast<double>(i) / static_cast<double>(div)) * delta + start;
    } else {
      for (int64_t i = 0; i < num; ++i) y[i] = static_cast<double>(i) * step + start;
    }
  } else {
    for (int64_t i = 0; i < num; ++i) y[i] = static_cast<double>(i) * delta + start;
  }
  if (endpoint && num > 1) y[num - 1] = stop;
  return r;
}
}  // namespace

ndarray array(std::span<const double> values, DType dtype) {
  Shape sh{static_cast<int64_t>(values.size())};
  ndarray src(Storage::borrow(const_cast<double*>(values.data()), values.size() * sizeof(double), {}), 0,
              DType::Float64, sh, {static_cast<int64_t>(sizeof(double))});
  return src.astype(dtype);
}

ndarray linspace(double start, double stop, int64_t num, bool endpoint, DType dtype) {
  ndarray y = linspace_values(start, stop, num, endpoint);
  double* v = reinterpret_cast<double*>(y.data());
  if (is_integer(dtype))
    for (int64_t i = 0; i < num; ++i) v[i] = std::floor(v[i]);
  return dtype == DType::Float64 ? y : y.astype(dtype);
}

ndarray logspace(double start, double stop, int64_t num, bool endpoint, double base, DType dtype) {
  ndarray y = linspace_values(start, stop, num, endpoint);
  double* v = reinterpret_cast<double*>(y.data());
  for (int64_t i = 0; i < num; ++i) v[i] = std::pow(base, v[i]);
  return dtype == DType::Float64 ? y : y.astype(dtype);
}

ndarray eye(int64_t n, std::optional<int64_t> m_opt, int64_t k, DType dtype, Order order) {
  int64_t m = m_opt.value_or(n);
  Shape sh{n, m};
  ndarray r = zeros(sh, dtype, order);
  alignas(16) std::byte one[16];
  Scalar::from_int(1).store(dtype, one);
  for (int64_t i = std::max<int64_t>(0, -k); i < n && i + k < m; ++i)
    std::memcpy(r.data() + i * r.strides()[0] + (i + k) * r.strides()[1], one, itemsize(dtype));
  return r;
}

ndarray identity(int64_t n, DType dtype) { return eye(n, n, 0, dtype); }

ndarray scalar_array(const Scalar& v) {
  ndarray r = empty(Shape{}, v.dtype);
  v.store(v.dtype, r.data());
  return r;
}

ndarray from_memory(void* data, DType dtype, Shape shape, Strides strides, std::function<void()> release, bool writeable,
                    std::span<std::byte> valid) {
  const int64_t isz = static_cast<int64_t>(itemsize(dtype));
  const int64_t n = shape_size(shape, static_cast<size_t>(isz));
  if (strides.size() != shape.size()) throw ValueError("strides and shape must have the same length");
  if (!data && n > 0) throw ValueError("from_memory: data is null");
  // The storage is exactly the bytes the view reaches: from the lowest element (negative
  // strides reach below `data`) to the end of the highest one.
  int64_t lo = 0, hi = n > 0 ? isz : 0;
  if (n > 0)
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t span;
      if (__builtin_mul_overflow(strides[d], shape[d] - 1, &span) ||
          __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
        throw ValueError("from_memory: the strides reach beyond the address space");
    }
  if (!valid.empty()) {
    // The storage is the owner's whole block; the constructor checks that the array lies in it.
    const int64_t offset = static_cast<int64_t>(reinterpret_cast<uintptr_t>(data) -
                                                reinterpret_cast<uintptr_t>(valid.data()));
    auto st = Storage::borrow(valid.data(), valid.size(), std::move(release));
    return ndarray(std::move(st), offset, dtype, std::move(shape), std::move(strides), writeable);
  }
  auto st = Storage::borrow(static_cast<std::byte*>(data) + lo, static_cast<size_t>(hi - lo), std::move(release));
  return ndarray(std::move(st), -lo, dtype, std::move(shape), std::move(strides), writeable);
}

template <class T>
ndarray array(std::initializer_list<T> values) {
  using E = T;
  constexpr DType t = detail::dtype_of<E>::value;
  Shape sh{static_cast<int64_t>(values.size())};
  ndarray r = empty(sh, t);
  std::copy(values.begin(), values.end(), reinterpret_cast<E*>(r.data()));
  return r;
}
#define NPC_ARRAY_INST_(E, T, N) template ndarray array<T>(std::initializer_list<T>);
NPC_FOR_EACH_DTYPE(NPC_ARRAY_INST_)
#undef NPC_ARRAY_INST_

}  // namespace npc
