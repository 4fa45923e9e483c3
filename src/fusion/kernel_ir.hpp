#pragma once
// Internal: the kernel IR of src/fusion. A kernel is a loop nest over buffers; values are
// three-address statements (Let) whose operations are rows of the op table, rendered by an
// emitter table (emit_cpp.cpp; the CUDA emitter overrides only what differs).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "npc/dtype.hpp"
#include "npc/ops.hpp"

namespace npc::fusion {

/// Index arithmetic: c + sum(coef * atom). Atoms are names of int64 values in scope: loop
/// variables ("i3"), runtime sizes ("sym[0]"), runtime strides ("st[1][0]"), products of
/// those ("st[1][0]*i3") or int64 locals ("v12").
struct Lin {
  int64_t c = 0;
  std::map<std::string, int64_t> t;

  static Lin constant(int64_t v) { Lin l; l.c = v; return l; }
  static Lin atom(const std::string& a, int64_t coef = 1) { Lin l; if (coef) l.t[a] = coef; return l; }
  Lin& operator+=(const Lin& o) {
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

/// A value in a statement: the name of a local, or a literal.
struct Val {
  std::string text;
  DType dtype;
};

/// Expression of a Let: one operation over locals.
struct Expr {
  enum class K : uint8_t {
    Load,    ///< buf[index] of `dtype` (float16 buffers load as float)
    Apply,   ///< op-table row `op` over args, loop dtype `in`, result `dtype`
    Cast,    ///< args[0] (dtype `in`) cast to `dtype`
    Select,  ///< args[0] ? args[1] : args[2]
    Index,   ///< the int64 value of `index`
    InRange, ///< lo <= index < hi and (index - lo) % step == 0, as bool (lo/hi/step in params)
    Lit,     ///< literal text in args[0]
  };
  K k;
  DType dtype;
  DType in = DType::Float64;
  OpId op = OpId::kCount;
  int buf = -1;
  Lin index;
  std::vector<Val> args;
  std::vector<int64_t> params;
};

struct Stmt;
using Block = std::vector<Stmt>;

/// One statement of a kernel body.
struct Stmt {
  enum class K : uint8_t {
    Let,     ///< const dtype var = expr
    Decl,    ///< dtype var = expr (mutable: accumulators)
    Assign,  ///< var = expr
    Store,   ///< buf[index] = val
    For,     ///< for (var = lo; var < hi; ++var) body
    If,      ///< if (cond) body else orelse
    Break,   ///< leave the innermost loop
  };
  K k;
  std::string var;
  DType dtype = DType::Float64;
  Expr expr{Expr::K::Lit, DType::Float64};
  int buf = -1;
  Lin index;
  Val val{"", DType::Float64};
  // For
  Lin lo, hi;
  int64_t step = 1;
  bool parallel = false, simd = false;
  /// A statement that must stay scalar code (a quiet compare that GCC would vectorize into
  /// a signaling one): the loop around it is not made `omp simd`.
  bool scalar_only = false;
  std::string reduction;  ///< "+:acc" for an omp simd reduction clause
  /// Note [parallel scalar reductions]: a top-level loop summing into accumulator
  /// `par_acc` (of `par_dtype`) whose iterations are split over the threads.
  std::string par_acc;
  DType par_dtype = DType::Float64;
  /// Set by a reduction on its outermost loop (Note [parallel scalar reductions]): its
  /// accumulator `red_acc`, the op's identity literal (a thread's partial starts there),
  /// red_combine (accumulator op partial: args or Lit text use "@A@" and "@B@") and red_flag,
  /// an int NaN flag of float max/min ORed across threads ("" for none).
  std::string red_acc, red_identity, red_flag;
  Expr red_combine{Expr::K::Lit, DType::Float64};
  Block body, orelse;
};

/// A buffer of a kernel: its dtype (element type in memory).
struct KBuffer {
  DType dtype;
  bool written = false;
};

/// One kernel: a loop nest over its buffers (bufs[i] in the generated signature).
struct Kernel {
  std::vector<KBuffer> bufs;
  Block body;
  int num_params = 0;  ///< launch parameters npk_k<j> (Note [generic kernels])
};

/// Replaces the constant terms of the kernel's index arithmetic and loop bounds by launch
/// parameters and returns their values for this launch (Note [generic kernels],
/// kernel_params.cpp). Run last: passes that compare constants run before it.
std::vector<int64_t> parametrise_constants(Kernel& k);

/// Renders a kernel as a C++ function `extern "C" int name(char* const* b, const int64_t* sym,
/// const int64_t* st, const int64_t* kp)`; `st` holds the element strides of non-contiguous
/// buffers, `kp` the launch parameters (Note [generic kernels]). It returns
/// the floating-point error kinds its threads raised (FpFlag bits, Note [fp errors in kernels]).
std::string emit_cpp_kernel(const Kernel& k, const std::string& name);
/// The prelude every translation unit starts with (NumPy-exact helpers).
const std::string& cpp_prelude();
/// Text dump of the kernel IR (NPC_COMPILE_DEBUG).
std::string dump_kernel(const Kernel& k);
/// Whether the C++ emitter has a rule for ufunc `op` on loop dtype `in`.
bool cpp_supports(OpId op, DType in);
/// The C++ element type of a dtype in kernel locals ("double", "npk::c64", float16 -> "float").
std::string cpp_local_type(DType t);

}  // namespace npc::fusion
