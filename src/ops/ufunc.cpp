// numpy.ufunc.__call__, outer and at: promotion at the boundary, broadcasting, input casts,
// output allocation, out=/where=, overlap handling, then one typed inner loop.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include <sys/mman.h>

#include "core/strided.hpp"
#include "npc/creation.hpp"
#include "npc/fperror.hpp"
#include "ops/buffered_cast.hpp"
#include "ops/exec.hpp"
#include "ops/loops.hpp"
#include "ops/one_element_loops.hpp"

namespace npc {

UfuncCastingError::UfuncCastingError(OpId op_, bool output_, int index_, DType from_, DType to_, Casting casting_)
    : CastingError("Cannot cast ufunc '" + std::string(op_info(op_).name) + "' " + (output_ ? "output" : "input " + std::to_string(index_)) +
                   " from dtype('" + std::string(name(from_)) + "') to dtype('" + std::string(name(to_)) +
                   "') with casting rule '" + casting_rule_name(casting_) + "'"),
      op(op_), output(output_), index(index_), from(from_), to(to_), casting(casting_) {}

namespace {

bool same_view(const ndarray& a, const ndarray& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.strides() == b.strides() &&
         a.dtype() == b.dtype() && a.shape() == b.shape();
}

// Note [weak integers]
// A Python int operand (NEP 50 "weak") takes the loop's dtype; a value outside that dtype's
// range raises OverflowError ("Python integer 300 out of bounds for uint8"), except in
// comparisons, where NumPy 2 answers exactly (uint8 array < 300 is all True).
enum class WeakRange { Fits, Above, Below };

WeakRange weak_int_range(const ndarray& v, DType t) {
  if (!is_integer(t)) return WeakRange::Fits;
  Scalar s = Scalar::load(v.dtype(), v.data());
  bool neg = v.dtype() == DType::Int64 && s.i < 0;
  if (neg) {
    int64_t lo = kind(t) == Kind::Unsigned ? 0 : -(int64_t{1} << (itemsize(t) * 8 - 1));
    return s.i < lo ? WeakRange::Below : WeakRange::Fits;
  }
  uint64_t u = v.dtype() == DType::UInt64 ? s.u : static_cast<uint64_t>(s.i);
  uint64_t hi = kind(t) == Kind::Unsigned ? (itemsize(t) == 8 ? ~uint64_t{0} : (uint64_t{1} << (itemsize(t) * 8)) - 1)
                                          : (uint64_t{1} << (itemsize(t) * 8 - 1)) - 1;
  return u > hi ? WeakRange::Above : WeakRange::Fits;
}

std::string weak_int_str(const ndarray& v) {
  Scalar s = Scalar::load(v.dtype(), v.data());
  return v.dtype() == DType::UInt64 ? std::to_string(s.u) : std::to_string(s.i);
}

// The OverflowError of a weak Python int that does not fit the loop dtype `t`. NumPy first
// converts the int to a C long for every loop but uint32's and uint64's (which take an
// unsigned long), so values above int64 get CPython's message there.
[[noreturn]] void throw_weak_overflow(const ndarray& v, DType t) {
  if (v.dtype() == DType::UInt64 && t != DType::UInt32 && t != DType::UInt64 &&
      Scalar::load(v.dtype(), v.data()).u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw OverflowError("Python int too large to convert to C long");
  throw OverflowError("Python integer " + weak_int_str(v) + " out of bounds for " + std::string(name(t)));
}

// Result of a comparison between an integer array and an out-of-range Python int.
bool compare_out_of_range(OpId op, WeakRange r, bool scalar_on_right) {
  bool above = (r == WeakRange::Above) == scalar_on_right;  // "the other side is larger"
  switch (op) {
    case OpId::equal: return false;
    case OpId::not_equal: return true;
    case OpId::less: case OpId::less_equal: return above;
    default: return !above;
  }
}

// Allocates a new output of `shape` in NumPy's layout (Note [output layout]).
ndarray new_output_impl(const Shape& shape, DType t, Order order, std::span<const Operand> inputs) {
  std::vector<ndarray> arrays;
  for (const auto& in : inputs) arrays.push_back(in.array);
  const std::vector<int> axes = ops::output_axes(shape, order, arrays);
  bool identity = true;
  for (size_t i = 0; i < axes.size(); ++i) identity = identity && axes[i] == static_cast<int>(i);
  if (identity) return empty(shape, t, Order::C);
  Shape permuted(shape.size());
  for (size_t i = 0; i < axes.size(); ++i) permuted[i] = shape[axes[i]];
  std::vector<int64_t> back(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) back[axes[i]] = static_cast<int64_t>(i);
  return empty(permuted, t, Order::C).transpose(back);
}

ndarray new_output(const Shape& shape, DType t, Order order, std::span<const Operand> inputs) {
  ndarray r = new_output_impl(shape, t, order, inputs);
  ops::advise_huge(r);
  return r;
}

Strides broadcast_strides(const ndarray& a, const Shape& shape) {
  Strides st(shape.size(), 0);
  size_t off = shape.size() - a.ndim();
  for (int d = 0; d < a.ndim(); ++d)
    st[off + d] = a.shape()[d] == 1 ? 0 : a.strides()[d];
  return st;
}

template <size_t N>
void masked_copy_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (*reinterpret_cast<const bool*>(p[1] + i * s[1])) std::memcpy(p[2] + i * s[2], p[0] + i * s[0], N);
}

// dst[mask] = src (same dtype; src and mask broadcast to dst's shape).
void masked_copy(const ndarray& dst, const ndarray& src, const ndarray& mask) {
  ops::LoopFn fn = nullptr;
  switch (dst.itemsize()) {
    case 1: fn = &masked_copy_loop<1>; break;
    case 2: fn = &masked_copy_loop<2>; break;
    case 4: fn = &masked_copy_loop<4>; break;
    case 8: fn = &masked_copy_loop<8>; break;
    default: fn = &masked_copy_loop<16>; break;
  }
  std::byte* ptrs[3] = {src.data(), mask.data(), dst.data()};
  std::vector<std::vector<int64_t>> st{broadcast_strides(src, dst.shape()), broadcast_strides(mask, dst.shape()),
                                       dst.strides()};
  ops::run_elementwise(fn, 3, ptrs, st, dst.shape(), 2, false);
}

// The where= kernel wrapper: operand 0 is a MaskedCtx (stride 0), operand 1 the bool mask,
// the rest the ufunc's own operands; the ufunc's loop runs on each run of true mask values.
struct MaskedCtx {
  ops::LoopFn fn;
  int nops;
};

void masked_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  const MaskedCtx& c = *reinterpret_cast<const MaskedCtx*>(p[0]);
  const std::byte* m = p[1];
  const int64_t ms = s[1];
  std::byte* q[ops::kMaxOperands];
  int64_t i = 0;
  while (i < n) {
    while (i < n && !*reinterpret_cast<const bool*>(m + i * ms)) ++i;
    int64_t j = i;
    while (j < n && *reinterpret_cast<const bool*>(m + j * ms)) ++j;
    if (j > i) {
      for (int k = 0; k < c.nops; ++k) q[k] = p[2 + k] + i * s[2 + k];
      c.fn(q, s + 2, j - i);
    }
    i = j;
  }
}

void extent(const ndarray& x, const std::byte*& lo, const std::byte*& hi) {
  lo = hi = x.storage()->data() + x.offset();
  for (int d = 0; d < x.ndim(); ++d) {
    int64_t span = (x.shape()[d] - 1) * x.strides()[d];
    if (span < 0) lo += span; else hi += span;
  }
  hi += x.itemsize();
}

bool ranges_overlap(const ndarray& a, const ndarray& b) {
  if (a.size() == 0 || b.size() == 0) return false;
  const std::byte *alo, *ahi, *blo, *bhi;
  extent(a, alo, ahi);
  extent(b, blo, bhi);
  return alo < bhi && blo < ahi;
}

bool any_negative(const ndarray& a) {
  return detail::visit(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    bool neg = false;
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      std::array<std::span<const int64_t>, 1> st{std::span<const int64_t>(a.strides())};
      detail::strided_loop<1>(a.shape(), {a.data()}, st, [&](auto p, auto s, int64_t n) {
        for (int64_t i = 0; i < n && !neg; ++i) neg = ops::load<T>(p[0] + i * s[0]) < 0;
      });
    }
    return neg;
  });
}

}  // namespace

namespace ops {

// Note [output layout]
// NumPy allocates a ufunc's new outputs (and where's) in its iterator's axis order: with
// order='K', an insertion sort of the axes from the innermost out, where an axis moves
// outwards past another when every operand that steps along both (nonzero strides; a length-1
// or broadcast axis steps along nothing) has the larger |stride| on it, and stays when any
// operand disagrees (C order wins conflicts, ties keep their place); axes no operand decides
// are passed over. So a ufunc of an F-ordered array is F-ordered, and of an F-ordered and a
// C-ordered one C-ordered. order='A' is F when every operand is F-contiguous, 'C' and 'F' as
// named. The new output is C-contiguous in that order, with positive strides (NumPy does not
// flip reversed axes of an iteration that allocates). Eager ufuncs and where, and traced ones
// (the tracer records the node in this order, src/tracer/trace_hooks.cpp), follow this one rule.
std::vector<int> output_axes(std::span<const int64_t> shape, Order order, std::span<const ndarray> operands) {
  const int nd = static_cast<int>(shape.size());
  std::vector<int> axes(nd);
  std::iota(axes.begin(), axes.end(), 0);
  bool reverse = order == Order::F;
  if (order == Order::A) {
    reverse = true;
    for (const ndarray& a : operands) reverse = reverse && a.is_f_contiguous();
  }
  if (reverse) std::reverse(axes.begin(), axes.end());
  if (order != Order::K || nd < 2) return axes;
  auto stride = [&](const ndarray& a, int d) -> int64_t {
    const int k = d - (nd - a.ndim());
    return k < 0 || a.shape()[k] == 1 ? 0 : a.strides()[k];
  };
  std::vector<int> inner_first(axes.rbegin(), axes.rend());
  for (int i0 = 1; i0 < nd; ++i0) {
    const int j0 = inner_first[i0];
    int pos = i0;
    for (int i1 = i0 - 1; i1 >= 0; --i1) {
      const int j1 = inner_first[i1];
      bool decided = false, swap = false;
      for (const ndarray& a : operands) {
        const int64_t s0 = stride(a, j0), s1 = stride(a, j1);
        if (s0 == 0 || s1 == 0) continue;
        if (std::abs(s1) <= std::abs(s0)) swap = false;
        else if (!decided) swap = true;
        decided = true;
      }
      if (!decided) continue;
      if (!swap) break;
      pos = i1;
    }
    std::rotate(inner_first.begin() + pos, inner_first.begin() + i0, inner_first.begin() + i0 + 1);
  }
  return std::vector<int>(inner_first.rbegin(), inner_first.rend());
}

std::optional<bool> weak_int_outcome(OpId op, std::span<const Operand> inputs, int i, DType t) {
  const ndarray& a = inputs[i].array;
  if (!inputs[i].weak || a.dtype() == t || kind(a.dtype()) == Kind::Float || kind(a.dtype()) == Kind::Complex)
    return std::nullopt;
  WeakRange r = weak_int_range(a, t);
  if (r == WeakRange::Fits) return std::nullopt;
  // Beside a bool array NumPy converts the int to a C long first (OverflowError).
  const int nin = static_cast<int>(inputs.size());
  const bool bool_other = nin == 2 && !inputs[1 - i].weak && inputs[1 - i].array.dtype() == DType::Bool;
  if (is_comparison_op(op) && nin == 2 && !bool_other) return compare_out_of_range(op, r, i == 1);
  throw_weak_overflow(a, t);
}

// Note [bool bytes]
// A bool array can view bytes other than 0 and 1 (x.view(bool), a buffer). NumPy reads
// any nonzero byte as True in its ufuncs; npc's bool loops assume 0/1 (so do C++'s bool
// loads). So a bool input holding other bytes is first normalised into a 0/1 copy (casts
// from bool read bytes, core/cast.cpp). The check is one pass over the input's bytes.
void check_where_mask(const ndarray& where) {
  if (where.dtype() != DType::Bool)
    throw TypeError("Cannot cast array data from dtype('" + std::string(name(where.dtype())) +
                    "') to dtype('bool') according to the rule 'safe'");
}

bool bool_bytes_normal(const ndarray& a) {
  if (a.dtype() != DType::Bool || a.is_traced() || a.size() == 0) return true;
  // A byte-wide accumulator: the contiguous loop vectorizes to one OR per vector of bytes
  // (a wider one makes the compiler widen every byte first, several times slower).
  uint8_t acc = 0;
  if (a.is_c_contiguous()) {
    const auto* b = reinterpret_cast<const uint8_t*>(a.data());
    for (int64_t i = 0, n = a.size(); i < n; ++i) acc |= b[i];
    return (acc & 0xfe) == 0;
  }
  std::array<std::span<const int64_t>, 1> st{a.strides()};
  detail::strided_loop<1>(a.shape(), {a.data()}, st, [&](auto p, auto s, int64_t n) {
    const auto* b = reinterpret_cast<const uint8_t*>(p[0]);
    uint8_t run = 0;
    if (s[0] == 1)
      for (int64_t i = 0; i < n; ++i) run |= b[i];
    else
      for (int64_t i = 0; i < n; ++i) run |= b[i * s[0]];
    acc |= run;
  });
  return (acc & 0xfe) == 0;
}

void advise_huge(const ndarray& a) {
#ifdef MADV_HUGEPAGE
  constexpr int64_t kMin = int64_t{4} << 20;
  if (a.nbytes() < kMin) return;
  auto lo = reinterpret_cast<uintptr_t>(a.storage()->data());
  uintptr_t hi = lo + a.storage()->nbytes();
  lo = (lo + 4095) & ~uintptr_t{4095};
  hi &= ~uintptr_t{4095};
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#else
  (void)a;
#endif
}

namespace {
// Note [truth-value loops]
// bool & bool (and |, ^, logical_and/or/xor) on 0/1 bytes is the bytewise operation; on a
// bool view holding other bytes NumPy reads each nonzero byte as True. These loops compute
// the truth values themselves ((a != 0) op (b != 0), which vectorizes), so the fast path
// need not scan its bool inputs for other bytes first (a scan costs as much as the loop).
// The same holds for ~a and logical_not(a) of bool (a == 0).
// Their contiguous loops are multiversioned (Note [multiversioned loops] in loops.hpp): a mask
// `(r1 <= x) & (x < r2)` over an image ran at 60% of NumPy's AVX-512 loop in SSE2.
#define NPC_TRUTHY_BODY \
  for (int64_t i = 0; i < n; ++i) o[i] = Op{}(a[i] != 0, b[i] != 0);
template <class Op>
void truthy_contig_base(const uint8_t* a, const uint8_t* b, uint8_t* o, int64_t n) { NPC_TRUTHY_BODY }
#if NPC_MULTIVERSION
template <class Op>
NPC_TARGET_AVX2 void truthy_contig_avx2(const uint8_t* a, const uint8_t* b, uint8_t* o, int64_t n) { NPC_TRUTHY_BODY }
template <class Op>
NPC_TARGET_AVX512 void truthy_contig_avx512(const uint8_t* a, const uint8_t* b, uint8_t* o, int64_t n) { NPC_TRUTHY_BODY }
#endif
#undef NPC_TRUTHY_BODY

template <class Op>
void truthy_loop_impl(std::byte* const* p, const int64_t* s, int64_t n) {
  const auto* a = reinterpret_cast<const uint8_t*>(p[0]);
  const auto* b = reinterpret_cast<const uint8_t*>(p[1]);
  auto* o = reinterpret_cast<uint8_t*>(p[2]);
  if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
    // An output that overlaps an input only partly (an accumulation) runs element by element.
    if (partially_overlaps(p[0], n, p[2], n) || partially_overlaps(p[1], n, p[2], n)) {
      for (int64_t i = 0; i < n; ++i) o[i] = Op{}(a[i] != 0, b[i] != 0);
      return;
    }
#if NPC_MULTIVERSION
    static const int level = cpu_level();
    if (level == 2) return truthy_contig_avx512<Op>(a, b, o, n);
    if (level == 1) return truthy_contig_avx2<Op>(a, b, o, n);
#endif
    truthy_contig_base<Op>(a, b, o, n);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * s[2]] = Op{}(a[i * s[0]] != 0, b[i * s[1]] != 0);
  }
}
// not x (invert and logical_not of bool): a byte compare, which vectorizes.
void truthy_not_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  const auto* a = reinterpret_cast<const uint8_t*>(p[0]);
  auto* o = reinterpret_cast<uint8_t*>(p[1]);
  if (s[0] == 1 && s[1] == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = a[i] == 0;
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * s[1]] = a[i * s[0]] == 0;
  }
}
struct TruthAnd { uint8_t operator()(bool x, bool y) const { return x & y; } };
struct TruthOr { uint8_t operator()(bool x, bool y) const { return x | y; } };
struct TruthXor { uint8_t operator()(bool x, bool y) const { return x ^ y; } };

LoopFn truthy_loop(OpId op) {
  switch (op) {
    case OpId::invert: case OpId::logical_not: return &truthy_not_loop;
    case OpId::bitwise_and: case OpId::logical_and: return &truthy_loop_impl<TruthAnd>;
    case OpId::bitwise_or: case OpId::logical_or: return &truthy_loop_impl<TruthOr>;
    case OpId::bitwise_xor: case OpId::logical_xor: return &truthy_loop_impl<TruthXor>;
    default: return nullptr;
  }
}
}  // namespace

namespace {
// Note [strided views in the fast path]
// Stencils compute on views of a grid (`u[1:-1, 2:] - u[1:-1, :-2]`, `src[2:, 1:-1, 1:-1]`):
// not contiguous, but every stride positive and no larger than the one before it, so NumPy
// gives a C-contiguous result and its loop walks rows of the last axis forwards. The fast
// path runs them too, row by row (the general path's set-up cost more than a 3x3x3 loop).
// Complex loops stay on the general path (their loop depends on the strides' signs and on
// buffering, Note [buffered operands] in kernels_arith.cpp), and so do sizes that get threads.
constexpr int kRowDims = 8;  // views of more axes take the general path

bool c_ordered_view(const ndarray& a) {
  if (a.ndim() > kRowDims) return false;
  int64_t prev = INT64_MAX;
  for (int d = 0; d < a.ndim(); ++d) {
    if (a.shape()[d] == 1) continue;
    const int64_t st = a.strides()[d];
    if (st <= 0 || st > prev) return false;
    prev = st;
  }
  return true;
}

// Runs `fn` over the rows of the last axis of a fresh C-contiguous `out`; `ptrs`/`strides`
// hold the inputs' first elements (scalars with stride 0) and the output at index nin.
void run_rows(LoopFn fn, int nin, const FastInput* inputs, std::byte** ptrs, int64_t* strides, const ndarray& out) {
  // Note [coalesced rows]
  // Axes of length 1 are dropped and an axis is merged into the next one where every
  // operand steps over the next axis's whole extent: a (8192, 1) column view then runs as
  // one strided row of 8,192 elements instead of 8,192 rows of one (ten times NumPy's time),
  // and a C-contiguous operand beside a view of contiguous rows runs whole rows.
  int64_t shape[kRowDims];
  int64_t st[kMaxOperands][kRowDims];
  int nd = 0;
  for (int d = 0; d < out.ndim(); ++d) {
    const int64_t len = out.shape()[d];
    if (len == 0) return;
    if (len == 1) continue;
    for (int i = 0; i <= nin; ++i)
      st[i][nd] = i == nin ? out.strides()[d] : inputs[i].array ? inputs[i].array->strides()[d] : 0;
    shape[nd++] = len;
  }
  if (nd == 0) {  // one element
    for (int i = 0; i <= nin; ++i) strides[i] = 0;
    fn(ptrs, strides, 1);
    return;
  }
  int m = 0;  // merge axis d into the kept axis m - 1 where the strides allow
  for (int d = 0; d < nd; ++d) {
    bool merge = m > 0;
    for (int i = 0; i <= nin && merge; ++i) merge = st[i][m - 1] == st[i][d] * shape[d];
    if (merge) {
      shape[m - 1] *= shape[d];
      for (int i = 0; i <= nin; ++i) st[i][m - 1] = st[i][d];
      continue;
    }
    shape[m] = shape[d];
    for (int i = 0; i <= nin; ++i) st[i][m] = st[i][d];
    ++m;
  }
  nd = m;
  const int64_t inner = shape[nd - 1];
  for (int i = 0; i <= nin; ++i) strides[i] = st[i][nd - 1];
  int64_t idx[kRowDims] = {};
  std::byte* p[kMaxOperands];
  for (int i = 0; i <= nin; ++i) p[i] = ptrs[i];
  int64_t rows = 1;
  for (int d = 0; d + 1 < nd; ++d) rows *= shape[d];
  for (int64_t r = 0; r < rows; ++r) {
    fn(p, strides, inner);
    for (int d = nd - 2; d >= 0; --d) {  // the next row: an odometer over the outer axes
      for (int i = 0; i <= nin; ++i) p[i] += st[i][d];
      if (++idx[d] < shape[d]) break;
      for (int i = 0; i <= nin; ++i) p[i] -= st[i][d] * shape[d];
      idx[d] = 0;
    }
  }
}
}  // namespace

std::optional<ndarray> call_ufunc_fast(OpId op, const FastInput* inputs, int nin, int* fpe_flags,
                                       std::byte* scalar_out, DType* scalar_dtype, const ndarray* reuse) {
  const OpInfo& info = op_info(op);
  if (info.kind != OpKind::Ufunc || info.nout != 1 || info.nin != nin) return std::nullopt;
  const ndarray* shape_of = nullptr;
  bool nd_view = false;
  DType dts[kMaxOperands];
  bool weak[kMaxOperands];
  bool any_strong = false;
  for (int i = 0; i < nin; ++i) {
    const FastInput& in = inputs[i];
    weak[i] = in.array == nullptr && !in.strong;
    if (in.array == nullptr) {
      dts[i] = in.scalar.dtype;
      any_strong |= in.strong;
      continue;
    }
    const ndarray& a = *in.array;
    // C-contiguous arrays, 1-D arrays of any stride (a column of a matrix), or C-ordered
    // views (Note [strided views in the fast path]).
    if (a.is_traced()) return std::nullopt;
    if (!a.is_c_contiguous() && a.ndim() != 1) {
      if (is_complex(a.dtype()) || !c_ordered_view(a)) return std::nullopt;
      nd_view = true;
    }
    if (shape_of && shape_of->shape() != a.shape()) return std::nullopt;
    shape_of = &a;
    dts[i] = a.dtype();
  }
  if (!shape_of && !any_strong) {
    // Python scalars only: NEP 50 gives them their default dtypes (int64, float64, complex128).
    for (int i = 0; i < nin; ++i) {
      if (dts[i] == DType::UInt64 || dts[i] == DType::Bool) return std::nullopt;
      weak[i] = false;
    }
  }
  // Note [loop cache]
  // Resolution is pure in (op, dtypes, weakness), so resolved loops are cached in a small
  // global table. Each entry is one atomic word (key << 8 | loop index + 1): readers on any
  // thread see either a whole entry or another key, never a torn one, and no thread-local
  // storage is touched (a TLS access from a shared library is a function call).
  static std::atomic<uint64_t> cache[256];
  uint64_t key = (static_cast<uint64_t>(op) << 20) | static_cast<uint64_t>(nin);
  for (int i = 0; i < nin; ++i) key |= (static_cast<uint64_t>(dts[i]) * 2 + (weak[i] ? 1 : 0)) << (2 + 5 * i);
  std::atomic<uint64_t>& ce = cache[(key * 0x9E3779B97F4A7C15ull) >> 56];
  const auto& loops = loops_of(op);
  const Loop* lp = nullptr;
  const uint64_t entry = ce.load(std::memory_order_relaxed);
  if ((entry >> 8) == key && (entry & 0xff) != 0) {
    lp = &loops[(entry & 0xff) - 1];
  } else {
    LoopTypes lt = resolve_loop(op, std::span<const DType>(dts, nin), std::span<const bool>(weak, nin));
    for (size_t k = 0; k < loops.size() && k < 255; ++k)
      if (loops[k].in == lt.in && loops[k].out == lt.out) { lp = &loops[k]; break; }
    if (!lp) return std::nullopt;
    ce.store((key << 8) | static_cast<uint64_t>(lp - loops.data() + 1), std::memory_order_relaxed);
  }
  const Loop& loop = *lp;
  // Note [bool bytes]: bool inputs holding other bytes take the general path, which
  // normalises them; the truth-value loops (Note [truth-value loops]) read any nonzero byte
  // as True themselves.
  LoopFn fn = loop.fn;
  const bool truthy = loop.in[0] == DType::Bool && (nin == 1 || loop.in[1] == DType::Bool);
  if (LoopFn t = truthy ? truthy_loop(op) : nullptr) fn = t;
  for (int i = 0; i < nin; ++i)
    if (inputs[i].array && fn == loop.fn && !ops::bool_bytes_normal(*inputs[i].array)) return std::nullopt;
  alignas(16) std::byte scalar_buf[kMaxOperands][16];
  std::byte* ptrs[kMaxOperands];
  int64_t strides[kMaxOperands];
  for (int i = 0; i < nin; ++i) {
    if (inputs[i].array == nullptr) {
      const Scalar& v = inputs[i].scalar;
      DType t = loop.in[i];
      if (weak[i] && is_integer(t) && (v.dtype == DType::Int64 || v.dtype == DType::UInt64)) {
        // Out-of-range Python ints take the general path (OverflowError or exact comparison).
        const int bits = static_cast<int>(itemsize(t)) * 8;
        bool fits;
        if (v.dtype == DType::UInt64) fits = t == DType::UInt64;
        else if (kind(t) == Kind::Unsigned) fits = v.i >= 0 && (bits == 64 || v.i < (int64_t{1} << bits));
        else fits = bits == 64 || (v.i >= -(int64_t{1} << (bits - 1)) && v.i < (int64_t{1} << (bits - 1)));
        if (!fits) return std::nullopt;
      }
      // A strong scalar is a 0-d operand: only safe casts here (the general path checks others).
      if (!weak[i] && v.dtype != t && !can_cast(v.dtype, t, Casting::Safe)) return std::nullopt;
      v.store(t, scalar_buf[i]);
      ptrs[i] = scalar_buf[i];
      strides[i] = 0;
    } else {
      const ndarray& a = *inputs[i].array;
      if (a.dtype() != loop.in[i]) return std::nullopt;
      ptrs[i] = a.data();
      strides[i] = a.ndim() == 1 ? a.strides()[0] : static_cast<int64_t>(itemsize(loop.in[i]));
    }
  }
  if (op == OpId::power && kind(loop.in[1]) == Kind::Signed) return std::nullopt;  // negative-exponent check
  if (!fn) return std::nullopt;
  if (!shape_of && scalar_out && scalar_dtype) {  // scalars only: one element, no array
    ptrs[nin] = scalar_out;
    strides[nin] = static_cast<int64_t>(itemsize(loop.out[0]));
    const bool fpe = checks_fpe(op) || (is_comparison_op(op) && is_complex(loop.in[0]));
    if (fpe) clear_fpe();
    fn(ptrs, strides, 1);
    const int flags = fpe ? read_fpe() : 0;
    if (fpe_flags) *fpe_flags = flags;
    else if (flags) note_fpe(flags);
    *scalar_dtype = loop.out[0];
    return std::nullopt;
  }
  const int cost = elementwise_cost(op, loop.in[0]);
  if (nd_view && eager_threads(shape_of->size(), cost) > 1) return std::nullopt;
  // An input written in place is read element by element at the very position written, as
  // NumPy's in-place loops do (exact overlap is not partial overlap).
  const bool in_place = reuse && shape_of && reuse->dtype() == loop.out[0] && reuse->is_c_contiguous() &&
                        reuse->shape() == shape_of->shape();
  ndarray out = in_place ? *reuse : empty(shape_of ? shape_of->shape() : Shape{}, loop.out[0]);
  if (!in_place) advise_huge(out);
  ptrs[nin] = out.data();
  strides[nin] = static_cast<int64_t>(itemsize(loop.out[0]));
  const int64_t n = out.size();
  const bool fpe = checks_fpe(op) || (is_comparison_op(op) && is_complex(loop.in[0]));
  const int nt = eager_threads(n, cost);
  int flags = 0;
  if (n == 0) {
  } else if (nd_view) {
    if (fpe) clear_fpe();
    run_rows(fn, nin, inputs, ptrs, strides, out);
    if (fpe) flags = read_fpe();
  } else if (nt <= 1) {
    if (fpe) clear_fpe();
    fn(ptrs, strides, n);
    if (fpe) flags = read_fpe();
  } else {
    std::vector<std::vector<int64_t>> st(nin + 1);
    for (int k = 0; k <= nin; ++k) st[k].assign(1, strides[k]);
    int64_t flat[1] = {n};
    flags = run_elementwise(fn, nin + 1, ptrs, st, flat, nin, fpe, cost);
  }
  if (fpe_flags) *fpe_flags = flags;
  else if (flags) note_fpe(flags);
  return out;
}
}  // namespace ops

std::vector<ndarray> call_ufunc(OpId op, std::span<const Operand> inputs, const UfuncOptions& opts) {
  const OpInfo& info = op_info(op);
  if (info.kind != OpKind::Ufunc) throw TypeError("'" + std::string(info.name) + "' is not a ufunc");
  const int nin = info.nin, nout = info.nout;
  if (static_cast<int>(inputs.size()) != nin)
    throw TypeError(std::string(info.name) + "() takes from " + std::to_string(nin) + " to " +
                    std::to_string(nin + nout) + " positional arguments but " + std::to_string(inputs.size()) +
                    (inputs.size() == 1 ? " was given" : " were given"));
  if (!opts.out.empty() && static_cast<int>(opts.out.size()) != nout)
    throw ValueError("The 'out' tuple must have exactly one entry per ufunc output");

  DType dts[ops::kMaxOperands];
  bool weak[ops::kMaxOperands];
  bool traced = false;
  for (int i = 0; i < nin; ++i) {
    dts[i] = inputs[i].array.dtype();
    weak[i] = inputs[i].weak;
    traced |= inputs[i].array.is_traced();
  }
  // NumPy converts out= arrays (writeable) before it resolves the loop: a read-only out= is
  // its ValueError before any type, cast or shape error (`broadcast_to(x, s) &= x` of floats).
  for (const auto& o : opts.out)
    if (o && !o->writeable()) throw ValueError("output array is read-only");
  LoopTypes loop = opts.loop ? *opts.loop
                             : resolve_loop(op, std::span<const DType>(dts, nin), std::span<const bool>(weak, nin),
                                            opts.dtype);

  if (traced) {
    auto hook = ufunc_trace_hook();
    if (!hook) throw TypeError("npc: traced array given to '" + std::string(info.name) + "' but no tracer is installed");
    return hook(op, inputs, opts, loop);
  }

  // NumPy validates the loop's casts of array inputs and out= arrays before its iterator
  // broadcasts them: `a_uint8 /= b` with another shape is the cast's UFuncTypeError.
  for (int i = 0; i < nin; ++i)
    if (!inputs[i].weak && inputs[i].array.dtype() != loop.in[i] && !is_logical_binary(op) &&
        !can_cast(inputs[i].array.dtype(), loop.in[i], opts.casting))
      throw UfuncCastingError(op, false, i, inputs[i].array.dtype(), loop.in[i], opts.casting);
  for (int k = 0; k < nout && k < static_cast<int>(opts.out.size()); ++k)
    if (opts.out[k] && !can_cast(loop.out[k], opts.out[k]->dtype(), opts.casting))
      throw UfuncCastingError(op, true, k, loop.out[k], opts.out[k]->dtype(), opts.casting);

  // Broadcast shape: NumPy's iterator broadcasts the inputs, the given out= arrays and the
  // where= mask together (its error lists all of them), then requires each out= array to
  // have the whole shape (out= arrays are never broadcast themselves).
  std::vector<Shape> shapes;
  for (const auto& in : inputs) shapes.push_back(in.array.shape());
  for (const auto& o : opts.out)
    if (o) shapes.push_back(o->shape());
  std::optional<ndarray> mask;
  if (opts.where) {
    ops::check_where_mask(*opts.where);
    mask = *opts.where;
    shapes.push_back(mask->shape());
  }
  Shape shape = broadcast_operand_shapes(shapes);
  for (const auto& o : opts.out) {
    if (!o) continue;
    if (o->shape() != shape)
      throw ValueError("non-broadcastable output operand with shape " + iter_shape_str(o->shape()) +
                       " doesn't match the broadcast shape " + iter_shape_str(shape));
    if (!o->writeable()) throw ValueError("output array is read-only");
  }

  // Inputs in the loop's dtypes: cast whole here, or block by block inside the loop (Note
  // [buffered input casts] in buffered_cast.cpp) where the loop's choice does not depend on
  // its operands' layout and there is no mask.
  std::vector<ndarray> args;
  args.reserve(nin + nout);
  const bool may_buffer = !mask && !opts.scalar_loop && !opts.scalar_math && shape_size(shape) > 1 &&
                          !ops::picks_loop_by_strides(op, loop.in[0]);
  bool buffer_cast[ops::kMaxOperands] = {};
  for (int i = 0; i < nin; ++i) {
    const ndarray& a = inputs[i].array;
    DType t = loop.in[i];
    if (inputs[i].weak) {
      // A loop fixed by dtype= may be of another kind than a weak scalar: NumPy makes the
      // scalar an array of result_type(loop dtype, scalar) (complex64 beside a float32 loop,
      // complex128 beside an integer one, float64, int64 into bool) and casts that under
      // `casting`.
      const Kind wk = kind(a.dtype());
      const WeakKind wkind = wk == Kind::Complex ? WeakKind::Complex : wk == Kind::Float ? WeakKind::Float : WeakKind::Int;
      const DType wd = result_type(std::span<const DType>(&t, 1), std::span<const WeakKind>(&wkind, 1));
      const bool cross = wk == Kind::Complex ? !is_complex(t)
                         : wk == Kind::Float ? !is_inexact(t)
                                             : (wk == Kind::Signed || wk == Kind::Unsigned) && t == DType::Bool;
      // logical_and/or/xor convert a Python int to a C long before casting it to bool.
      if (is_logical_binary(op) && a.dtype() == DType::UInt64 &&
          Scalar::load(a.dtype(), a.data()).u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        throw OverflowError("Python int too large to convert to C long");
      if (cross && !is_logical_binary(op) && !can_cast(wd, t, opts.casting))
        throw UfuncCastingError(op, false, i, wd, t, opts.casting);
      if (std::optional<bool> v = ops::weak_int_outcome(op, inputs, i, t)) {
        std::vector<ndarray> res;
        ndarray o = (!opts.out.empty() && opts.out[0]) ? *opts.out[0] : empty(shape, DType::Bool);
        o.fill(Scalar::from_bool(*v));
        res.push_back(o);
        return res;
      }
      args.push_back(a.dtype() == t ? a : a.astype(t));
      continue;
    }
    if (a.dtype() != t) {
      if (!is_logical_binary(op) && !can_cast(a.dtype(), t, opts.casting))
        throw UfuncCastingError(op, false, i, a.dtype(), t, opts.casting);
      if (may_buffer && ops::cast_buffers(a.dtype(), t)) {
        buffer_cast[i] = true;
        args.push_back(a);
        continue;
      }
      const int before = opts.input_cast_flags_to_loop ? take_fp_flags() : 0;
      args.push_back(a.astype(t, Order::K));
      if (opts.input_cast_flags_to_loop) {
        if (int f = take_fp_flags()) ops::note_fpe(f);
        add_fp_flags(before);
      }
    } else {
      args.push_back(a);
    }
  }

  // Outputs: write straight into out= when its dtype is the loop's and there is no mask.
  std::vector<ndarray> targets, results;
  for (int k = 0; k < nout; ++k) {
    const bool has_out = k < static_cast<int>(opts.out.size()) && opts.out[k].has_value();
    if (has_out) {
      const ndarray& o = *opts.out[k];
      if (!can_cast(loop.out[k], o.dtype(), opts.casting))
        throw UfuncCastingError(op, true, k, loop.out[k], o.dtype(), opts.casting);
      results.push_back(o);
      // A float output that shares memory with a later one is written through a buffer and
      // copied back last, as NumPy 2.x does (measured): divmod(a, 3.0, out=(a, a)) and
      // modf(a, out=(a, a)) leave the first output in a; integer divmod writes in place.
      bool later_overlap = false;
      for (int j = k + 1; j < static_cast<int>(opts.out.size()) && is_inexact(loop.out[k]); ++j)
        later_overlap |= opts.out[j].has_value() && ranges_overlap(o, *opts.out[j]);
      if (o.dtype() == loop.out[k] && !later_overlap) {  // masked lanes are left as they are (Note [where= lanes])
        targets.push_back(o);
        continue;
      }
    }
    ndarray t = new_output(shape, loop.out[k], opts.order, inputs);
    if (mask && has_out) t.fill(Scalar::from_int(0));  // masked lanes are cast into nothing but stay defined
    targets.push_back(t);
    if (!has_out) results.push_back(t);
  }
  // After the casting checks of the outputs, as NumPy's loop raises this only when it runs
  // (not for an empty result, whatever the exponent's values).
  if (op == OpId::power && kind(loop.in[1]) == Kind::Signed && shape_size(shape) != 0 && any_negative(args[1]))
    throw ValueError("Integers to negative integer powers are not allowed.");
  for (int i = 0; i < nin; ++i)  // Note [bool bytes]
    if (!ops::bool_bytes_normal(args[i])) args[i] = args[i].astype(DType::UInt8).view(DType::Bool);
  // Inputs that share memory with an output other than element-for-element are copied
  // first, so results equal NumPy's (which buffers such overlaps). Memory ranges are
  // compared, not storages: two NumPy views of one buffer are different npc storages.
  for (int i = 0; i < nin; ++i) {
    for (const ndarray& t : targets) {
      if (args[i].size() == 0 || !ranges_overlap(args[i], t)) continue;
      if (buffer_cast[i]) {  // read block by block while the output is written: cast it whole first
        args[i] = args[i].astype(loop.in[i], Order::K);
        buffer_cast[i] = false;
        break;
      }
      Strides bs = broadcast_strides(args[i], shape);
      // An output with internal overlap (a writeable broadcast view: stride 0 on a longer
      // axis) is written more than once per element: its input must be buffered too.
      bool internal_overlap = false;
      for (int d = 0; d < t.ndim(); ++d) internal_overlap |= t.strides()[d] == 0 && t.shape()[d] > 1;
      if (args[i].storage()->data() + args[i].offset() == t.storage()->data() + t.offset() && bs == t.strides() &&
          args[i].dtype() == t.dtype() && !internal_overlap)
        continue;
      args[i] = args[i].copy(Order::K);
      break;
    }
  }

  const auto& loops = ops::loops_of(op);
  ops::LoopFn fn = nullptr;
  for (const auto& l : loops)
    if (l.in == loop.in && l.out == loop.out) { fn = l.fn; break; }
  if (!fn) throw TypeError("npc: no kernel for ufunc '" + std::string(info.name) + "' with this loop");
  const bool uniform = loop.in.size() && loop.in == std::vector<DType>(loop.in.size(), loop.in[0]);
  std::optional<bool> scalar_loop = opts.scalar_loop;
  if (!scalar_loop && nout == 1 && shape_size(shape) == 1) {  // Note [one-element loops]
    const bool has_out = !opts.out.empty() && opts.out[0].has_value();
    int ndims[ops::kMaxOperands];
    bool shares = false;
    for (int i = 0; i < nin; ++i) {
      ndims[i] = inputs[i].array.ndim();
      shares |= has_out && ranges_overlap(inputs[i].array, *opts.out[0]);
    }
    if (ops::scalar_loop_of_one_element(op, loop.in[0], std::span<const int>(ndims, nin),
                                        has_out ? opts.out[0]->ndim() : -1, shares))
      if (ops::LoopFn s = ops::loop_variant(op, loop.in[0], true)) {
        fn = s;
        scalar_loop = true;
      }
  }
  if (!scalar_loop && uniform && !mask && ops::loop_variant(op, loop.in[0], false)) {
    // Note [buffered operands] in kernels_arith.cpp: operands that do not walk as one run
    // pick the loop NumPy's buffered iteration picks (the kernel picks 1-D runs by stride).
    std::vector<ndarray> operands(args.begin(), args.end());
    operands.insert(operands.end(), targets.begin(), targets.end());
    bool buffered = false;
    std::optional<bool> pick = ops::runs_scalar_loop(op, loop.in[0], operands, shape, false, &buffered);
    if (buffered) scalar_loop = pick;
  }
  if (scalar_loop && uniform)
    if (ops::LoopFn s = ops::loop_variant(op, loop.in[0], *scalar_loop)) fn = s;
  bool checked = false;  // Note [integer scalar overflow] in include/npc/scalar_rules.hpp
  if (opts.scalar_math && uniform && nout == 1 && loop.out[0] == loop.in[0])
    if (ops::LoopFn s = ops::scalar_math_loop(op, loop.in[0])) fn = s, checked = true;

  std::byte* ptrs[ops::kMaxOperands];
  std::vector<std::vector<int64_t>> strides;
  for (int i = 0; i < nin; ++i) {
    ptrs[i] = args[i].data();
    strides.push_back(broadcast_strides(args[i], shape));
  }
  for (int k = 0; k < nout; ++k) {
    ptrs[nin + k] = targets[k].data();
    strides.push_back(targets[k].strides());
  }
  const int cost = ops::elementwise_cost(op, loop.in[0]);
  // Complex comparisons use C's ordered comparisons, which raise "invalid" on NaN as NumPy's do.
  const bool fpe = checked || ops::checks_fpe(op) || (is_comparison_op(op) && is_complex(loop.in[0]));
  int flags;
  if (mask) {
    // Note [where= lanes]: NumPy neither computes nor writes the lanes where `where` is
    // False, so their floating-point errors are never raised. The kernel runs on the
    // masked-in runs only: the mask and a context (stride 0) ride along as two extra operands.
    MaskedCtx ctx{fn, nin + nout};
    std::byte* mptrs[ops::kMaxOperands + 2];
    std::vector<std::vector<int64_t>> mst;
    mptrs[0] = reinterpret_cast<std::byte*>(&ctx);
    mst.emplace_back(shape.size(), 0);
    mptrs[1] = mask->data();
    mst.push_back(broadcast_strides(*mask, shape));
    for (int k = 0; k < nin + nout; ++k) {
      mptrs[2 + k] = ptrs[k];
      mst.push_back(strides[k]);
    }
    flags = ops::run_elementwise(&masked_loop, nin + nout + 2, mptrs, mst, shape, nin + 2, fpe, cost);
  } else if (std::find(buffer_cast, buffer_cast + nin, true) != buffer_cast + nin) {
    DType from[ops::kMaxOperands], to[ops::kMaxOperands];
    for (int i = 0; i < nin; ++i) from[i] = args[i].dtype(), to[i] = loop.in[i];
    int cast_flags = 0;
    flags = ops::run_elementwise_casting(fn, nin, nout, ptrs, strides, shape, from, to, fpe, cost, cast_flags);
    if (cast_flags) {  // as the whole casts' flags (above)
      if (opts.input_cast_flags_to_loop) ops::note_fpe(cast_flags);
      else add_fp_flags(cast_flags);
    }
  } else {
    flags = ops::run_elementwise(fn, nin + nout, ptrs, strides, shape, nin, fpe, cost);
  }
  if (flags) ops::note_fpe(flags);

  // NumPy casts into out= inside the ufunc's own loop (its buffers), so a cast's errors are
  // named after the ufunc ("invalid value encountered in add" for NaN into an int out),
  // while the input casts before the loop stay "... in cast".
  const int input_cast_flags = take_fp_flags();
  struct OutCastFlags {
    int keep;
    ~OutCastFlags() {
      if (int f = take_fp_flags()) ops::note_fpe(f);
      if (keep) add_fp_flags(keep);
    }
  } out_cast_flags{input_cast_flags};
  for (int k = 0; k < nout; ++k) {
    const bool has_out = k < static_cast<int>(opts.out.size()) && opts.out[k].has_value();
    if (has_out && !same_view(targets[k], results[k])) {
      const ndarray& o = results[k];
      if (mask) {
        ndarray src = targets[k].dtype() == o.dtype() ? targets[k] : targets[k].astype(o.dtype());
        masked_copy(o, src, *mask);
      } else {
        copy_into(o, targets[k]);
      }
    }
  }
  return results;
}

// ---------------------------------------------------------------- where
namespace {
template <size_t N>
void select_contiguous(const bool* c, const std::byte* x, const std::byte* y, std::byte* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(o + i * N, c[i] ? x + i * N : y + i * N, N);
}

// numpy.where(cond, x, y) for a bool condition and two arrays of one dtype, all C-contiguous
// with one shape: a single select loop, no broadcasting or casting.
std::optional<ndarray> where_contiguous(const ndarray& cond, const Operand& x, const Operand& y) {
  const ndarray &a = x.array, &b = y.array;
  if (x.weak || y.weak || cond.dtype() != DType::Bool || a.dtype() != b.dtype()) return std::nullopt;
  if (cond.is_traced() || a.is_traced() || b.is_traced()) return std::nullopt;
  if (!cond.is_c_contiguous() || !a.is_c_contiguous() || !b.is_c_contiguous()) return std::nullopt;
  if (a.shape() != b.shape() || cond.shape() != a.shape()) return std::nullopt;
  ndarray out = empty(a.shape(), a.dtype());
  const int64_t n = out.size();
  if (n == 0) return out;
  const auto* c = reinterpret_cast<const bool*>(cond.data());
  switch (a.itemsize()) {
    case 1: select_contiguous<1>(c, a.data(), b.data(), out.data(), n); break;
    case 2: select_contiguous<2>(c, a.data(), b.data(), out.data(), n); break;
    case 4: select_contiguous<4>(c, a.data(), b.data(), out.data(), n); break;
    case 8: select_contiguous<8>(c, a.data(), b.data(), out.data(), n); break;
    case 16: select_contiguous<16>(c, a.data(), b.data(), out.data(), n); break;
    default: return std::nullopt;
  }
  return out;
}
}  // namespace

ndarray where(const ndarray& cond, const Operand& x, const Operand& y) {
  if (auto r = where_contiguous(cond, x, y)) return std::move(*r);
  std::vector<DType> strong;
  std::vector<WeakKind> weak;
  for (const Operand* o : {&x, &y}) {
    if (o->weak) {
      DType t = o->array.dtype();
      weak.push_back(is_complex(t) ? WeakKind::Complex : kind(t) == Kind::Float ? WeakKind::Float : WeakKind::Int);
    } else {
      strong.push_back(o->array.dtype());
    }
  }
  DType t = result_type(strong, weak);
  for (const Operand* o : {&x, &y})
    if (o->weak && weak_int_range(o->array, t) != WeakRange::Fits)
      throw_weak_overflow(o->array, t);
  Shape shape = broadcast_operand_shapes(std::vector<Shape>{cond.shape(), x.array.shape(), y.array.shape()});
  if (cond.is_traced() || x.array.is_traced() || y.array.is_traced())
    if (auto hook = where_trace_hook()) return hook(cond, x, y, t, shape);
  ndarray c = cond.dtype() == DType::Bool ? cond : cond.astype(DType::Bool);
  ndarray xv = x.array.dtype() == t ? x.array : x.array.astype(t);
  ndarray yv = y.array.dtype() == t ? y.array : y.array.astype(t);
  Operand layout[3] = {x, y, Operand{cond, false}};
  ndarray out = new_output(shape, t, Order::K, layout);
  copy_into(out, broadcast_to(yv, shape));
  masked_copy(out, xv, c);
  return out;
}

// ---------------------------------------------------------------- outer
std::vector<ndarray> outer(OpId op, const Operand& a, const Operand& b, const UfuncOptions& opts) {
  if (op_info(op).nin != 2) throw ValueError("method outer is only supported for binary functions");
  // a[..., None, None, ...] op b: reshape a to a.shape + (1,) * b.ndim.
  Shape sa = a.array.shape();
  for (int d = 0; d < b.array.ndim(); ++d) sa.push_back(1);
  Operand a2{a.array.reshape(sa), a.weak};
  Operand ins[2] = {a2, b};
  return call_ufunc(op, ins, opts);
}

}  // namespace npc
