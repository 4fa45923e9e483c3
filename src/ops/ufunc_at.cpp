// numpy.ufunc.at: unbuffered in-place application at indices.
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

// Note [ufunc.at casting]: NumPy's ufunc.at resolves the loop from (a.dtype, b.dtype) and
// casts each result back into `a` unsafely (np.add.at(int_array, i, 1.5) truncates). When the
// loop's dtype differs from a's, each element is cast to the loop's dtype, updated and cast
// back before the next index (a repeated index sees the truncated value, as in NumPy), and
// untouched elements never round-trip through another dtype.
void ufunc_at(OpId op, const ndarray& a_in, const ndarray& flat_indices, const std::optional<Operand>& b) {
  const OpInfo& info = op_info(op);
  if (info.kind != OpKind::Ufunc) throw TypeError("'" + std::string(info.name) + "' is not a ufunc");
  // NumPy's checks and messages (ufunc_at in ufunc_object.c).
  if (info.nout != 1) throw ValueError("Only single output ufuncs supported at this time");
  if (info.nin == 2 && !b) throw ValueError("second operand needed for ufunc");
  if (info.nin == 1 && b) throw ValueError("second operand provided when ufunc is unary");
  if (!is_integer(flat_indices.dtype()))
    throw IndexError("arrays used as indices must be of integer (or boolean) type");
  if (!a_in.writeable()) throw ValueError("output array is read-only");
  // Note [ufunc.at targets]: `flat_indices` are C-order positions in `a`, which may be any
  // view (strided, transposed, negative strides): each maps to its element's byte offset.
  const Shape& ashape = a_in.shape();
  const Strides& astr = a_in.strides();
  const bool contiguous = a_in.is_c_contiguous();
  auto byte_offset = [&](int64_t i) {
    if (contiguous) return i * static_cast<int64_t>(a_in.itemsize());
    int64_t off = 0;
    for (int d = a_in.ndim() - 1; d >= 0; --d) {
      off += (i % ashape[d]) * astr[d];
      i /= ashape[d];
    }
    return off;
  };
  ndarray idx = flat_indices.dtype() == DType::Int64 ? flat_indices : flat_indices.astype(DType::Int64);
  idx = idx.copy(Order::C);
  const int64_t m = idx.size();
  DType ins[2] = {a_in.dtype(), b ? b->array.dtype() : a_in.dtype()};
  bool weak[2] = {false, b ? b->weak : false};
  LoopTypes lt = resolve_loop(op, std::span<const DType>(ins, info.nin), std::span<const bool>(weak, info.nin));
  const bool cast = lt.in[0] != a_in.dtype() || lt.out[0] != a_in.dtype();
  ops::LoopFn fn = nullptr;
  for (const auto& l : ops::loops_of(op))
    if (l.in == lt.in && l.out == lt.out) fn = l.fn;
  if (!fn) throw TypeError("npc: no kernel for ufunc.at");
  ndarray bv;
  if (b) {
    bv = b->array.dtype() == lt.in[1] ? b->array : b->array.astype(lt.in[1]);
    Shape sh{m};
    bv = broadcast_to(bv, sh);
    if (op == OpId::power && kind(lt.in[1]) == Kind::Signed) {
      // As the ufunc call: integer loops reject negative exponents before any write.
      ndarray e = bv.astype(DType::Int64, Order::C);
      const int64_t* ep = reinterpret_cast<const int64_t*>(e.data());
      for (int64_t k = 0; k < e.size(); ++k)
        if (ep[k] < 0) throw ValueError("Integers to negative integer powers are not allowed.");
    }
  }
  const int64_t* ip = reinterpret_cast<const int64_t*>(idx.data());
  const int64_t n = a_in.size();
  for (int64_t k = 0; k < m; ++k)
    if (ip[k] < -n || ip[k] >= n)
      throw IndexError("index " + std::to_string(ip[k]) + " is out of bounds for axis 0 with size " +
                       std::to_string(n));
  const int64_t isz = static_cast<int64_t>(a_in.itemsize());
  // Floating-point flags: the loop's, read after each call when casts run around it (a
  // cast clears the hardware flags first), and the casts' own. NumPy's float max/min/fmax/
  // fmin loops clear the flags, so only what the casts after the last call raise is left.
  const bool loop_fpe = ops::checks_fpe(op);
  const bool loop_clears = (op == OpId::maximum || op == OpId::minimum || op == OpId::fmax || op == OpId::fmin) &&
                           is_inexact(lt.in[0]);
  const int pending_before = take_fp_flags();
  int f = 0;
  ops::clear_fpe();
  for (int64_t k = 0; k < m; ++k) {
    int64_t i = ip[k];
    if (i < 0) i += n;
    // The element in the loop's dtype: `a` itself, or a one-element copy cast each time.
    // With a cast, the loop reads a copy in its input dtype and writes a one-element output
    // of its output dtype (logical_and on uint8 runs ll->?), cast back into `a`.
    ndarray tmp, tout;
    if (cast) {
      tmp = a_in.with_geometry(a_in.offset() + byte_offset(i), a_in.dtype(), Shape{1}, Strides{isz}).astype(lt.in[0]);
      tout = lt.out[0] == lt.in[0] ? tmp : empty(Shape{1}, lt.out[0]);
    }
    std::byte* p = cast ? tmp.data() : a_in.data() + byte_offset(i);
    std::byte* po = cast ? tout.data() : p;
    if (info.nin == 2) {
      std::byte* ptrs[3] = {p, bv.data() + k * bv.strides()[0], po};
      int64_t st[3] = {0, 0, 0};
      fn(ptrs, st, 1);
    } else {
      std::byte* ptrs[2] = {p, po};
      int64_t st[2] = {0, 0};
      fn(ptrs, st, 1);
    }
    if (loop_clears) {
      f = 0;
      take_fp_flags();
      ops::clear_fpe();
    } else if (cast && loop_fpe) {
      f |= ops::read_fpe();
      ops::clear_fpe();
    }
    if (cast) {
      ndarray back = tout.astype(a_in.dtype());
      std::memcpy(a_in.data() + byte_offset(i), back.data(), static_cast<size_t>(isz));
    }
  }
  // NumPy reports the flags of the loop and of the casts around it as raised "in at" (or
  // in the ufunc: Note [ufunc.at error names] in _ufunc.py).
  if (loop_fpe && !cast) f |= ops::read_fpe();
  f |= take_fp_flags();
  add_fp_flags(pending_before);
  if (f) ops::note_fpe(f);
}

}  // namespace npc
