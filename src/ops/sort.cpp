// Sorting, searching and set kernels (numpy.sort, argsort, partition, searchsorted, unique,
// isin, bincount), typed by templates over the element type and instantiated here.
#include "npc/sorting.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dispatch.hpp"
#include "npc/creation.hpp"
#include "npc/indexing.hpp"
#include "npc/shape.hpp"
#include "npc/ops.hpp"
#include "ops/loops.hpp"
#include "ops/reduce_exec.hpp"

#ifdef NPC_HAVE_VQSORT
#include <hwy/contrib/sort/vqsort.h>
#endif

namespace npc {
namespace ops {
// False for a bool array holding bytes other than 0/1 (Note [bool bytes] in ufunc.cpp).
bool bool_bytes_normal(const ndarray& a);
}  // namespace ops

namespace {
using detail::TypeTag;

// Note [sort order]
// NumPy sorts NaN last: for reals, a < b or (b is NaN and a is not). Complex numbers order
// by real part then imaginary part, with NaNs placed as NumPy's npy_clt places them:
// [R + Rj, R + nanj, nan + Rj, nan + nanj].
template <class T>
struct Less {
  bool operator()(const T& a, const T& b) const {
    if constexpr (std::is_same_v<T, float16>) {
      float x = half_to_float(a), y = half_to_float(b);
      return x < y || (y != y && x == x);
    } else if constexpr (std::is_same_v<T, bool>) {
      // Note [bool bytes]: a bool view may hold any byte. NumPy orders bools by their raw
      // bytes; comparing C++ bools holding such bytes is not even a consistent order.
      uint8_t x, y;
      std::memcpy(&x, &a, 1);
      std::memcpy(&y, &b, 1);
      return x < y;
    } else if constexpr (std::is_floating_point_v<T>) {
      return a < b || (b != b && a == a);
    } else if constexpr (detail::is_complex_v<T>) {
      auto ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
      if (ar < br) return ai == ai || bi != bi;
      if (ar > br) return bi != bi && ai == ai;
      if (ar == br || (ar != ar && br != br)) return ai < bi || (bi != bi && ai == ai);
      return br != br;
    } else {
      return a < b;
    }
  }
};

template <class T>
bool is_nan(const T& v) {
  if constexpr (std::is_same_v<T, float16>) return std::isnan(half_to_float(v));
  else if constexpr (std::is_floating_point_v<T>) return v != v;
  else if constexpr (detail::is_complex_v<T>) return v.real() != v.real() || v.imag() != v.imag();
  else return false;
}

template <class T>
bool equal(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, float16>) return half_to_float(a) == half_to_float(b);
  else return a == b;
}

// Sorts n values in place.
template <class T>
void sort_values(T* p, int64_t n) {
  if (n < 2) return;
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    // Counting sort: 256 buckets.
    int64_t count[256] = {};
    for (int64_t i = 0; i < n; ++i) ++count[static_cast<uint8_t>(p[i]) ^ (std::is_same_v<T, int8_t> ? 0x80 : 0)];
    int64_t j = 0;
    for (int b = 0; b < 256; ++b) {
      uint8_t raw = static_cast<uint8_t>(b ^ (std::is_same_v<T, int8_t> ? 0x80 : 0));
      T v;
      std::memcpy(&v, &raw, 1);
      for (int64_t c = 0; c < count[b]; ++c) p[j++] = v;
    }
    return;
  }
#ifdef NPC_HAVE_VQSORT
  if constexpr (std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t> || std::is_same_v<T, int32_t> ||
                std::is_same_v<T, uint32_t> || std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> ||
                std::is_same_v<T, float> || std::is_same_v<T, double>) {
    static thread_local hwy::Sorter sorter;
    if constexpr (std::is_floating_point_v<T>) {
      // Note [vqsort special values]
      // vqsort (Highway 1.0) leaves NaN order unspecified and may return +-inf as the
      // largest/lowest finite value (its padding sentinels). So NaNs move to the end first
      // (NumPy sorts them last, keeping their bits), infinities are counted and taken out,
      // only finite values are vector-sorted, and the infinities are written back around them.
      // Note [signed zeros and NaN payloads in sort]
      // -0.0 == +0.0 and NaNs compare equal among themselves, yet their bits differ; the
      // vector sorter may rewrite one zero as the other. NumPy's sort keeps the values and,
      // for stable sorts, their input order. So the zero signs are recorded in input order
      // and written back over the (contiguous) run of zeros after sorting, and NaNs are
      // moved last with a stable partition.
      std::vector<bool> zero_signs;
      bool any_neg_zero = false, any_nan = false;
      for (int64_t i = 0; i < n; ++i) {
        any_neg_zero |= (p[i] == 0 && std::signbit(p[i]));
        any_nan |= (p[i] != p[i]);
      }
      if (any_neg_zero)
        for (int64_t i = 0; i < n; ++i)
          if (p[i] == 0) zero_signs.push_back(std::signbit(p[i]));
      T* end = any_nan ? std::stable_partition(p, p + n, [](T v) { return v == v; }) : p + n;
      const int64_t m = end - p;
      int64_t neg = 0, pos = 0, k = 0;
      const T inf = std::numeric_limits<T>::infinity();
      for (int64_t i = 0; i < m; ++i) {
        T v = p[i];
        if (v == inf) ++pos;
        else if (v == -inf) ++neg;
        else p[k++] = v;
      }
      sorter(p, static_cast<size_t>(k), hwy::SortAscending());
      if (neg) {
        std::memmove(p + neg, p, static_cast<size_t>(k) * sizeof(T));
        std::fill(p, p + neg, -inf);
      }
      std::fill(p + neg + k, p + m, inf);
      if (any_neg_zero) {
        T* z = std::lower_bound(p, p + m, T(0));
        for (bool neg_sign : zero_signs) *z++ = neg_sign ? T(-0.0) : T(0.0);
      }
      return;
    }
    sorter(p, static_cast<size_t>(n), hwy::SortAscending());
    return;
  }
#endif
  // Floats and complex values have equal-comparing elements with different bits (signed
  // zeros, NaN payloads): a stable sort keeps them as NumPy does.
  if constexpr (std::is_same_v<T, float16> || std::is_floating_point_v<T> || detail::is_complex_v<T>)
    std::stable_sort(p, p + n, Less<T>());
  else
    std::sort(p, p + n, Less<T>());
}

// Note [radix argsort]
// argsort is stable (ties keep input order). For numbers whose order is that of an unsigned
// key (integers: sign bit flipped; floats: sign-magnitude mapped to two's order, -0.0 as
// +0.0, every NaN as the largest key so NaNs stay last in input order) an LSD radix sort of
// (key, index) pairs is stable by construction and much faster than a comparison sort.
template <class T>
auto radix_key(T v) {
  if constexpr (std::is_same_v<T, float16>) {
    return radix_key(half_to_float(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    if (v != v) return std::numeric_limits<U>::max();
    if (v == 0) v = 0;  // -0.0 sorts with +0.0
    U b;
    std::memcpy(&b, &v, sizeof(T));
    const U sign = U{1} << (sizeof(U) * 8 - 1);
    return (b & sign) ? static_cast<U>(~b) : static_cast<U>(b | sign);
  } else if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<U>(static_cast<U>(v) ^ (U{1} << (sizeof(U) * 8 - 1)));
  } else {
    return v;
  }
}

template <class T>
constexpr bool radix_sortable = std::is_integral_v<T> && !std::is_same_v<T, bool> ||
                                std::is_floating_point_v<T> || std::is_same_v<T, float16>;

template <class T>
void argsort_values(const T* v, int64_t* idx, int64_t n) {
  if constexpr (radix_sortable<T>) {
#ifdef NPC_HAVE_VQSORT
    // (key, index) packed into one unsigned integer: vqsort orders by key, ties by index,
    // which is exactly a stable argsort.
    if (n >= 256) {
      using K = decltype(radix_key(v[0]));
      static thread_local hwy::Sorter sorter;
      if constexpr (sizeof(K) == 8) {
        std::vector<hwy::uint128_t> kv(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) kv[i] = {static_cast<uint64_t>(i), static_cast<uint64_t>(radix_key(v[i]))};
        sorter(kv.data(), static_cast<size_t>(n), hwy::SortAscending());
        for (int64_t i = 0; i < n; ++i) idx[i] = static_cast<int64_t>(kv[i].lo);
        return;
      } else if (n < (int64_t{1} << 32)) {
        std::vector<uint64_t> kv(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) kv[i] = (static_cast<uint64_t>(radix_key(v[i])) << 32) | static_cast<uint64_t>(i);
        sorter(kv.data(), static_cast<size_t>(n), hwy::SortAscending());
        for (int64_t i = 0; i < n; ++i) idx[i] = static_cast<int64_t>(kv[i] & 0xFFFFFFFFu);
        return;
      }
    }
#endif
    if (n >= 256) {
      using K = decltype(radix_key(v[0]));
      std::vector<K> keys(n), keys2(n);
      std::vector<int64_t> tmp(n);
      for (int64_t i = 0; i < n; ++i) { keys[i] = radix_key(v[i]); idx[i] = i; }
      K* kin = keys.data();
      K* kout = keys2.data();
      int64_t* iin = idx;
      int64_t* iout = tmp.data();
      for (size_t shift = 0; shift < sizeof(K) * 8; shift += 8) {
        int64_t count[257] = {};
        for (int64_t i = 0; i < n; ++i) ++count[((kin[i] >> shift) & 0xFF) + 1];
        bool trivial = false;
        for (int b = 1; b <= 256; ++b) trivial = trivial || count[b] == n;
        if (trivial) continue;  // every key has the same byte here
        for (int b = 0; b < 256; ++b) count[b + 1] += count[b];
        for (int64_t i = 0; i < n; ++i) {
          int64_t pos = count[(kin[i] >> shift) & 0xFF]++;
          kout[pos] = kin[i];
          iout[pos] = iin[i];
        }
        std::swap(kin, kout);
        std::swap(iin, iout);
      }
      if (iin != idx) std::memcpy(idx, iin, static_cast<size_t>(n) * sizeof(int64_t));
      return;
    }
  }
  std::iota(idx, idx + n, int64_t{0});
  Less<T> lt;
  std::stable_sort(idx, idx + n, [&](int64_t a, int64_t b) { return lt(v[a], v[b]); });
}

// Calls fn(lane pointer, n) on every 1-d lane along `axis` of the C-contiguous array `r`,
// copying strided lanes through a buffer.
template <class T, class F>
void for_each_lane(ndarray& r, int64_t axis, F&& fn) {
  const int64_t n = r.shape()[axis];
  if (r.size() == 0 || n == 0) return;
  int64_t inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < r.ndim(); ++d) inner *= r.shape()[d];
  const int64_t outer = r.size() / (n * inner);
  T* base = reinterpret_cast<T*>(r.data());
  if (inner == 1) {
    for (int64_t o = 0; o < outer; ++o) fn(base + o * n, n);
    return;
  }
  std::unique_ptr<T[]> buf(new T[n]);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      T* lane = base + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) buf[k] = lane[k * inner];
      fn(buf.get(), n);
      for (int64_t k = 0; k < n; ++k) lane[k * inner] = buf[k];
    }
  }
}

// Calls fn(values, indices, n) for every lane of `a` (values copied contiguous) and the
// matching lane of the int64 array `out` (C-contiguous, a's shape).
template <class T, class F>
void for_each_index_lane(const ndarray& a, ndarray& out, int64_t axis, F&& fn) {
  const int64_t n = a.shape()[axis];
  if (a.size() == 0 || n == 0) return;
  ndarray c = a.is_c_contiguous() ? a : a.copy();
  int64_t inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < a.ndim(); ++d) inner *= a.shape()[d];
  const int64_t outer = a.size() / (n * inner);
  const T* vb = reinterpret_cast<const T*>(c.data());
  int64_t* ob = reinterpret_cast<int64_t*>(out.data());
  std::unique_ptr<T[]> vbuf(new T[n]);
  std::vector<int64_t> ibuf(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* lane = vb + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) vbuf[k] = lane[k * inner];
      fn(vbuf.get(), ibuf.data(), n);
      int64_t* olane = ob + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) olane[k * inner] = ibuf[k];
    }
  }
}

// Note [sorted copies keep the layout]
// numpy.sort and numpy.partition copy their input with order='K' (`a.copy(order="K")`, the
// layout of like_axes) and sort that copy in place, so an F-ordered input gives an
// F-ordered result; argsort/argpartition allocate C-ordered indices (PyArray_ArgSort). The
// lane loops work on C-contiguous arrays: the copy is made C-contiguous over the input's
// axes transposed to the K order (the same memory as the K-order copy), sorted along the
// sort axis' place in that order, and handed out transposed back.
struct KCopy {
  ndarray r;           // C-contiguous over the axes in K order
  int64_t axis;        // the sort axis' position in r
  std::vector<int64_t> back;
  KCopy(const ndarray& src, int64_t ax) : axis(ax) {
    const std::vector<int> order = like_axes(src, Order::K);
    bool identity = true;
    for (size_t i = 0; i < order.size(); ++i) identity = identity && order[i] == static_cast<int>(i);
    if (identity) {
      r = src.copy();
      return;
    }
    std::vector<int64_t> perm(order.begin(), order.end());
    back.resize(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      back[order[i]] = static_cast<int64_t>(i);
      if (order[i] == ax) axis = static_cast<int64_t>(i);
    }
    r = src.transpose(perm).copy();
  }
  ndarray result() const { return back.empty() ? r : r.transpose(back); }
};

std::pair<ndarray, int64_t> prepare_axis(const ndarray& a, std::optional<int64_t> axis) {
  if (!axis) return {a.reshape(std::vector<int64_t>{-1}), 0};
  return {a, normalize_axis(*axis, a.ndim())};
}

std::vector<int64_t> normalize_kth(std::span<const int64_t> kth, int64_t n) {
  std::vector<int64_t> k;
  for (int64_t x : kth) {
    int64_t y = x < 0 ? x + n : x;
    if (y < 0 || y >= n)
      throw ValueError("kth(=" + std::to_string(y) + ") out of bounds (" + std::to_string(n) + ")");
    k.push_back(y);
  }
  std::sort(k.begin(), k.end());
  return k;
}
}  // namespace

ndarray sort(const ndarray& a, std::optional<int64_t> axis, bool descending) {
  auto [src, ax] = prepare_axis(a, axis);
  if (src.is_traced())  // Note [trace hooks]: a Prim sort node
    if (auto hook = sort_trace_hook()) return hook(src, ax, descending, false);
  KCopy kc(src, ax);
  ndarray& r = kc.r;
  ax = kc.axis;
  detail::visit(r.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_lane<T>(r, ax, [&](T* p, int64_t n) {
      sort_values(p, n);
      if (descending) {
        // NumPy keeps NaNs last when sorting in descending order too.
        int64_t m = n;
        while (m > 0 && is_nan(p[m - 1])) --m;
        std::reverse(p, p + m);
      }
    });
  });
  return kc.result();
}

ndarray argsort(const ndarray& a, std::optional<int64_t> axis, bool descending) {
  if (a.is_traced()) {  // Note [trace hooks]: a Prim argsort node (0-d sorts as one element)
    auto [src, ax] = prepare_axis(a.ndim() == 0 ? a.reshape(std::vector<int64_t>{1}) : a,
                                  axis);
    if (auto hook = sort_trace_hook()) return hook(src, ax, descending, true);
  }
  if (descending) {
    // Stable descending order with NaNs last: an ascending stable argsort of the reversed
    // lane gives equal values in decreasing input order; reversing it and mapping indices
    // back gives them in increasing order. NaNs (first after that reversal) move to the end.
    auto [src, ax] = prepare_axis(a.ndim() == 0 ? a.reshape(std::vector<int64_t>{1}) : a,
                                  axis);
    ndarray out = empty(src.shape(), DType::Int64);
    detail::visit(src.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      for_each_index_lane<T>(src, out, ax, [](const T* v, int64_t* idx, int64_t n) {
        std::unique_ptr<T[]> rev(new T[n]);  // not std::vector: vector<bool> has no data()
        for (int64_t i = 0; i < n; ++i) rev[i] = v[n - 1 - i];
        std::vector<int64_t> tmp(static_cast<size_t>(n));
        argsort_values(rev.get(), tmp.data(), n);
        int64_t nn = 0;
        while (nn < n && is_nan(rev[tmp[n - 1 - nn]])) ++nn;  // NaNs: the tail of tmp
        int64_t k = 0;
        for (int64_t i = n - 1 - nn; i >= 0; --i) idx[k++] = n - 1 - tmp[i];
        for (int64_t i = n - 1; i >= n - nn; --i) idx[k++] = n - 1 - tmp[i];  // NaNs in input order
      });
    });
    return out;
  }
  auto [src, ax] = prepare_axis(a.ndim() == 0 ? a.reshape(std::vector<int64_t>{1}) : a, axis);
  ndarray out = empty(src.shape(), DType::Int64);
  detail::visit(src.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_index_lane<T>(src, out, ax, [](const T* v, int64_t* idx, int64_t n) { argsort_values(v, idx, n); });
  });
  return out;
}

ndarray lexsort(std::span<const ndarray> keys, int64_t axis) {
  if (keys.empty()) throw TypeError("need sequence of keys with len > 0 in lexsort");
  for (const ndarray& k : keys)
    if (k.shape() != keys[0].shape()) throw ValueError("all keys need to be the same shape");
  const ndarray& k0 = keys[0];
  if (k0.ndim() == 0) return zeros(std::vector<int64_t>{1}, DType::Int64);
  const int64_t ax = normalize_axis(axis, k0.ndim());
  // Stable sorts from the least significant key (first) to the most significant (last).
  ndarray perm;  // int64, keys' shape: current order along the axis
  for (size_t j = 0; j < keys.size(); ++j) {
    ndarray key = keys[j];
    if (j > 0) {
      // Reorder the key by the current permutation, sort stably, compose.
      ndarray moved_key = moveaxis(key, std::vector<int64_t>{ax}, std::vector<int64_t>{-1}).copy();
      ndarray moved_perm = moveaxis(perm, std::vector<int64_t>{ax}, std::vector<int64_t>{-1}).copy();
      const int64_t n = moved_key.shape()[moved_key.ndim() - 1];
      const int64_t lanes = n ? moved_key.size() / n : 0;
      ndarray next = empty(moved_perm.shape(), DType::Int64);
      detail::visit(key.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* kv = reinterpret_cast<const T*>(moved_key.data());
        const int64_t* pv = reinterpret_cast<const int64_t*>(moved_perm.data());
        int64_t* nv = reinterpret_cast<int64_t*>(next.data());
        std::unique_ptr<T[]> vals(new T[n]);
        std::vector<int64_t> idx(static_cast<size_t>(n));
        for (int64_t l = 0; l < lanes; ++l) {
          for (int64_t i = 0; i < n; ++i) vals[i] = kv[l * n + pv[l * n + i]];
          argsort_values(vals.get(), idx.data(), n);
          for (int64_t i = 0; i < n; ++i) nv[l * n + i] = pv[l * n + idx[i]];
        }
      });
      perm = moveaxis(next, std::vector<int64_t>{-1}, std::vector<int64_t>{ax}).copy();
    } else {
      perm = argsort(key, ax);
    }
  }
  return perm;
}

ndarray partition(const ndarray& a, std::span<const int64_t> kth, std::optional<int64_t> axis) {
  auto [src, ax] = prepare_axis(a, axis);
  if (src.ndim() == 0) throw AxisError("axis -1 is out of bounds for array of dimension 0");
  std::vector<int64_t> k = normalize_kth(kth, src.shape()[ax]);
  KCopy kc(src, ax);
  ndarray& r = kc.r;
  detail::visit(r.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_lane<T>(r, kc.axis, [&](T* p, int64_t n) {
      int64_t lo = 0;
      for (int64_t x : k) {
        std::nth_element(p + lo, p + x, p + n, Less<T>());
        lo = x + 1;
      }
    });
  });
  return kc.result();
}

ndarray argpartition(const ndarray& a, std::span<const int64_t> kth, std::optional<int64_t> axis) {
  auto [src, ax] = prepare_axis(a.ndim() == 0 ? a.reshape(std::vector<int64_t>{1}) : a, axis);
  std::vector<int64_t> k = normalize_kth(kth, src.shape()[ax]);
  ndarray out = empty(src.shape(), DType::Int64);
  detail::visit(src.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_index_lane<T>(src, out, ax, [&](const T* v, int64_t* idx, int64_t n) {
      std::iota(idx, idx + n, int64_t{0});
      Less<T> lt;
      auto cmp = [&](int64_t x, int64_t y) { return lt(v[x], v[y]); };
      int64_t lo = 0;
      for (int64_t x : k) {
        std::nth_element(idx + lo, idx + x, idx + n, cmp);
        lo = x + 1;
      }
    });
  });
  return out;
}

ndarray searchsorted(const ndarray& a, const ndarray& v, bool right, const std::optional<ndarray>& sorter) {
  if (a.ndim() != 1) throw ValueError("object too deep for desired array");
  DType t = promote_types(a.dtype(), v.dtype());
  ndarray s;
  const int64_t* sp = nullptr;
  if (sorter) {
    if (sorter->size() != a.size()) throw ValueError("sorter.size must equal a.size");
    if (!is_integer(sorter->dtype()) && sorter->dtype() != DType::Bool)
      throw TypeError("sorter must only contain integers");
    s = sorter->astype(DType::Int64, Order::C);
    sp = reinterpret_cast<const int64_t*>(s.data());
  }
  ndarray sa = a.astype(t, Order::C, Casting::Unsafe, false);
  ndarray sv = v.astype(t, Order::C, Casting::Unsafe, false);
  ndarray out = empty(v.shape(), DType::Int64);
  detail::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* ap = reinterpret_cast<const T*>(sa.data());
    const T* vp = reinterpret_cast<const T*>(sv.data());
    int64_t* op = reinterpret_cast<int64_t*>(out.data());
    const int64_t n = sa.size(), m = sv.size();
    Less<T> lt;
    // Note [searchsorted sorter range]
    // NumPy checks only the sorter entries its bisection reads, so an out-of-range entry the
    // search never reaches is no error. NumPy's bisection is run here (through the sorter
    // when there is one): each key starts from the bracket left by the previous one (reset
    // when keys decrease), so the entries read are NumPy's.
    auto element = [&](int64_t mid) -> const T& {
      if (!sp) return ap[mid];
      const int64_t k = sp[mid];
      if (k < 0 || k >= n) throw ValueError("Sorter index out of range.");
      return ap[k];
    };
    // left: x < key moves right; right: x <= key does.
    auto before = [&](const T& x, const T& key) { return right ? !lt(key, x) : lt(x, key); };
    int64_t lo = 0, hi = n;
    for (int64_t i = 0; i < m; ++i) {
      if (i > 0 && before(vp[i - 1], vp[i])) {
        hi = n;
      } else {
        lo = 0;
        hi = hi < n ? hi + 1 : n;
      }
      while (lo < hi) {
        const int64_t mid = lo + ((hi - lo) >> 1);
        if (before(element(mid), vp[i])) lo = mid + 1;
        else hi = mid;
      }
      op[i] = lo;
    }
  });
  return out;
}

UniqueResult unique(const ndarray& a, bool equal_nan) {
  ndarray flat = a.reshape(std::vector<int64_t>{-1});
  const int64_t n = flat.size();
  UniqueResult r;
  ndarray perm = argsort(flat, 0);
  const int64_t* pp = reinterpret_cast<const int64_t*>(perm.data());
  ndarray c = flat.is_c_contiguous() ? flat : flat.copy();
  r.inverse = empty(std::vector<int64_t>{n}, DType::Int64);
  int64_t* inv = reinterpret_cast<int64_t*>(r.inverse.data());
  std::vector<int64_t> first, counts;
  detail::visit(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* v = reinterpret_cast<const T*>(c.data());
    const auto* bytes = reinterpret_cast<const uint8_t*>(c.data());
    for (int64_t i = 0; i < n; ++i) {
      const T& x = v[pp[i]];
      bool same;
      if constexpr (std::is_same_v<T, bool>)
        // Note [bool bytes]: the sort orders raw bytes (as NumPy's); groups are truth values.
        same = i > 0 && (bytes[pp[i]] != 0) == (bytes[pp[i - 1]] != 0);
      else
        same = i > 0 && (equal(x, v[pp[i - 1]]) || (equal_nan && is_nan(x) && is_nan(v[pp[i - 1]])));
      if (!same) {
        first.push_back(pp[i]);
        counts.push_back(0);
      }
      ++counts.back();
      inv[pp[i]] = static_cast<int64_t>(first.size()) - 1;
    }
  });
  const int64_t k = static_cast<int64_t>(first.size());
  r.index = empty(std::vector<int64_t>{k}, DType::Int64);
  r.counts = empty(std::vector<int64_t>{k}, DType::Int64);
  if (k) {
    std::memcpy(r.index.data(), first.data(), static_cast<size_t>(k) * 8);
    std::memcpy(r.counts.data(), counts.data(), static_cast<size_t>(k) * 8);
  }
  r.values = take(flat, r.index);
  r.inverse = r.inverse.reshape(a.shape());
  return r;
}

ndarray isin(const ndarray& element_in, const ndarray& test_in, bool invert) {
  // Note [bool bytes]: nonzero bytes of bool inputs are True.
  auto normal = [](const ndarray& x) {
    return ops::bool_bytes_normal(x) ? x : x.astype(DType::UInt8).view(DType::Bool);
  };
  const ndarray element = normal(element_in), test_elements = normal(test_in);
  DType t = promote_types(element.dtype(), test_elements.dtype());
  ndarray tv = sort(test_elements.astype(t), std::nullopt);
  ndarray ev = element.astype(t, Order::C, Casting::Unsafe, false);
  ndarray out = empty(element.shape(), DType::Bool);
  detail::visit(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = reinterpret_cast<const T*>(tv.data());
    const T* e = reinterpret_cast<const T*>(ev.data());
    bool* o = reinterpret_cast<bool*>(out.data());
    const int64_t n = tv.size();
    Less<T> lt;
    for (int64_t i = 0; i < ev.size(); ++i) {
      const T* it = std::lower_bound(s, s + n, e[i], lt);
      bool found = it != s + n && equal(*it, e[i]);
      o[i] = found != invert;
    }
  });
  return out;
}

ndarray bincount(const ndarray& x, const std::optional<ndarray>& weights, int64_t minlength) {
  if (minlength < 0) throw ValueError("'minlength' must not be negative");
  if (x.ndim() > 1) throw ValueError("object too deep for desired array");
  if (!is_integer(x.dtype()) && x.dtype() != DType::Bool)
    throw TypeError("Cannot cast array data from dtype('" + std::string(name(x.dtype())) +
                    "') to dtype('int64') according to the rule 'safe'");
  ndarray xi = x.reshape(std::vector<int64_t>{-1}).astype(DType::Int64, Order::C);
  const int64_t* xv = reinterpret_cast<const int64_t*>(xi.data());
  const int64_t n = xi.size();
  int64_t mx = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (xv[i] < 0) throw ValueError("'list' argument must have no negative elements");
    mx = std::max(mx, xv[i]);
  }
  const int64_t len = std::max(mx + 1, minlength);
  if (weights) {
    if (weights->size() != n) throw ValueError("The weights and list don't have the same length.");
    ndarray w = weights->reshape(std::vector<int64_t>{-1}).astype(DType::Float64, Order::C);
    ndarray out = zeros(std::vector<int64_t>{len}, DType::Float64);
    double* o = reinterpret_cast<double*>(out.data());
    const double* wv = reinterpret_cast<const double*>(w.data());
    for (int64_t i = 0; i < n; ++i) o[xv[i]] += wv[i];
    return out;
  }
  ndarray out = zeros(std::vector<int64_t>{len}, DType::Int64);
  int64_t* o = reinterpret_cast<int64_t*>(out.data());
  for (int64_t i = 0; i < n; ++i) ++o[xv[i]];
  return out;
}

namespace {
// Note [histogram bins]
// The bin of x in [e[0], e[ne - 1]]: the last edge <= x (upper_bound - 1), the last bin taking
// its right edge, as numpy.histogram's search gives it. A binary search per value (7 steps
// for 100 bins, each a mispredicted branch) took 3.6 times NumPy's time, whose equal-width bins
// are computed: so the bin is first guessed as NumPy guesses it, (x - e[0]) / (e[ne - 1] -
// e[0]) * (ne - 1), then moved down while x < e[b] and up while x >= e[b + 1]. With equal
// widths that is at most a step; with other edges a guess more than two steps off falls back
// to the binary search between the edges it has passed. The result is the search's, whatever
// the edges (equal edges included).
int64_t bin_of(const double* e, int64_t ne, double x) {
  const int64_t nb = ne - 1;
  const double g = (x - e[0]) / (e[nb] - e[0]) * static_cast<double>(nb);
  int64_t b = g >= 0 && g < static_cast<double>(nb) ? static_cast<int64_t>(g) : (g >= 0 ? nb - 1 : 0);
  for (int step = 0; step < 2; ++step) {
    if (b > 0 && x < e[b]) --b;
    else if (b < nb - 1 && x >= e[b + 1]) ++b;
    else return b;
  }
  if (b > 0 && x < e[b]) return std::upper_bound(e, e + b, x) - e - 1;  // x >= e[0]: at least 0
  if (b < nb - 1 && x >= e[b + 1]) return std::min<int64_t>(std::upper_bound(e + b + 1, e + ne, x) - e - 1, nb - 1);
  return b;
}
}  // namespace

ndarray histogram_counts(std::span<const ndarray> coords, std::span<const ndarray> edges,
                         const std::optional<ndarray>& weights, bool density, int64_t block) {
  const size_t nd = coords.size();
  if (edges.size() != nd) throw ValueError("histogram: one edge array per dimension is needed");
  std::vector<ndarray> xs, es;
  Shape shape;
  for (size_t d = 0; d < nd; ++d) {
    xs.push_back(coords[d].reshape(std::vector<int64_t>{-1}).astype(DType::Float64, Order::C));
    es.push_back(edges[d].astype(DType::Float64, Order::C));
    // The bin search below reads e[0], e[ne - 1] and bins [0, ne - 2]: at least two
    // increasing edges per dimension, and one coordinate per point in every dimension.
    if (edges[d].ndim() != 1 || es[d].size() < 2)
      throw ValueError("histogram: the edges of each dimension must be a 1-d array of at least two values");
    const double* e = reinterpret_cast<const double*>(es[d].data());
    for (int64_t k = 1; k < es[d].size(); ++k)
      if (e[k] < e[k - 1]) throw ValueError("`bins[" + std::to_string(d) + "]` must be monotonically increasing, when an array");
    if (xs[d].size() != xs[0].size()) throw ValueError("histogram: every coordinate array must hold one value per point");
    shape.push_back(es[d].size() - 1);
  }
  const int64_t n = nd ? xs[0].size() : 0;
  ndarray w;
  if (weights) {
    w = weights->reshape(std::vector<int64_t>{-1}).astype(DType::Float64, Order::C);
    if (w.size() != n) throw ValueError("weights should have the same shape as a.");
  }
  const bool as_double = weights.has_value() || density;
  ndarray out = zeros(shape, as_double ? DType::Float64 : DType::Int64);
  std::vector<int64_t> stride(nd, 1);
  for (int d = static_cast<int>(nd) - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape[d + 1];
  double* od = as_double ? reinterpret_cast<double*>(out.data()) : nullptr;
  int64_t* oi = as_double ? nullptr : reinterpret_cast<int64_t*>(out.data());
  const double* wv = weights ? reinterpret_cast<const double*>(w.data()) : nullptr;
  // Weights summed per block of points, each block's sums added to the totals (block > 0).
  std::vector<double> part;
  double* sums = od;
  if (wv && block > 0 && n > block) {
    part.assign(static_cast<size_t>(out.size()), 0.0);
    sums = part.data();
  }
  for (int64_t i = 0; i < n; ++i) {
    if (sums != od && i > 0 && i % block == 0) {
      for (int64_t k = 0; k < out.size(); ++k) od[k] += part[static_cast<size_t>(k)];
      std::fill(part.begin(), part.end(), 0.0);
    }
    int64_t flat = 0;
    bool inside = true;
    for (size_t d = 0; d < nd && inside; ++d) {
      const double* e = reinterpret_cast<const double*>(es[d].data());
      const int64_t ne = es[d].size();
      double x = reinterpret_cast<const double*>(xs[d].data())[i];
      if (!(x >= e[0] && x <= e[ne - 1])) { inside = false; break; }
      flat += bin_of(e, ne, x) * stride[d];
    }
    if (!inside) continue;
    if (as_double) sums[flat] += wv ? wv[i] : 1.0;
    else ++oi[flat];
  }
  if (sums != od)
    for (int64_t k = 0; k < out.size(); ++k) od[k] += part[static_cast<size_t>(k)];
  if (density && out.size()) {
    // numpy's n.sum() (hist.sum() in histogramdd): the pairwise sum of the counts.
    const double total = reduction::pairwise_sum_of(DType::Float64, reinterpret_cast<const std::byte*>(od), out.size(), 8);
    for (size_t d = 0; d < nd; ++d) {
      const double* e = reinterpret_cast<const double*>(es[d].data());
      for (int64_t i = 0; i < out.size(); ++i) {
        int64_t b = (i / stride[d]) % shape[d];
        od[i] = od[i] / (e[b + 1] - e[b]);
      }
    }
    for (int64_t i = 0; i < out.size(); ++i) od[i] /= total;
  }
  return out;
}

int monotonic(const ndarray& a) {
  if (a.ndim() != 1) throw ValueError("object too deep for desired array");
  int result = 0;
  detail::visit(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ndarray c = a.is_c_contiguous() ? a : a.copy();
    const T* v = reinterpret_cast<const T*>(c.data());
    Less<T> lt;
    bool inc = true, dec = true;
    for (int64_t i = 1; i < c.size(); ++i) {
      if (lt(v[i], v[i - 1])) inc = false;
      if (lt(v[i - 1], v[i])) dec = false;
    }
    result = inc ? 1 : dec ? -1 : 0;
  });
  return result;
}

std::pair<double, double> value_range(const ndarray& a) {
  if (a.size() == 0) throw ValueError("zero-size array to reduction operation minimum which has no identity");
  ndarray c = a.reshape(std::vector<int64_t>{-1}).astype(DType::Float64, Order::C);
  const double* v = reinterpret_cast<const double*>(c.data());
  double lo = v[0], hi = v[0];
  for (int64_t i = 0; i < c.size(); ++i) {
    if (v[i] != v[i]) return {v[i], v[i]};
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
  }
  return {lo, hi};
}

}  // namespace npc
