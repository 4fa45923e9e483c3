// numpy.argmin / argmax: the index of the first extreme (NaN wins) along one axis.
#include <cmath>
#include <complex>
#include <optional>
#include <string>

#include "npc/creation.hpp"
#include "ops/exec.hpp"
#include "core/parallel.hpp"
#include "ops/loops.hpp"
#include "core/cast.hpp"

namespace npc {
namespace ops {
// False for a bool array holding bytes other than 0/1 (Note [bool bytes] in ufunc.cpp).
bool bool_bytes_normal(const ndarray& a);
}  // namespace ops

namespace {
template <class T, bool kMax>
int64_t arg_run(const std::byte* p, int64_t s, int64_t n) {
  T best = ops::load<T>(p);
  int64_t bi = 0;
  auto isnan_ = [](const T& v) {
    if constexpr (ops::is_cplx<T>) return std::isnan(v.real()) || std::isnan(v.imag());
    else if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
    else if constexpr (std::is_same_v<T, float16>) return (v.bits & 0x7c00u) == 0x7c00u && (v.bits & 0x3ffu);
    else return false;
  };
  if (isnan_(best)) return 0;
  for (int64_t i = 1; i < n; ++i) {
    T v = ops::load<T>(p + i * s);
    if (isnan_(v)) return i;
    bool better;
    if constexpr (ops::is_cplx<T>) {
      better = kMax ? (v.real() > best.real() || (v.real() == best.real() && v.imag() > best.imag()))
                    : (v.real() < best.real() || (v.real() == best.real() && v.imag() < best.imag()));
    } else if constexpr (std::is_same_v<T, float16>) {
      float fv = half_to_float(v), fb = half_to_float(best);
      better = kMax ? fv > fb : fv < fb;
    } else {
      better = kMax ? v > best : v < best;
    }
    if (better) { best = v; bi = i; }
  }
  return bi;
}
}  // namespace

ndarray arg_reduce(OpId op, const ndarray& a_in, std::optional<int64_t> axis, bool keepdims) {
  (void)op_info(op);  // ValueError for an OpId outside the table
  const bool is_max = op == OpId::argmax;
  if (op != OpId::argmax && op != OpId::argmin) throw TypeError("arg_reduce: argmax or argmin expected");
  ndarray a = a_in;
  if (!ops::bool_bytes_normal(a)) a = a.astype(DType::UInt8).view(DType::Bool);  // Note [bool bytes]
  Shape keep_shape;
  int64_t ax;
  if (!axis) {
    if (!a.is_c_contiguous()) a = a.copy(Order::C);
    Shape flat{a.size()};
    a = a.reshape(flat);
    ax = 0;
    if (keepdims) keep_shape.assign(a_in.ndim(), 1);
  } else {
    if (a.ndim() == 0) {
      if (*axis != 0 && *axis != -1) normalize_axis(*axis, 1);  // NumPy checks against the 1-d reshape
      Shape one{1};
      a = a.reshape(one);
      ax = 0;
    } else {
      ax = normalize_axis(*axis, a.ndim());
    }
  }
  const int64_t n = a.shape()[ax];
  Shape os;
  Strides ist;
  for (int d = 0; d < a.ndim(); ++d)
    if (d != ax) { os.push_back(a.shape()[d]); ist.push_back(a.strides()[d]); }
  if (n == 0) {
    throw ValueError(std::string("attempt to get ") + (is_max ? "argmax" : "argmin") + " of an empty sequence");
  }
  if (a_in.is_traced())
    if (auto hook = arg_reduce_trace_hook()) return hook(op, a_in, axis, keepdims);
  ndarray res = empty(os, DType::Int64);
  const int64_t cnt = res.size();
  const int64_t s = a.strides()[ax];
  Strides rs = contiguous_strides(os, 1);
  auto fnp = detail::visit(a.dtype(), [&](auto tag) -> int64_t (*)(const std::byte*, int64_t, int64_t) {
    using T = typename decltype(tag)::type;
    return is_max ? &arg_run<T, true> : &arg_run<T, false>;
  });
  int64_t* out = reinterpret_cast<int64_t*>(res.data());
  const std::byte* base = a.data();
  int nt = std::min<int64_t>(ops::eager_threads(cnt * n), cnt);
  auto one = [&](int64_t j) {
    const std::byte* p = base;
    int64_t rem = j;
    for (size_t d = 0; d < os.size(); ++d) {
      p += (rem / rs[d]) * ist[d];
      rem %= rs[d];
    }
    out[j] = fnp(p, s, n);
  };
  if (nt > 1) {  // Note [no idle parallel regions] in registry.cpp
    parallel::for_ranges(nt, cnt, 8 * int64_t{nt}, [&](int64_t lo, int64_t hi) {
      for (int64_t j = lo; j < hi; ++j) one(j);
    });
  } else {
    for (int64_t j = 0; j < cnt; ++j) one(j);
  }
  if (keepdims) {
    if (axis) {
      keep_shape = a_in.ndim() == 0 ? Shape{} : a_in.shape();
      if (a_in.ndim() > 0) keep_shape[ax] = 1;
    }
    res = res.reshape(keep_shape);
  }
  return res;
}

}  // namespace npc
