// numpy.ufunc.accumulate (cumsum, cumprod).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "npc/creation.hpp"
#include "npc/fperror.hpp"
#include "ops/exec.hpp"
#include "ops/loops.hpp"
#include "ops/reduce_internal.hpp"
#include "core/cast.hpp"

#if NPC_HAVE_OPENMP
#include <omp.h>
#endif

namespace npc {
namespace ops {
bool bool_bytes_normal(const ndarray& a);
}

ndarray accumulate(OpId op_in, const ndarray& a, int64_t axis, std::optional<DType> dtype, std::optional<ndarray> out) {
  const OpId op = ufunc_of(op_in);
  check_reducelike(op, "accumulate");
  if (a.ndim() == 0) throw TypeError("cannot accumulate on a scalar");
  int64_t ax = normalize_axis(axis, a.ndim());
  const DType t = reduce_loop(op, a.dtype(), dtype, out ? std::optional<DType>(out->dtype()) : std::nullopt, true).acc;
  ops::LoopFn fn = loop_for(op, t);
  if (!fn) throw TypeError("ufunc '" + std::string(op_info(op).name) + "' not supported for the input types");
  if (a.is_traced() || (out && out->is_traced()))  // Note [trace hooks]: a Prim cumsum/cumprod node
    if (auto hook = accumulate_trace_hook()) return hook(op, a, ax, t, out);
  check_int_power_exponents(op, t, a, ax, false);
  // Note [reduction layout] in reduce_plan.cpp: the new result in NumPy's axis order (a scan
  // reduces no axis; it runs in place in whatever layout).
  ndarray res = ops::empty_in_axis_order(a.shape(), t, ops::reduce_output_axes(a, std::vector<bool>(a.ndim(), false), true));
  // Note [bool bytes] in src/ops/ufunc.cpp: a bool input holding other bytes scans its
  // truth values (a copy into a bool result would keep the bytes).
  if (t == DType::Bool && !ops::bool_bytes_normal(a))
    copy_into(res, a.astype(DType::UInt8));
  else
    copy_into(res, a);  // casts to t; the scan then runs in place
  const int64_t n = a.shape()[ax];
  if (n > 1 && res.size() > 0) {
    // Other axes: iterate every position, scan along `ax` with the binary loop reading the
    // element it wrote one step before (sequential by the C aliasing rules).
    Shape os;
    Strides ost;
    for (int d = 0; d < a.ndim(); ++d)
      if (d != ax) { os.push_back(a.shape()[d]); ost.push_back(res.strides()[d]); }
    const int64_t s = res.strides()[ax];
    int64_t cnt = shape_size(os);
    std::vector<int64_t> idx(os.size(), 0);
    int flags = 0;
    ops::clear_fpe();
    for (int64_t j = 0; j < cnt; ++j) {
      std::byte* p = res.data();
      for (size_t d = 0; d < os.size(); ++d) p += idx[d] * ost[d];
      std::byte* ptrs[3] = {p, p + s, p + s};
      int64_t st[3] = {s, s, s};
      // NumPy's loop runs on (out[k-1], in[k], out[k]): the new output steps forwards, the
      // input by its own (negative) stride along a reversed axis, so the signs differ and it
      // takes its scalar complex64 product (Note [loops by stride sign], Note [complex
      // product]). With n == 2 the one call reads one element, so the sign alone picks that
      // loop (longer scans overlap and take it anyway).
      if (n == 2 && a.dtype() == t && a.strides()[ax] < 0) st[1] = -s;
      fn(ptrs, st, n - 1);
      for (int d = static_cast<int>(os.size()) - 1; d >= 0; --d) {
        if (++idx[d] < os[d]) break;
        idx[d] = 0;
      }
    }
    if (ops::checks_fpe(op)) flags = ops::read_fpe();
    // NumPy accumulates into a copy of out= in the loop dtype and casts it back at the end
    // (its writeback), which clears the flags the loop raised before it checks its own:
    // np.divide.accumulate([1., 0.], out=float32 array) does not warn.
    if (flags && !(out && out->dtype() != t)) ops::note_fpe(flags);
  }
  if (out) {
    if (out->shape() != res.shape()) throw ValueError("output array has the wrong shape");
    // NumPy reports the errors of the cast into out= twice: "... in cast" and "... in
    // accumulate" (the input's dtype= cast only as "cast").
    const int before = take_fp_flags();
    copy_into(*out, res);
    const int oc = take_fp_flags();
    add_fp_flags(before | oc);
    if (oc) ops::note_fpe(oc);
    return *out;
  }
  return res;
}

}  // namespace npc
