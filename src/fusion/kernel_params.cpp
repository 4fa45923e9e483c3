// Kernel-IR pass: integer constants of index arithmetic become launch parameters.
//
// Note [generic kernels]
// Tracing unrolls Python loops: `for i in range(n): A[i, :i] -= ...` records n writes whose
// slice offsets and extents differ, and each of them lowers to a loop nest that differs from
// the others only in the integers of its index arithmetic (element offsets, loop bounds). If
// those integers were literals of the generated C++, every iteration would be a kernel of
// its own, and compile time would grow with the trip count (hundreds of kernels, a
// translation unit of megabytes).
//
// So, as the last step of lowering, `parametrise_constants` replaces the constant term of
// every index expression and loop bound (a `Lin`'s `c`) by a parameter `npk_k<j>` read from
// the launch's parameter block (`kp`, the kernel's fourth argument), and returns the values.
// Each occurrence gets a parameter of its own (numbered in order of appearance), also when
// two constants are equal: equal values are a coincidence of one loop iteration (the offset
// of row i - 1 equals the extent of row i's slice in another), and sharing their parameter
// would make that iteration's kernel text differ from the others'. So two kernels with the
// same text compute the same thing for the parameter block of either of them. (Checks that
// compare index texts, such as the in-place checks, run before this pass or treat distinct
// parameters as possibly different, which is conservative.) Kernels are deduplicated by that text (within a
// graph: one function, many launches; across graphs and processes: the translation unit,
// hence the memory and disk caches, see the same text). The loop-nest structure, the
// coefficients of the loop variables (the row strides of static shapes, which the
// vectoriser needs), and every decision lowering took from a static extent (unrolling a
// short reduction, blocking a long sum, the dtype of an accumulator) stay in the text:
// kernels that differ there are different kernels. Zero stays a literal (an index without
// an offset keeps its plain form).
//
// Float and complex literals of the arithmetic are parameters too (locals `npk_f<j>` of
// their dtype, read from the block's slot j as bits; a complex value takes two slots): a
// value computed in the traced Python from the loop's index (`z = r * np.exp(1j * theta_k)`
// in a contour integral, a time step's coefficient) is a constant of the graph, and as a
// literal it made each iteration a kernel of its own (16 compiles of one `z * eye - A` for
// 16 quadrature points). Zero, powers of two (x / 2.0 is x * 0.5 for the compiler, x * 2.0
// is x + x) and non-finite values (Note [NaN parts of complex literals] in emit_cpp.cpp)
// stay literals (a literal's cast into a float dtype is done here first: fold_cast); so do
// integer literals, whose division and remainder the compiler turns
// into multiplications only for a known divisor, and float16 ones.
#include <cmath>
#include <cstring>

#include "fusion/kernel_ir.hpp"
#include "npc/fperror.hpp"

namespace npc::fusion {
namespace {

// Whether literal `x` stays in the kernel's text: zero, a power of two or not finite.
bool plain(double x) {
  if (x == 0 || !std::isfinite(x)) return true;
  int e;
  return std::fabs(std::frexp(x, &e)) == 0.5;
}

struct Params {
  std::vector<int64_t> values;
  std::vector<ValueParam> value_params;

  void lin(Lin& l) {
    if (l.c == 0) return;
    l.t["npk_k" + std::to_string(values.size())] += 1;
    values.push_back(l.c);
    l.c = 0;
  }

  static int64_t bits(double x, bool single) {
    if (single) {
      const float f = static_cast<float>(x);
      uint32_t u;
      std::memcpy(&u, &f, sizeof u);
      return static_cast<int64_t>(u);
    }
    int64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
  }

  void val(Val& v) {
    if (v.k != Val::K::Lit) return;
    const DType t = v.dtype;
    const bool cplx = t == DType::Complex64 || t == DType::Complex128;
    if (t != DType::Float32 && t != DType::Float64 && !cplx) return;
    const bool single = t == DType::Float32 || t == DType::Complex64;
    if (!finite(v.lit) || (cplx ? plain(v.lit.c.real()) && plain(v.lit.c.imag()) : plain(v.lit.f))) return;
    const int slot = static_cast<int>(values.size());
    if (cplx) {
      values.push_back(bits(v.lit.c.real(), single));
      values.push_back(bits(v.lit.c.imag(), single));
    } else {
      values.push_back(bits(v.lit.f, single));
    }
    value_params.push_back(ValueParam{slot, t});
    v = Val::local("npk_f" + std::to_string(slot), t);
  }

  static bool finite(const Scalar& x) {
    switch (kind(x.dtype)) {
      case Kind::Float: return std::isfinite(x.f);
      case Kind::Complex: return std::isfinite(x.c.real()) && std::isfinite(x.c.imag());
      default: return true;
    }
  }

  // A literal's cast into a float or complex dtype (a weak scalar in a float32 loop) is done
  // here, so that the kernel reads the cast value: cast at run time, a tiny value raised
  // "underflow", which NumPy never reports for a Python scalar; as a literal, a value
  // computed per iteration made a kernel per iteration. A cast that overflows stays in the
  // kernel: its operand becomes a parameter (val), so the cast runs and raises "overflow" as
  // NumPy's does, but for a power of two, which stays a literal the compiler folds (its
  // overflow is not reported).
  static void fold_cast(Expr& e) {
    if (e.k != Expr::K::Cast || e.args.size() != 1 || e.args[0].k != Val::K::Lit) return;
    if (kind(e.dtype) != Kind::Float && kind(e.dtype) != Kind::Complex) return;
    if (e.dtype == DType::Float16) return;
    const int pending = take_fp_flags();
    const Scalar r = e.args[0].lit.cast(e.dtype);
    take_fp_flags();
    add_fp_flags(pending);
    if (finite(e.args[0].lit) && !finite(r)) return;
    e = value_expr(Val::literal(r, e.dtype));
  }

  void expr(Expr& e) {
    lin(e.index);
    fold_cast(e);
    for (Val& v : e.args) val(v);
  }

  void block(Block& b) {
    for (Stmt& s : b) {
      lin(s.index);
      expr(s.expr);
      val(s.val);
      lin(s.lo);
      lin(s.hi);
      lin(s.cap);
      val(s.red_identity);
      expr(s.red_combine);
      block(s.body);
      block(s.orelse);
    }
  }
};

}  // namespace

std::vector<int64_t> parametrise_constants(Kernel& k) {
  Params p;
  p.block(k.body);
  k.num_params = static_cast<int>(p.values.size());
  k.value_params = std::move(p.value_params);
  return p.values;
}

}  // namespace npc::fusion
