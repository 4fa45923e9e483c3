#pragma once
// Internal: the kernel IR of src/fusion. A kernel is a loop nest over buffers; values are
// three-address statements (Let) whose operations are rows of the op table, rendered by an
// emitter table (emit_cpp.cpp; the CUDA emitter overrides only what differs).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "npc/dtype.hpp"
#include "npc/ndarray.hpp"
#include "npc/ops.hpp"

namespace npc::fusion {

/// The terms of a Lin: atom -> coefficient, ordered by atom as a std::map would be (the
/// rendered text depends on that order), held in one sorted vector. A kernel's index maps
/// have one to four terms, and lowering copies them at every statement: a node-based map
/// allocated per term (Note [node storage] in src/tracer/graph.cpp has the same reason).
class LinTerms {
 public:
  using value_type = std::pair<std::string, int64_t>;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;
  iterator begin() { return v_.begin(); }
  iterator end() { return v_.end(); }
  const_iterator begin() const { return v_.begin(); }
  const_iterator end() const { return v_.end(); }
  bool empty() const { return v_.empty(); }
  size_t size() const { return v_.size(); }
  iterator find(std::string_view a) {
    auto it = lower(a);
    return it != v_.end() && it->first == a ? it : v_.end();
  }
  const_iterator find(std::string_view a) const { return const_cast<LinTerms*>(this)->find(a); }
  size_t count(std::string_view a) const { return find(a) != end() ? 1 : 0; }
  /// The coefficient of `a`, inserted as 0 when absent (std::map's operator[]).
  int64_t& operator[](std::string_view a) {
    auto it = lower(a);
    if (it == v_.end() || it->first != a) it = v_.insert(it, value_type(std::string(a), 0));
    return it->second;
  }
  iterator erase(const_iterator it) { return v_.erase(it); }
  size_t erase(std::string_view a) {
    auto it = find(a);
    if (it == v_.end()) return 0;
    v_.erase(it);
    return 1;
  }
  bool operator==(const LinTerms& o) const { return v_ == o.v_; }

 private:
  iterator lower(std::string_view a) {
    return std::lower_bound(v_.begin(), v_.end(), a, [](const value_type& x, std::string_view k) { return x.first < k; });
  }
  std::vector<value_type> v_;
};

/// Index arithmetic: c + sum(coef * atom). Atoms are names of int64 values in scope: loop
/// variables ("i3"), runtime sizes ("sym[0]"), runtime strides ("st[1][0]"), products of
/// those ("st[1][0]*i3") or int64 locals ("v12").
struct Lin {
  int64_t c = 0;
  LinTerms t;

  static Lin constant(int64_t v) { Lin l; l.c = v; return l; }
  static Lin atom(const std::string& a, int64_t coef = 1) { Lin l; if (coef) l.t[a] = coef; return l; }
  Lin& operator+=(const Lin& o) {
    if (&o == this) {
      const Lin copy = o;
      return *this += copy;
    }
    c += o.c;
    for (auto& [a, k] : o.t) { if ((t[a] += k) == 0) t.erase(a); }
    return *this;
  }
  Lin operator+(const Lin& o) const { Lin r = *this; r += o; return r; }
  Lin scaled(int64_t k) const {
    Lin r; r.c = c * k;
    if (k) for (auto& [a, v] : t) r.t[a] = v * k;
    return r;
  }
  /// Multiplies every term by the atom `a` (a runtime stride or size).
  Lin times_atom(const std::string& a) const {
    Lin r;
    if (c) r.t[a] = c;
    for (auto& [x, v] : t) r.t[x + "*" + a] = v;
    return r;
  }
  bool is_const() const { return t.empty(); }
  std::string str() const;
};

/// Values that a literal of the dtype cannot spell (each target renders them its own way).
enum class Special : uint8_t {
  Inf,      ///< +infinity (float dtypes)
  NegInf,   ///< -infinity (float dtypes)
  NaN,      ///< a quiet NaN (float dtypes)
  NegZero,  ///< -0.0 (float dtypes)
  Lowest,   ///< the smallest finite value of the dtype (integers: its minimum)
  Highest,  ///< the largest finite value of the dtype
};

/// A value in a statement: a local (or loop variable) by name, a literal, or a special value.
/// Nothing in it is target syntax: the emitter renders literals and specials per target.
struct Val {
  enum class K : uint8_t { Local, Lit, Special };
  std::string text;  ///< Local: the name of a local or loop variable ("" for the others)
  DType dtype = DType::Float64;
  K k = K::Local;
  npc::Scalar lit{};         ///< Lit: the value, already cast to `dtype`
  Special special = Special::Inf;

  static Val local(std::string name, DType t) {
    Val r;
    r.text = std::move(name);
    r.dtype = t;
    return r;
  }
  /// The literal `v` cast to `t` (NumPy's cast rules).
  static Val literal(const npc::Scalar& v, DType t) {
    Val r;
    r.dtype = t;
    r.k = K::Lit;
    r.lit = v.cast(t);
    return r;
  }
  static Val of(Special s, DType t) {
    Val r;
    r.dtype = t;
    r.k = K::Special;
    r.special = s;
    return r;
  }
  /// Local: with a name here, element [lane] of the local array `text` (`lane` is a loop
  /// variable; Note [lane blocks]).
  std::string lane;
  bool is_local() const { return k == K::Local; }
};

/// Operations of kernels that are not rows of the op table (accumulator updates, quiet
/// compares, index wrapping): a call of a named helper, rendered by each target's helper
/// table (emit_cpp.cpp). `in` is the dtype whose local type the helper computes in.
enum class Helper : uint8_t {
  PlainAdd,         ///< a + b in the local type of `in` (float16 accumulators add in float, no rounding)
  PlainMul,         ///< a * b in the local type of `in`
  Max,              ///< NaN-propagating maximum in the local type of `in` (float16 accumulators)
  Min,              ///< NaN-propagating minimum in the local type of `in`
  QuietMax,         ///< max(a, b) that raises no FP flag on NaN (a NaN flag tracks NaN)
  QuietMin,         ///< min(a, b), the same
  MaxSimd,          ///< numpy.maximum of float32/float64 in NumPy's SIMD loop (ties give b)
  MinSimd,          ///< numpy.minimum of float32/float64 in NumPy's SIMD loop (ties give b)
  ComplexMulPlain,  ///< the complex product by its schoolbook formula (NumPy's scalar loop)
  ComplexAbsPlain,  ///< |a| of complex a by hypot (NumPy's scalar loop, Note [complex absolute])
  QuietLess,        ///< bool a < b, raising no "invalid" flag on NaN (scalar compare)
  IsNaN,            ///< bool: a is NaN
  OrNaN,            ///< int32: a | (b is NaN)
  RoundHalf,        ///< a (a float16 value computed in float) rounded to float16 precision
  Real,             ///< the real part of complex a
  Imag,             ///< the imaginary part of complex a
  WrapIndex,        ///< int64: a < 0 ? a + index : a (a negative index counted from the end)
  ScalarAdd,        ///< integer a + b of NumPy's scalar arithmetic: "overflow" where it wraps
  ScalarSub,        ///< integer a - b, the same (Note [integer scalar overflow], scalar_rules.hpp)
  ScalarMul,        ///< integer a * b, the same
  ScalarNeg,        ///< integer -a, the same
  ScalarAbs,        ///< integer abs(a), the same
  kCount
};
/// The number of operands of a helper.
int helper_arity(Helper h);
/// The helper's name (kernel-IR dumps and verifier messages).
const char* helper_name(Helper h);

/// Expression of a Let: one operation over values (three-address code).
struct Expr {
  enum class K : uint8_t {
    Load,    ///< buf[index] of `dtype` (float16 buffers load as float; a bool buffer loads as
             ///< bool, its truth value, or as uint8, its bytes: Note [bool bytes in kernels])
    Apply,   ///< op-table row `op` over args, loop dtype `in`, result `dtype`
    Cast,    ///< args[0] (dtype `in`) cast to `dtype`
    Select,  ///< args[0] ? args[1] : args[2]
    Index,   ///< the int64 value of `index` (divided by params[0], an exact divisor, when given)
    InRange, ///< lo <= index < hi and (index - lo) % step == 0, as bool (lo/hi/step in params)
    Value,   ///< args[0] itself (a local, literal or special value)
    Call,    ///< helper `helper` over args (loop dtype `in`, result `dtype`)
  };
  K k = K::Value;
  DType dtype = DType::Float64;
  DType in = DType::Float64;
  OpId op = OpId::kCount;
  Helper helper = Helper::kCount;
  int buf = -1;
  Lin index;
  std::vector<Val> args;
  std::vector<int64_t> params;
};

/// The expression `v` itself.
inline Expr value_expr(const Val& v) {
  Expr e;
  e.k = Expr::K::Value;
  e.dtype = v.dtype;
  e.args = {v};
  return e;
}
/// Helper `h` over `args`, computed in the local type of `in`, of result dtype `t`.
inline Expr helper_call(Helper h, DType t, DType in, std::vector<Val> args) {
  Expr e;
  e.k = Expr::K::Call;
  e.dtype = t;
  e.helper = h;
  e.in = in;
  e.args = std::move(args);
  return e;
}
/// args[0] ? args[1] : args[2].
inline Expr select_expr(Val c, Val x, Val y) {
  Expr e;
  e.k = Expr::K::Select;
  e.dtype = x.dtype;
  e.args = {std::move(c), std::move(x), std::move(y)};
  return e;
}

struct Stmt;
using Block = std::vector<Stmt>;

/// Reduction clause of a vectorized loop: the accumulator combines its lanes with `op`.
/// Pairwise: a float sum in NumPy's pairwise order (Note [summation] in lower_reduce.cpp):
/// the loop's body assigns `lane_acc = lane_acc + v` once; the renderer computes the v of
/// each chunk into a local array and adds the chunks' pairwise sums as NumPy's tree does.
enum class LaneReduce : uint8_t { None, Add, Max, Min, Pairwise };

/// One statement of a kernel body.
struct Stmt {
  enum class K : uint8_t {
    Let,     ///< const dtype var = expr
    Decl,    ///< dtype var = expr (mutable: accumulators)
    Assign,  ///< var = expr
    Store,   ///< buf[index] = val
    For,     ///< for (var = lo; var < min(hi, cap); var += step) body (cap only when `capped`)
    If,      ///< if (val) body else orelse
    Break,   ///< leave the innermost loop
    /// var[0:n] = expr.op(expr.args[0][0:n]) over local arrays, n = min(hi, cap) (cap only
    /// when `capped`), by the vector routine of the op (Note [vector math in kernels]).
    VecApply,
  };
  K k;
  std::string var;
  DType dtype = DType::Float64;
  Expr expr;
  int buf = -1;
  Lin index;
  Val val;
  // For
  Lin lo, hi;
  bool capped = false;  ///< the loop stops at min(hi, cap) (a block of a blocked loop)
  Lin cap;
  int64_t step = 1;
  bool parallel = false, simd = false;
  /// A parallel loop (or a loop of Note [parallel scalar reductions]): units of work of one
  /// iteration of its innermost loop, weighed as eager kernels weigh an element (Note
  /// [threads of kernels] in emit_cpp.cpp).
  int64_t par_cost = 1;
  /// Every op of that iteration costs one unit (Note [memory-bound threads]): its work counts
  /// an eighth, as an eager loop of such an op counts it.
  bool par_memory_bound = false;
  /// A statement that must stay scalar code (a quiet compare that GCC would vectorize into
  /// a signaling one): the loop around it is not made `omp simd`.
  bool scalar_only = false;
  /// Reduction across the SIMD lanes of a vectorized loop: accumulator `lane_acc` combined
  /// with `lane_op`, and `lane_flag` (an int NaN flag, "" for none) ORed.
  LaneReduce lane_op = LaneReduce::None;
  std::string lane_acc, lane_flag;
  /// Note [parallel scalar reductions]: a top-level loop summing into accumulator
  /// `par_acc` (of `par_dtype`) whose iterations are split over the threads.
  std::string par_acc;
  DType par_dtype = DType::Float64;
  /// Set by a reduction on its outermost loop (Note [parallel scalar reductions]): its
  /// accumulator `red_acc`, the op's identity (a thread's partial starts there),
  /// red_combine (accumulator op partial: an expression over two operands whose args the
  /// renderer fills in, args[0] the accumulator and args[1] a partial) and red_flag, an int
  /// NaN flag of float max/min ORed across threads ("" for none).
  std::string red_acc, red_flag;
  Val red_identity;
  Expr red_combine;
  /// The reduction must run in order on one thread (products of float and complex values,
  /// Note [parallel scalar reductions]).
  bool red_ordered = false;
  /// A top-level LaneReduce::Pairwise loop whose chunks are summed on threads (Note
  /// [parallel pairwise sums] in kir_passes.cpp); par_cost weighs its element.
  bool pairwise_threads = false;
  /// A LaneReduce::Pairwise loop of a sum that casts its input: NumPy's buffer pieces of this
  /// many elements, each its own tree, added in turn (Note [buffered reduction casts]); 0: one tree.
  int64_t pairwise_block = 0;
  Block body, orelse;
  /// Assign: the target is element [lane] of the local array `var`. Decl: with array_len > 0,
  /// `var` is a local array of that many elements, without an initial value (Note [lane blocks]).
  std::string lane;
  int64_t array_len = 0;
  /// VecApply: the routine eager npc uses for the op (ops::simd::vector_math): its register
  /// width in bits (512, 256) and whether float32 goes through the float64 routine.
  int vec_bits = 0;
  bool vec_via_float64 = false;
};

/// A buffer of a kernel: its dtype (element type in memory).
struct KBuffer {
  DType dtype;
  bool written = false;
};

/// One kernel: a loop nest over its buffers (bufs[i] in the generated signature).
/// A float or complex value passed at launch (Note [generic kernels]): local `npk_f<slot>`
/// of `dtype`, read from launch parameter `slot` (a complex value: `slot` and `slot + 1`).
struct ValueParam {
  int slot;
  DType dtype;
};

struct Kernel {
  std::vector<KBuffer> bufs;
  Block body;
  int num_params = 0;  ///< launch parameter slots: npk_k<j>, and the values' (Note [generic kernels])
  std::vector<ValueParam> value_params;
};

/// Whether kernel-IR passes verify their result by default (NPC_VERIFY=1, as the graph passes).
bool default_verify();
/// Runs kernel-IR pass `name` over one loop nest `nest` of a kernel with buffers `bufs` and,
/// when `verify` (NPC_VERIFY=1 by default), verifies the nest after it: ir::VerifyError names
/// the pass (Note [kernel-IR passes], kir_verify.cpp).
void run_pass(std::string_view name, Block& nest, const std::vector<KBuffer>& bufs,
              const std::function<void(Block&)>& pass, bool verify = default_verify());
/// The same for a pass over a whole kernel.
void run_pass(std::string_view name, Kernel& k, const std::function<void(Kernel&)>& pass,
              bool verify = default_verify());
/// Checks the kernel-IR invariants (kir_verify.cpp) of nest `b` of a kernel with buffers
/// `bufs` and `num_params` launch parameters; throws ir::VerifyError naming `after_pass`.
void verify_nest(const Block& b, const std::vector<KBuffer>& bufs, int num_params, std::string_view after_pass);
/// verify_nest over a whole kernel.
void verify_kernel(const Kernel& k, std::string_view after_pass);

/// Replaces the constant terms of the kernel's index arithmetic and loop bounds, and its
/// float and complex literals (but zero, powers of two and non-finite values), by launch
/// parameters and returns their values for this launch (a value's bits; Note [generic
/// kernels], kernel_params.cpp). Run last: passes that compare constants run before it.
std::vector<int64_t> parametrise_constants(Kernel& k);

/// Renders a kernel as a C++ function `extern "C" int name(char* const* b, const int64_t* sym,
/// const int64_t* st, const int64_t* kp)`; `st` holds the element strides of non-contiguous
/// buffers, `kp` the launch parameters (Note [generic kernels]). It returns
/// the floating-point error kinds its threads raised (FpFlag bits, Note [fp errors in kernels]).
std::string emit_cpp_kernel(const Kernel& k, const std::string& name);
/// The prelude every translation unit starts with (NumPy-exact helpers).
const std::string& cpp_prelude();
/// The prelude of a unit of the kernels `texts`: cpp_prelude(), with the vector-math blocks
/// when a kernel calls them (Note [vector math in kernels]).
std::string cpp_prelude_for(const std::vector<std::string>& texts);
/// Text dump of the kernel IR (NPC_COMPILE_DEBUG).
std::string dump_kernel(const Kernel& k);
/// Whether the C++ emitter has a rule for ufunc `op` on loop dtype `in`.
bool cpp_supports(OpId op, DType in);
/// The C++ element type of a dtype in kernel locals ("double", "npk::c64", float16 -> "float").
std::string cpp_local_type(DType t);

}  // namespace npc::fusion
