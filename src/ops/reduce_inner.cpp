// ufunc.reduce: the typed inner reductions of one strided run (NumPy's pairwise summation,
// vectorised max/min, the multiply and float16 loops NumPy specialises) and the float partial
// sums of reduce.cpp (ops/reduce_exec.hpp).
#include <cmath>
#include <complex>
#include <type_traits>

#include "ops/reduce_exec.hpp"
#include "ops/reduce_simd.hpp"
#include "core/cast.hpp"

namespace npc::reduction {
namespace {

// ---------------------------------------------------------------- pairwise summation
// NumPy's pairwise_sum (loops_utils.h.src): 8 accumulators for blocks up to 128 elements,
// recursive halves (rounded to a multiple of 8) above. Accumulates in A. Contiguous float
// and double runs take the vector loop (Note [vector pairwise sum] in reduce_simd.cpp: the
// same association, so the same bits).
template <class A, class T>
A pairwise_sum(const std::byte* p, int64_t n, int64_t s) {
  if constexpr (std::is_same_v<A, T> && (std::is_same_v<T, double> || std::is_same_v<T, float>)) {
    A r;
    if (s == static_cast<int64_t>(sizeof(T))) {
      if constexpr (std::is_same_v<T, double>) {
        if (ops::simd::pairwise_sum_f64(reinterpret_cast<const double*>(p), n, &r)) return r;
      } else if (ops::simd::pairwise_sum_f32(reinterpret_cast<const float*>(p), n, &r)) {
        return r;
      }
    }
  }
  auto at = [&](int64_t i) { return detail::convert<A>(ops::load<T>(p + i * s)); };
  if (n < 8) {
    A r = A(0);
    // NumPy starts from -0.0 so that a sum of -0.0 values stays -0.0.
    if constexpr (std::is_floating_point_v<A>) r = -A(0);
    for (int64_t i = 0; i < n; ++i) r += at(i);
    return r;
  }
  if (n <= 128) {
    A r[8];
    for (int k = 0; k < 8; ++k) r[k] = at(k);
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int k = 0; k < 8; ++k) r[k] += at(i + k);
    A res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += at(i);
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum<A, T>(p, n2, s) + pairwise_sum<A, T>(p + n2 * s, n - n2, s);
}

// NumPy's complex pairwise sum: over the 2n interleaved floats, four accumulators per
// component in blocks of up to 64 complex values.
template <class R>
void complex_pairwise(const std::byte* p, int64_t n2, int64_t s, R& rr, R& ri) {
  // n2 counts floats (2 per element); element k sits at p + k * s.
  auto re = [&](int64_t i) { return ops::load<R>(p + (i / 2) * s); };
  auto im = [&](int64_t i) { return ops::load<R>(p + (i / 2) * s + sizeof(R)); };
  if (n2 < 8) {
    rr = -R(0);
    ri = -R(0);
    for (int64_t i = 0; i < n2; i += 2) { rr += re(i); ri += im(i); }
    return;
  }
  if (n2 <= 128) {
    R r[8];
    for (int k = 0; k < 8; k += 2) { r[k] = re(k); r[k + 1] = im(k); }
    int64_t i = 8;
    for (; i < n2 - (n2 % 8); i += 8)
      for (int k = 0; k < 8; k += 2) { r[k] += re(i + k); r[k + 1] += im(i + k); }
    rr = (r[0] + r[2]) + (r[4] + r[6]);
    ri = (r[1] + r[3]) + (r[5] + r[7]);
    for (; i < n2; i += 2) { rr += re(i); ri += im(i); }
    return;
  }
  int64_t h = n2 / 2;
  h -= h % 8;
  R rr1, ri1, rr2, ri2;
  complex_pairwise<R>(p, h, s, rr1, ri1);
  complex_pairwise<R>(p + (h / 2) * s, n2 - h, s, rr2, ri2);
  rr = rr1 + rr2;
  ri = ri1 + ri2;
}

template <class T>
void inner_reduce_generic(ops::LoopFn fn, const std::byte* p, int64_t s, int64_t n, std::byte* acc) {
  // acc = op(acc, p[i]) with the ufunc's own loop, in blocks, through a stack buffer.
  std::byte* ptrs[3];
  int64_t st[3] = {0, s, 0};
  // Sequential dependency: run the loop one element at a time, reading and writing acc.
  for (int64_t i = 0; i < n; ++i) {
    ptrs[0] = acc;
    ptrs[1] = const_cast<std::byte*>(p + i * s);
    ptrs[2] = acc;
    fn(ptrs, st, 1);
  }
}

template <class T>
void inner_sum(ops::LoopFn, const std::byte* p, int64_t s, int64_t n, std::byte* acc) {
  if constexpr (std::is_same_v<T, float16>) {
    float a = half_to_float(ops::load<float16>(acc));
    float r = a + pairwise_sum<float, float16>(p, n, s);
    ops::store<float16>(acc, float_to_half(r));
  } else if constexpr (std::is_floating_point_v<T>) {
    ops::store<T>(acc, ops::load<T>(acc) + pairwise_sum<T, T>(p, n, s));
  } else if constexpr (ops::is_cplx<T>) {
    using R = typename T::value_type;
    R rr, ri;
    complex_pairwise<R>(p, 2 * n, s, rr, ri);
    T a = ops::load<T>(acc);
    ops::store<T>(acc, T(a.real() + rr, a.imag() + ri));
  } else if constexpr (std::is_same_v<T, bool>) {
    bool a = ops::load<bool>(acc);
    for (int64_t i = 0; i < n && !a; ++i) a = ops::load<bool>(p + i * s);
    ops::store<bool>(acc, a);
  } else {
    using U = std::make_unsigned_t<T>;
    U a = static_cast<U>(ops::load<T>(acc));
    if (s == sizeof(T)) {
      const T* q = reinterpret_cast<const T*>(p);
      for (int64_t i = 0; i < n; ++i) a = static_cast<U>(a + static_cast<U>(q[i]));
    } else {
      for (int64_t i = 0; i < n; ++i) a = static_cast<U>(a + static_cast<U>(ops::load<T>(p + i * s)));
    }
    ops::store<T>(acc, static_cast<T>(a));
  }
}

template <class T, bool kMax>
void inner_minmax(ops::LoopFn fn, const std::byte* p, int64_t s, int64_t n, std::byte* acc) {
  if constexpr (std::is_floating_point_v<T> || (std::is_integral_v<T> && !std::is_same_v<T, bool>)) {
    T a = ops::load<T>(acc);
    if constexpr (std::is_floating_point_v<T>) if (std::isnan(a)) return;
    if (s == sizeof(T)) {
      const T* q = reinterpret_cast<const T*>(p);
      if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        // Note [vector max/min] in reduce_simd.cpp: the same loop, vectorized.
        bool done;
        if constexpr (std::is_same_v<T, double>) done = ops::simd::minmax_f64(q, n, &a, kMax);
        else done = ops::simd::minmax_f32(q, n, &a, kMax);
        if (done) {
          ops::store<T>(acc, a);
          return;
        }
      }
      if constexpr (std::is_floating_point_v<T>) {
        // Eight independent lanes (vectorisable). NaN screening rides along as z += v * 0,
        // which turns NaN for NaN and inf inputs; only then an exact scan decides (NaN anywhere
        // wins, as NumPy propagates it).
        T lane[8], z[8];
        for (int k = 0; k < 8; ++k) { lane[k] = a; z[k] = 0; }
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
          for (int k = 0; k < 8; ++k) {
            T v = q[i + k];
            z[k] += v * T(0);
            lane[k] = kMax ? (lane[k] > v ? lane[k] : v) : (lane[k] < v ? lane[k] : v);
          }
        }
        bool maybe_nan = false;
        for (int k = 0; k < 8; ++k) maybe_nan |= std::isunordered(z[k], z[k]);
        for (; i < n; ++i) {
          T v = q[i];
          maybe_nan |= std::isunordered(v, v);
          lane[0] = kMax ? (lane[0] > v ? lane[0] : v) : (lane[0] < v ? lane[0] : v);
        }
        for (int k = 0; k < 8; ++k) a = kMax ? (a > lane[k] ? a : lane[k]) : (a < lane[k] ? a : lane[k]);
        if (maybe_nan) {
          for (int64_t j = 0; j < n; ++j)
            if (std::isunordered(q[j], q[j])) { a = q[j]; break; }
        }
      } else {
        for (int64_t i = 0; i < n; ++i) a = kMax ? std::max(a, q[i]) : std::min(a, q[i]);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        T v = ops::load<T>(p + i * s);
        if constexpr (std::is_floating_point_v<T>) if (std::isnan(v)) { a = v; break; }
        a = kMax ? (a > v ? a : v) : (a < v ? a : v);
      }
    }
    ops::store<T>(acc, a);
  } else {
    inner_reduce_generic<T>(fn, p, s, n, acc);
  }
}

// multiply.reduce: float16 accumulates in float within a run (NumPy's half reduce loop),
// complex uses the plain product (NumPy's scalar reduce loop).
template <class T>
void inner_prod(ops::LoopFn fn, const std::byte* p, int64_t s, int64_t n, std::byte* acc) {
  if constexpr (std::is_same_v<T, float16>) {
    float a = half_to_float(ops::load<float16>(acc));
    for (int64_t i = 0; i < n; ++i) a *= half_to_float(ops::load<float16>(p + i * s));
    ops::store<float16>(acc, float_to_half(a));
  } else if constexpr (ops::is_cplx<T>) {
    T a = ops::load<T>(acc);
    for (int64_t i = 0; i < n; ++i) {
      T b = ops::load<T>(p + i * s);
      a = T(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
    }
    ops::store<T>(acc, a);
  } else if constexpr (std::is_floating_point_v<T> || (std::is_integral_v<T> && !std::is_same_v<T, bool>)) {
    // The multiply loop's own expression, one element at a time in order (IEEE products;
    // integers wrap, small ones multiplied as unsigned int so the product cannot overflow
    // int), without a loop call per element.
    T a = ops::load<T>(acc);
    for (int64_t i = 0; i < n; ++i) {
      const T b = ops::load<T>(p + i * s);
      if constexpr (std::is_integral_v<T>) {
        using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
        a = static_cast<T>(static_cast<W>(static_cast<std::make_unsigned_t<T>>(a)) *
                           static_cast<W>(static_cast<std::make_unsigned_t<T>>(b)));
      } else {
        a = a * b;
      }
    }
    ops::store<T>(acc, a);
  } else {
    inner_reduce_generic<T>(fn, p, s, n, acc);
  }
}

// NumPy's float16 subtract and divide loops, called as a reduction (IS_BINARY_REDUCE),
// keep the accumulator in float and round it to half once per call (HALF_@kind@ in
// loops.c.src), like its add and multiply: (7/9)/11 is not rounded after 7/9.
template <bool kDivide>
void inner_half_arith(ops::LoopFn, const std::byte* p, int64_t s, int64_t n, std::byte* acc) {
  float a = half_to_float(ops::load<float16>(acc));
  for (int64_t i = 0; i < n; ++i) {
    const float b = half_to_float(ops::load<float16>(p + i * s));
    a = kDivide ? a / b : a - b;
  }
  ops::store<float16>(acc, float_to_half(a));
}

}  // namespace

// ---------------------------------------------------------------- float partial sums
// The pairwise sum of m elements of float dtype t (float16 accumulates in float32, NumPy's
// half loop), returned as double (exact: a float32 value is a double value).
double pairwise_sum_of(DType t, const std::byte* q, int64_t m, int64_t qs) {
  if (t == DType::Float64) return pairwise_sum<double, double>(q, m, qs);
  if (t == DType::Float32) return static_cast<double>(pairwise_sum<float, float>(q, m, qs));
  return static_cast<double>(pairwise_sum<float, float16>(q, m, qs));
}

// *out = *out + v in float dtype t, as the add loop's reduce step does with a partial sum
// (float16: in float32, rounded once).
void add_partial(DType t, std::byte* out, double v) {
  if (t == DType::Float64) ops::store<double>(out, ops::load<double>(out) + v);
  else if (t == DType::Float32) ops::store<float>(out, ops::load<float>(out) + static_cast<float>(v));
  else ops::store<float16>(out, float_to_half(half_to_float(ops::load<float16>(out)) + static_cast<float>(v)));
}

InnerReduceFn inner_for(OpId op, DType t) {
  if (t == DType::Float16 && op == OpId::subtract) return &inner_half_arith<false>;
  if (t == DType::Float16 && op == OpId::divide) return &inner_half_arith<true>;
  return detail::visit(t, [&](auto tag) -> InnerReduceFn {
    using T = typename decltype(tag)::type;
    if (op == OpId::add) return &inner_sum<T>;
    if (op == OpId::multiply) return &inner_prod<T>;
    if (op == OpId::maximum) return &inner_minmax<T, true>;
    if (op == OpId::minimum) return &inner_minmax<T, false>;
    return &inner_reduce_generic<T>;
  });
}

}  // namespace npc::reduction
