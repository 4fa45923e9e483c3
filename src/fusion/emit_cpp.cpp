// The C++/OpenMP emitter: renders the kernel IR as C++ source.
//
// Note [emitter table]
// Each ufunc row of the op table maps to one C++ expression pattern ({0}, {1}: arguments,
// {T}: the loop's C++ type) and the dtype kinds it supports (b: bool, i: integer, f: float,
// c: complex), or to an explicit Unsupported(reason): a graph with such an op (or a dtype
// kind outside the pattern's set) runs on the eager backend. By default a row's pattern is
// its entry point in the scalar rules, `npk::ufunc::<name><{T}>({0}, ...)` (Note [ufunc entry
// points] in include/npc/scalar_rules.hpp, part of the prelude), for the kinds of its loops
// whose inputs share one dtype; a row with two outputs or only mixed-dtype loops is
// Unsupported. make_cpp_table lists only what differs from that: fewer kinds, a complex or
// float32 pattern, Unsupported. Every ufunc row has one or the other
// (tests/python/test_op_table.py); rows that are not ufuncs (reductions, primitives) are
// lowered structurally and have none. A GPU emitter copies this table and overrides only the
// rows that differ (STYLE.md 3).
//
// Note [one rule per float loop]
// A float loop of a fused kernel computes what the eager loop computes, bit for bit: the row's
// entry point in the scalar header, or, where eager npc runs a vector-math routine for the op
// and dtype, the same routine through the same block function (Note [vector math in kernels]).
// So the table has no float32 (or float64) pattern of its own: a faster formula for one
// dtype in generated code only (a vectorizable float32 exp once was one) gives other bits
// than eager npc in a few percent of elements. A faster rule belongs in the scalar header (or
// the vector-math policy), where eager and fused code take it together: float32 exp is now
// such a rule there (Note [float32 exp] in include/npc/scalar_rules.hpp).
//
// Note [fp errors in kernels]
// A kernel returns the floating-point error kinds it raised (FpFlag bits) so the caller can
// warn under numpy.errstate as eager ufuncs do. FE flags are per thread: the kernel clears
// the calling thread's flags on entry; each parallel loop runs as chunks on npc's thread
// pool (npk::parallel_for) whose threads clear their flags before each chunk, run its
// iterations and OR what fetestexcept says into npk_fpe; flags raised outside parallel
// loops are read on the calling thread before each parallel loop. The calling thread's flags are
// otherwise left to the caller: the fused backend's run clears them before its first launch
// and reads them before each library call and after the last launch (a graph's kernels
// report one union; reading and clearing them around each of thousands of one-element
// kernels cost more than the kernels, Note [replay costs] in src/fusion/backend.cpp). Only lanes NumPy
// computes raise: loops run exactly the iteration space (no padded or speculative lanes;
// the vectorizer's remainder is scalar or masked), writes with a region guard compute the
// new value only inside the guard, and -ffp-contract=off keeps every rounding (and so every
// overflow/underflow) where NumPy has it.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "fusion/kernel_ir.hpp"
#include "npc/fusion.hpp"
#include "ops/math_simd.hpp"

namespace npc::fusion {
namespace {

const char kPrelude[] =
#include "fusion/prelude_str.inc"
    ;

using Rule = EmitRule;

char kind_letter(DType t) {
  switch (kind(t)) {
    case Kind::Bool: return 'b';
    case Kind::Signed:
    case Kind::Unsigned: return 'i';
    case Kind::Float: return 'f';
    default: return 'c';
  }
}

using Table = std::array<Rule, kNumOps>;

// The dtype kinds of a ufunc row's loops whose inputs share one dtype, in "bifc" order.
std::string uniform_loop_kinds(std::string_view loops) {
  bool have[4] = {false, false, false, false};
  size_t pos = 0;
  while (pos < loops.size()) {
    size_t end = loops.find(' ', pos);
    if (end == std::string_view::npos) end = loops.size();
    std::string_view sig = loops.substr(pos, end - pos);
    pos = end + 1;
    const std::string_view in = sig.substr(0, sig.find("->"));
    if (in.empty() || in.find_first_not_of(in[0]) != std::string_view::npos) continue;
    // ops.def's loop characters: ? bool, bBhHiIlL integers, efd floats, FD complex.
    const char c = in[0];
    have[c == '?' ? 0 : std::string_view("efd").find(c) != std::string_view::npos ? 2 : (c == 'F' || c == 'D') ? 3 : 1] = true;
  }
  std::string kinds;
  for (int k = 0; k < 4; ++k)
    if (have[k]) kinds += "bifc"[k];
  return kinds;
}

Table make_cpp_table() {
  Table t{};
  // The default patterns' text (the table lives as long as this storage).
  static std::deque<std::string> text;
  auto keep = [&](std::string s) -> std::string_view { return text.emplace_back(std::move(s)); };
  auto set = [&](OpId op, std::string_view pat, std::string_view kinds) {
    t[static_cast<int>(op)] = Rule{Rule::Status::Pattern, pat, kinds};
  };
  auto unsupported = [&](OpId op, const char* reason) {
    t[static_cast<int>(op)] = Rule{Rule::Status::Unsupported, reason, ""};
  };
  // Every ufunc row: its entry point in the scalar rules (Note [ufunc entry points]) for the
  // kinds of its one-dtype loops.
  for (int i = 0; i < kNumOps; ++i) {
    const OpId op = static_cast<OpId>(i);
    const OpInfo& row = op_info(op);
    if (row.kind != OpKind::Ufunc) continue;
    std::string kinds = uniform_loop_kinds(row.loops);
    if (row.nout != 1) {
      unsupported(op, "two outputs: a kernel expression has one result");
    } else if (kinds.empty()) {
      unsupported(op, "mixed-dtype loops: a pattern has one loop type");
    } else {
      std::string pat = "npk::ufunc::" + std::string(row.name) + "<{T}>(";
      for (int k = 0; k < row.nin; ++k) pat += (k ? ", {" : "{") + std::to_string(k) + "}";
      set(op, keep(pat + ")"), keep(kinds));
    }
  }
  // Where generated code differs: fewer dtype kinds (their graphs run eagerly), the complex
  // loops named as NumPy's C library calls, no rendering. A row has no pattern of its own for
  // one real dtype: the element rule of every float loop is the scalar header's, which eager
  // kernels compile too (Note [one rule per float loop]).
  using O = OpId;
  auto kinds_only = [&](OpId op, const char* kinds) { t[static_cast<int>(op)].kinds = kinds; };
  kinds_only(O::power, "f");
  kinds_only(O::float_power, "f");
  kinds_only(O::sign, "if");
  kinds_only(O::reciprocal, "f");
  kinds_only(O::rint, "f");
  for (OpId op : {O::exp2, O::expm1, O::log2, O::log10, O::log1p}) kinds_only(op, "f");
  for (OpId op : {O::maximum, O::minimum, O::fmax, O::fmin}) kinds_only(op, "bif");
  // Complex loops call NumPy's own formulas (prelude helpers).
  auto complex_ = [&](OpId op, const char* pat) {
    Rule& r = t[static_cast<int>(op)];
    r.complex_text = pat;
    r.kinds = "fc";  // the pattern renders the float loops
  };
  complex_(O::exp, "npk::cexpv({0})");
  complex_(O::log, "npk::clogv({0})");
  complex_(O::sqrt, "npk::csqrtv({0})");
  complex_(O::sin, "npk::csinv({0})");
  complex_(O::cos, "npk::ccosv({0})");
  complex_(O::tan, "npk::ctanv({0})");
  complex_(O::sinh, "npk::csinhv({0})");
  complex_(O::cosh, "npk::ccoshv({0})");
  complex_(O::tanh, "npk::ctanhv({0})");
  complex_(O::arcsin, "npk::casinv({0})");
  complex_(O::arccos, "npk::cacosv({0})");
  complex_(O::arctan, "npk::catanv({0})");
  complex_(O::arcsinh, "npk::casinhv({0})");
  complex_(O::arccosh, "npk::cacoshv({0})");
  complex_(O::arctanh, "npk::catanhv({0})");
  unsupported(O::gcd, "not rendered: runs on the eager kernels");
  unsupported(O::lcm, "not rendered: runs on the eager kernels");
  unsupported(O::spacing, "float16 works on the binary16 bits (the eager loop)");
  unsupported(O::nextafter, "float16 works on the binary16 bits (the eager loop)");
  return t;
}

const Table& cpp_table() {
  static const Table t = make_cpp_table();
  return t;
}

// Note [helper table]
// Kernel operations that are not op-table rows (Helper in kernel_ir.hpp: accumulator
// updates, quiet compares, NaN flags, index wrapping) have one C++ pattern each, in the
// notation of the emitter table ({0}, {1}: operands, {T}: the C++ local type of the loop
// dtype, {I}: the expression's index). A GPU renderer overrides the rows that differ.
using HelperTable = std::array<const char*, static_cast<int>(Helper::kCount)>;

HelperTable make_helper_table() {
  HelperTable t{};
  auto set = [&](Helper h, const char* pat) { t[static_cast<int>(h)] = pat; };
  set(Helper::PlainAdd, "({0} + {1})");
  set(Helper::PlainMul, "({0} * {1})");
  set(Helper::Max, "npk::maxv<{T}>({0}, {1})");
  set(Helper::Min, "npk::minv<{T}>({0}, {1})");
  set(Helper::QuietMax, "npk::qmax({0}, {1})");
  set(Helper::QuietMin, "npk::qmin({0}, {1})");
  set(Helper::MaxSimd, "npk::maxv_vec<{T}>({0}, {1})");
  set(Helper::MinSimd, "npk::minv_vec<{T}>({0}, {1})");
  set(Helper::ComplexMulPlain, "npk::mul_plain({0}, {1})");
  set(Helper::ComplexAbsPlain, "npk::absv({0})");
  set(Helper::QuietLess, "npk::lt_scalar({0}, {1})");
  set(Helper::IsNaN, "std::isnan({0})");
  set(Helper::OrNaN, "({0} | (int)({1} != {1}))");
  set(Helper::RoundHalf, "npk::r16({0})");
  set(Helper::Real, "{0}.re");
  set(Helper::Imag, "{0}.im");
  set(Helper::WrapIndex, "({0} < 0 ? {0} + {I} : {0})");
  set(Helper::ScalarAdd, "npk::scalar_add<{T}>({0}, {1})");
  set(Helper::ScalarSub, "npk::scalar_sub<{T}>({0}, {1})");
  set(Helper::ScalarMul, "npk::scalar_mul<{T}>({0}, {1})");
  set(Helper::ScalarNeg, "npk::scalar_neg<{T}>({0})");
  set(Helper::ScalarAbs, "npk::scalar_abs<{T}>({0})");
  return t;
}

const HelperTable& helper_table() {
  static const HelperTable t = make_helper_table();
  return t;
}

std::string subst(std::string_view pat, const std::vector<std::string>& args, const std::string& T,
                  const std::string& I = "") {
  std::string out;
  for (size_t i = 0; i < pat.size(); ++i) {
    const char c = pat[i], c1 = i + 1 < pat.size() ? pat[i + 1] : '\0', c2 = i + 2 < pat.size() ? pat[i + 2] : '\0';
    if (c == '{' && c1 == 'T' && c2 == '}') { out += T; i += 2; continue; }
    if (c == '{' && c1 == 'I' && c2 == '}') { out += I; i += 2; continue; }
    if (c == '{' && c1 >= '0' && c1 <= '9' && c2 == '}') { out += args.at(c1 - '0'); i += 2; continue; }
    out += c;
  }
  return out;
}

// A literal of dtype t in C++ (hex floats: exact).
std::string render_literal(const npc::Scalar& s, DType t) {
  char b[64];
  auto fp = [&](double x, bool single) -> std::string {
    if (std::isnan(x)) {
      // A NaN keeps its sign and payload, as NumPy's loops pass them on (x + -nan is -nan);
      // other than the default NaN, a value the compiler cannot fold (npk::runtime_nan_bits).
      if (single) {
        const float f = static_cast<float>(x);
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        if (u == 0x7FC00000u) return "__builtin_nanf(\"\")";
        std::snprintf(b, sizeof b, "npk::runtime_nan_bits<float>((uint32_t)0x%08xu)", u);
        return b;
      }
      uint64_t u;
      std::memcpy(&u, &x, sizeof u);
      if (u == 0x7FF8000000000000ull) return "__builtin_nan(\"\")";
      std::snprintf(b, sizeof b, "npk::runtime_nan_bits<double>((uint64_t)0x%016llxull)",
                    static_cast<unsigned long long>(u));
      return b;
    }
    if (std::isinf(x)) return std::string(x < 0 ? "-" : "") + (single ? "__builtin_inff()" : "__builtin_inf()");
    std::snprintf(b, sizeof b, "%a", x);
    return single ? "(float)" + std::string(b) : std::string(b);
  };
  switch (kind(t)) {
    case Kind::Bool: return s.b ? "true" : "false";
    case Kind::Signed:
      if (s.i == INT64_MIN) return "(int64_t)INT64_MIN";
      return "(" + cpp_local_type(t) + ")" + std::to_string(s.i) + "LL";
    case Kind::Unsigned: return "(" + cpp_local_type(t) + ")" + std::to_string(s.u) + "ULL";
    case Kind::Float:
      if (t == DType::Float64) return fp(s.f, false);
      return fp(t == DType::Float16 ? half_to_double(double_to_half(s.f)) : static_cast<double>(static_cast<float>(s.f)),
                true);
    case Kind::Complex: {
      // Note [NaN parts of complex literals]: NumPy's complex loops compare the parts with C's
      // ordered operators (Smith's division, the complex order), which raise "invalid" on a
      // NaN part; GCC folds those comparisons of a literal NaN at compile time, and the flag
      // would be lost. A NaN part is a value the compiler cannot see through.
      const bool single = t == DType::Complex64;
      auto part = [&](double x) {
        if (std::isnan(x)) return std::string(single ? "npk::runtime_nan<float>()" : "npk::runtime_nan<double>()");
        return single ? fp(static_cast<float>(x), true) : fp(x, false);
      };
      return std::string(single ? "npk::c64{" : "npk::c128{") + part(s.c.real()) + ", " + part(s.c.imag()) + "}";
    }
  }
  return "0";
}

std::string render_special(Special sp, DType t) {
  const bool single = t != DType::Float64;
  switch (sp) {
    case Special::Inf: return single ? "__builtin_inff()" : "__builtin_inf()";
    case Special::NegInf: return single ? "-__builtin_inff()" : "-__builtin_inf()";
    case Special::NaN: return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
    case Special::NegZero: return "-" + render_literal(npc::Scalar::from_int(0).cast(t), t);
    case Special::Lowest: return "std::numeric_limits<" + cpp_local_type(t) + ">::lowest()";
    case Special::Highest: return "std::numeric_limits<" + cpp_local_type(t) + ">::max()";
  }
  return "0";
}

std::string render_val(const Val& v) {
  switch (v.k) {
    case Val::K::Local: return v.lane.empty() ? v.text : v.text + "[" + v.lane + "]";
    case Val::K::Lit: return render_literal(v.lit, v.dtype);
    case Val::K::Special: return render_special(v.special, v.dtype);
  }
  return "";
}

// A loop's upper bound: hi, or min(cap, hi) for a block of a blocked loop.
std::string render_bound(const Stmt& s) {
  if (!s.capped) return s.hi.str();
  return "std::min<int64_t>(" + s.cap.str() + ", " + s.hi.str() + ")";
}

std::string mem_type(DType t) {
  switch (t) {
    case DType::Bool: return "uint8_t";
    case DType::Float16: return "uint16_t";
    default: return cpp_local_type(t);
  }
}

void indent(std::ostringstream& os, int n) { for (int i = 0; i < n; ++i) os << "  "; }

std::string render_expr(const Expr& e) {
  std::vector<std::string> a;
  for (auto& v : e.args) a.push_back(render_val(v));
  switch (e.k) {
    case Expr::K::Load: {
      std::string ref = "p" + std::to_string(e.buf) + "[" + e.index.str() + "]";
      if (e.dtype == DType::Float16) return "npk::h2f(" + ref + ")";
      if (e.dtype == DType::Bool) return "(" + ref + " != 0)";
      return ref;
    }
    case Expr::K::Apply: {
      const Rule& r = cpp_table()[static_cast<int>(e.op)];
      std::string_view pat = r.text;
      if (e.dtype == e.in && is_complex(e.in) && !r.complex_text.empty()) pat = r.complex_text;
      std::string s = subst(pat, a, cpp_local_type(e.in));
      if (e.dtype == DType::Float16) s = "npk::r16(" + s + ")";
      return s;
    }
    case Expr::K::Cast: {
      if (e.dtype == DType::Float16) return "npk::h2f(npk::d2h(npk::cast<double, " + cpp_local_type(e.in) + ">(" + a[0] + ")))";
      // NumPy's float16 -> uint32 loop converts through int64 (unlike float32/float64).
      if (e.in == DType::Float16 && e.dtype == DType::UInt32) return "(uint32_t)(uint64_t)npk::cvt64(" + a[0] + ")";
      return "npk::cast<" + cpp_local_type(e.dtype) + ", " + cpp_local_type(e.in) + ">(" + a[0] + ")";
    }
    case Expr::K::Select: return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
    case Expr::K::Index:
      if (e.params.empty()) return e.index.str();
      return "(" + e.index.str() + " / " + std::to_string(e.params[0]) + ")";
    case Expr::K::InRange: {
      // params: first, step, count; the index is in the region when first + k*step == index for 0 <= k < count.
      std::string d = "(" + e.index.str() + " - (" + std::to_string(e.params[0]) + "))";
      int64_t step = e.params[1], n = e.params[2];
      if (step == 1) return "(" + d + " >= 0 && " + d + " < " + std::to_string(n) + ")";
      return "(" + d + " % " + std::to_string(step) + " == 0 && " + d + " / " + std::to_string(step) + " >= 0 && " + d +
             " / " + std::to_string(step) + " < " + std::to_string(n) + ")";
    }
    case Expr::K::Value: return a.at(0);
    case Expr::K::Call:
      return subst(helper_table()[static_cast<int>(e.helper)], a, cpp_local_type(e.in), e.index.str());
  }
  return "";
}

void render_block(std::ostringstream& os, const Block& b, const Kernel& k, int ind);

// Note [vector math in kernels] (kir_vector_math.cpp): the block function of the prelude's
// vector-math entry points (src/ops/vector_math_block.hpp), <c>[_via64]_<e|d>(in, out, n).
std::string render_vec_apply(const Stmt& s) {
  const Expr& e = s.expr;
  return std::string("npk::vm::") + ops::simd::vector_math_name(e.op) + (s.vec_via_float64 ? "_via64" : "") +
         (s.vec_bits == 512 ? "_e" : "_d") + "(" + e.args.at(0).text + ", " + s.var + ", " + render_bound(s) + ")";
}

void render_stmt(std::ostringstream& os, const Stmt& s, const Kernel& k, int ind);

// `acc op part` of a split reduction (Note [parallel scalar reductions], kir_passes.cpp).
std::string render_combine(const Stmt& s, const std::string& acc, const std::string& part) {
  Expr e = s.red_combine;
  e.args.at(0) = Val::local(acc, e.args[0].dtype);
  e.args.at(1) = Val::local(part, e.args[1].dtype);
  return render_expr(e);
}

// The OpenMP reduction clause of a vectorized loop ("" for none).
std::string lane_clause(const Stmt& s) {
  if (s.lane_op == LaneReduce::None || s.lane_op == LaneReduce::Pairwise) return "";
  const char* op = s.lane_op == LaneReduce::Add ? "+" : s.lane_op == LaneReduce::Max ? "max" : "min";
  std::string c = std::string("reduction(") + op + ":" + s.lane_acc + ")";
  if (!s.lane_flag.empty()) c += " reduction(|:" + s.lane_flag + ")";
  return c;
}

// Note [threads of kernels]
// Kernels are generic (Note [generic kernels] in kernel_params.cpp): a loop's trip count is
// known at launch, so whether threads pay is decided there. A parallel loop asks npc's own
// rule (npk::threads_for: parallel::threads_for of src/core/parallel.cpp, handed to each
// module when it is loaded) with the elements of its loop nest and the work of one element
// (Stmt::par_cost, counted as eager kernels count an op's element by ops::elementwise_cost,
// Note [parallel threshold] in src/core/parallel.cpp); a loop whose ops all cost one unit
// counts an eighth of its work, as an eager loop of one such op does (Note [memory-bound
// threads] in src/ops/registry.cpp). Before, fused
// comparisons and maximum counted eight units where eager ones count one: radial_profile's
// ring mask `(r1 <= radius) & (radius < r2)` over 490,000 doubles, 43 launches a call between
// graph breaks, woke the second thread every time, and its calls took 31-34 ms against
// 25-26 ms on one thread.
// On one thread the loop runs as plain code on the calling thread, without handing it to the
// thread pool, which costs more than a small kernel (Note [no idle parallel regions]; a
// parallel scalar reduction runs as one chunk, so that it sums as with more): before,
// every loop over a runtime extent woke the whole team, and a 120x120 relaxation step paid
// about 60 us of wake-up for 10 us of work. The rule is eager npc's, so npc.set_num_threads,
// the parallel threshold and one thread in a forked child (Note [fork] in src/core/parallel.cpp)
// hold for fused code.

// The iterations of loop `s` as a C++ expression.
std::string trip_count(const Stmt& s) {
  const std::string step = std::to_string(s.step);
  return "std::max<int64_t>(0, ((" + render_bound(s) + ") - (" + s.lo.str() + ") + " + step + " - 1) / " + step + ")";
}

// Whether `text` names one of `vars` (as a whole identifier).
bool names_any(const std::string& text, const std::set<std::string>& vars) {
  size_t i = 0;
  while (i < text.size()) {
    if (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      if (vars.count(text.substr(i, j - i))) return true;
      i = j;
    } else {
      ++i;
    }
  }
  return false;
}

// The elements of the loops of `b`, summed: each loop's iterations times the elements of its
// own body. A loop whose bounds name an enclosing loop's variable (the blocks of a blocked sum,
// Note [summation]; the lanes of a lane block, Note [lane blocks]) counts that loop's step:
// the elements of one block. `steps` maps the enclosing loops' variables to their steps. ""
// when `b` has no loop.
std::string body_elements(const Block& b, std::map<std::string, int64_t>& steps) {
  std::string sum;
  for (const Stmt& in : b) {
    if (in.k != Stmt::K::For) continue;
    const std::string bound = in.lo.str() + " " + in.hi.str() + (in.capped ? " " + in.cap.str() : "");
    int64_t block = 0;
    for (const auto& [v, st] : steps)
      if (names_any(bound, {v})) block = std::max(block, st);
    std::string term;
    if (block > 0) {
      term = std::to_string(block);
    } else {
      term = trip_count(in);
      steps[in.var] = in.step;
      const std::string inner = body_elements(in.body, steps);
      steps.erase(in.var);
      if (!inner.empty()) term += " * (" + inner + ")";
    }
    sum += (sum.empty() ? "" : " + ") + term;
  }
  return sum;
}

// The elements of the loop nest under `s` (every loop of each body: a lane block's reduction
// loops as well as its stores), times its work per element: the `work` argument of
// npk::threads_for. Counting only the last loop of each body counted a column sum of a
// 256 x 256 array (lane blocks of outputs, each with its reduction loop) as 256 elements:
// `np.log1p(2 * a).std(axis=0)` stayed on one thread.
std::string nest_work(const Stmt& s) {
  std::map<std::string, int64_t> steps{{s.var, s.step}};
  std::string w = trip_count(s);
  const std::string inner = body_elements(s.body, steps);
  if (!inner.empty()) w += " * (" + inner + ")";
  if (s.par_memory_bound) w = "(" + w + ") / 8";  // Note [memory-bound threads] in src/ops/registry.cpp
  return "npk::threads_for(" + w + ", " + std::to_string(s.par_cost) + ")";
}

// Note [parallel scalar reductions] (kir_passes.cpp): one contiguous range of the loop's
// iterations per thread, each reduced from the op's identity; partials combined in thread
// order (NaN flags of float max/min ORed).
void render_parallel_sum(std::ostringstream& os, const Stmt& s, const Kernel& k, int ind) {
  const std::string T = cpp_local_type(s.par_dtype), acc = s.par_acc, parts = "npk_parts_" + acc;
  const std::string flag = s.red_flag, flags = "npk_flags_" + acc;
  const std::string lo = s.lo.str(), hi = render_bound(s), step = std::to_string(s.step);
  auto line = [&](int i, const std::string& text) { indent(os, i); os << text << "\n"; };
  line(ind, "{");
  line(ind + 1, T + " " + parts + "[256];");
  if (!flag.empty()) line(ind + 1, "int " + flags + "[256];");
  line(ind + 1, "const int npk_nt_" + acc + " = " + nest_work(s) + ";");
  line(ind + 1, "const int npk_np_" + acc + " = npk_nt_" + acc + " < 1 ? 1 : npk_nt_" + acc + " > 256 ? 256 : npk_nt_" + acc + ";");
  line(ind + 1, "npk_fpe |= npk::fpe_take();");
  // Values by copy (npk::parallel_for), the partials by reference.
  line(ind + 1, "npk_fpe |= npk::parallel_for(npk_nt_" + acc + ", npk_np_" + acc + ", [=, &" + parts +
                    (flag.empty() ? std::string() : ", &" + flags) + "](int64_t npk_t) NPK_CHUNK {");
  line(ind + 2, "const int64_t npk_n = npk_np_" + acc + ";");
  line(ind + 2, "const int64_t npk_iters = ((" + hi + ") - (" + lo + ") + " + step + " - 1) / " + step + ";");
  line(ind + 2, T + " " + acc + " = " + render_val(s.red_identity) + ";");
  if (!flag.empty()) line(ind + 2, "int " + flag + " = 0;");
  Stmt loop = s;
  loop.par_acc.clear();
  loop.capped = false;
  loop.lo = Lin::atom("(" + lo + ") + " + step + " * (npk_iters * npk_t / npk_n)");
  loop.hi = Lin::atom("std::min<int64_t>(" + hi + ", (" + lo + ") + " + step + " * (npk_iters * (npk_t + 1) / npk_n))");
  render_stmt(os, loop, k, ind + 2);
  line(ind + 2, parts + "[npk_t] = " + acc + ";");
  if (!flag.empty()) line(ind + 2, flags + "[npk_t] = " + flag + ";");
  line(ind + 1, "});");
  line(ind + 1, "for (int npk_p = 0; npk_p < npk_np_" + acc + "; ++npk_p) {");
  line(ind + 2, acc + " = " + render_combine(s, acc, parts + "[npk_p]") + ";");
  if (!flag.empty()) line(ind + 2, flag + " |= " + flags + "[npk_p];");
  line(ind + 1, "}");
  line(ind, "}");
}

// Note [summation] (lower_reduce.cpp): a loop of LaneReduce::Pairwise. The tree of NumPy's
// pairwise_sum over the loop's n elements is cut into chunks of at most npk::kPairwiseChunk
// (npk::Pairwise); the body computes a chunk's values into a local array (the accumulator's
// `acc = acc + v` becomes `buf[r - off] = v`), npk::pairwise_sum adds them in NumPy's order,
// and npk::PairwiseStack adds the chunk sums as the tree does. The accumulator then adds the
// total once: NumPy's `io1 = io1 + pairwise_sum(...)`.
// Note [buffered reduction casts] (src/tracer/trace_hooks.cpp): a sum that casts its input
// adds NumPy's pieces of s.pairwise_block elements, each its own pairwise tree, to the
// accumulator in turn; on threads (pairwise_threads), the pieces' sums are computed apart and
// added in order.
void render_pairwise_blocks(std::ostringstream& os, const Stmt& s, const Kernel& k, int ind) {
  const std::string acc = s.lane_acc, T = cpp_local_type(s.dtype), B = std::to_string(s.pairwise_block);
  const std::string n = "npk_bt_" + acc, bk = "npk_bk_" + acc, bn = "npk_bn_" + acc, nt = "npk_nt_" + acc;
  auto line = [&](int i, const std::string& text) { indent(os, i); os << text << "\n"; };
  // The pairwise sum of the piece of `len` elements from `base` (expressions), then use(sum).
  auto tree = [&](int i, const std::string& base, const std::string& len, const std::function<std::string(const std::string&)>& use) {
    const std::string pw = "npk_pw_" + acc, st = "npk_ps_" + acc, buf = "npk_pb_" + acc, ck = "npk_pk_" + acc;
    const std::string off = "npk_po_" + acc, m = "npk_pm_" + acc;
    line(i, "{");
    line(i + 1, "const npk::Pairwise " + pw + "(" + len + ");");
    line(i + 1, "npk::PairwiseStack<" + T + "> " + st + ";");
    line(i + 1, "for (int64_t " + ck + " = 0; " + ck + " < " + pw + ".chunks; ++" + ck + ") {");
    line(i + 2, "int64_t " + off + ", " + m + ";");
    line(i + 2, pw + ".chunk(" + ck + ", " + off + ", " + m + ");");
    line(i + 2, off + " += " + base + ";");
    line(i + 2, "alignas(64) " + T + " " + buf + "[npk::kPairwiseChunk];");
    if (s.simd) line(i + 2, "#pragma omp simd");
    line(i + 2, "for (int64_t " + s.var + " = " + off + "; " + s.var + " < " + off + " + " + m + "; ++" + s.var + ") {");
    for (const Stmt& b : s.body) {
      if (b.k == Stmt::K::Assign && b.var == acc && b.lane.empty()) {
        line(i + 3, buf + "[" + s.var + " - " + off + "] = " + render_val(b.expr.args.at(1)) + ";");
        continue;
      }
      render_stmt(os, b, k, i + 3);
    }
    line(i + 2, "}");
    line(i + 2, st + ".push(" + ck + ", npk::pairwise_sum(" + buf + ", " + m + "));");
    line(i + 1, "}");
    line(i + 1, use(st + ".s[" + pw + ".depth]") + ";");
    line(i, "}");
  };
  auto add_to_acc = [&](const std::string& sum) {
    const std::string t = "npk_pt_" + acc;
    return "const " + T + " " + t + " = " + sum + "; " + acc + " = " +
           render_expr(helper_call(Helper::PlainAdd, s.dtype, s.dtype, {Val::local(acc, s.dtype), Val::local(t, s.dtype)}));
  };
  line(ind, "{");
  line(ind + 1, "const int64_t " + n + " = (" + render_bound(s) + ") - (" + s.lo.str() + ");");
  int body = ind + 1;
  if (s.pairwise_threads) {
    line(ind + 1, "if (const int " + nt + " = npk::threads_for(" + n + ", " + std::to_string(s.par_cost) + "); " + nt +
                      " <= 1 || " + n + " <= " + B + ") {");
    body = ind + 2;
  }
  line(body, "for (int64_t " + bk + " = 0; " + bk + " < " + n + "; " + bk + " += " + B + ") {");
  line(body + 1, "const int64_t " + bn + " = std::min<int64_t>(" + B + ", " + n + " - " + bk + ");");
  tree(body + 1, "(" + s.lo.str() + ") + " + bk, bn, add_to_acc);
  line(body, "}");
  if (s.pairwise_threads) {
    const std::string sums = "npk_pa_" + acc, c0 = "npk_p0_" + acc, cn = "npk_pn_" + acc, c = "npk_pc_" + acc;
    const std::string nb = "npk_pb_n_" + acc, pp = "npk_pp_" + acc;
    line(ind + 1, "} else {");
    line(ind + 2, "npk_fpe |= npk::fpe_take();");
    line(ind + 2, "const int64_t " + nb + " = (" + n + " + " + B + " - 1) / " + B + ";");
    line(ind + 2, "alignas(64) " + T + " " + sums + "[npk::kPairwiseBatch];");
    line(ind + 2, "for (int64_t " + c0 + " = 0; " + c0 + " < " + nb + "; " + c0 + " += npk::kPairwiseBatch) {");
    line(ind + 3, "const int64_t " + cn + " = std::min<int64_t>(npk::kPairwiseBatch, " + nb + " - " + c0 + ");");
    line(ind + 3, T + "* const " + pp + " = " + sums + ";");
    line(ind + 3, "npk_fpe |= npk::parallel_for(" + nt + ", " + cn + ", [=](int64_t " + c + ") NPK_CHUNK {");
    line(ind + 4, "const int64_t " + bk + " = (" + c0 + " + " + c + ") * " + B + ", " + bn + " = std::min<int64_t>(" + B +
                      ", " + n + " - " + bk + ");");
    tree(ind + 4, "(" + s.lo.str() + ") + " + bk, bn, [&](const std::string& sum) { return pp + "[" + c + "] = " + sum; });
    line(ind + 3, "});");
    line(ind + 3, "for (int64_t " + c + " = 0; " + c + " < " + cn + "; ++" + c + ") { " + add_to_acc(sums + "[" + c + "]") + "; }");
    line(ind + 2, "}");
    line(ind + 1, "}");
  }
  line(ind, "}");
}

void render_pairwise(std::ostringstream& os, const Stmt& s, const Kernel& k, int ind) {
  if (s.pairwise_block > 0) {
    render_pairwise_blocks(os, s, k, ind);
    return;
  }
  const std::string acc = s.lane_acc, T = cpp_local_type(s.dtype);
  const std::string pw = "npk_pw_" + acc, st = "npk_ps_" + acc, buf = "npk_pb_" + acc, ck = "npk_pk_" + acc;
  const std::string off = "npk_po_" + acc, len = "npk_pm_" + acc, tot = "npk_pt_" + acc;
  auto line = [&](int i, const std::string& text) { indent(os, i); os << text << "\n"; };
  // The values of chunk `chunk` (an expression) into buf, then the statement use(their sum).
  auto chunk_sum = [&](int i, const std::string& chunk, const std::function<std::string(const std::string&)>& use) {
    line(i, "int64_t " + off + ", " + len + ";");
    line(i, pw + ".chunk(" + chunk + ", " + off + ", " + len + ");");
    line(i, off + " += " + s.lo.str() + ";");
    line(i, "alignas(64) " + T + " " + buf + "[npk::kPairwiseChunk];");
    if (s.simd) line(i, "#pragma omp simd");
    line(i, "for (int64_t " + s.var + " = " + off + "; " + s.var + " < " + off + " + " + len + "; ++" + s.var + ") {");
    for (const Stmt& b : s.body) {
      if (b.k == Stmt::K::Assign && b.var == acc && b.lane.empty()) {
        line(i + 1, buf + "[" + s.var + " - " + off + "] = " + render_val(b.expr.args.at(1)) + ";");
        continue;
      }
      render_stmt(os, b, k, i + 1);
    }
    line(i, "}");
    line(i, use("npk::pairwise_sum(" + buf + ", " + len + ")") + ";");
  };
  line(ind, "{");
  line(ind + 1, "const npk::Pairwise " + pw + "((" + render_bound(s) + ") - (" + s.lo.str() + "));");
  line(ind + 1, "npk::PairwiseStack<" + T + "> " + st + ";");
  int body = ind + 1;
  const std::string nt = "npk_nt_" + acc;
  if (s.pairwise_threads) {
    // Note [parallel pairwise sums] (kir_passes.cpp): the chunk sums of a batch on threads,
    // added in order by this thread; the plain loop when one thread does it.
    line(ind + 1, "if (const int " + nt + " = npk::threads_for((" + render_bound(s) + ") - (" + s.lo.str() + "), " +
                      std::to_string(s.par_cost) + "); " + nt + " <= 1 || " + pw + ".chunks < 2) {");
    body = ind + 2;
  }
  line(body, "for (int64_t " + ck + " = 0; " + ck + " < " + pw + ".chunks; ++" + ck + ") {");
  chunk_sum(body + 1, ck, [&](const std::string& sum) { return st + ".push(" + ck + ", " + sum + ")"; });
  line(body, "}");
  if (s.pairwise_threads) {
    const std::string sums = "npk_pa_" + acc, c0 = "npk_p0_" + acc, cn = "npk_pn_" + acc, c = "npk_pc_" + acc;
    line(ind + 1, "} else {");
    line(ind + 2, "npk_fpe |= npk::fpe_take();");
    line(ind + 2, "alignas(64) " + T + " " + sums + "[npk::kPairwiseBatch];");
    line(ind + 2, "for (int64_t " + c0 + " = 0; " + c0 + " < " + pw + ".chunks; " + c0 + " += npk::kPairwiseBatch) {");
    line(ind + 3, "const int64_t " + cn + " = std::min<int64_t>(npk::kPairwiseBatch, " + pw + ".chunks - " + c0 + ");");
    line(ind + 3, T + "* const npk_pp_" + acc + " = " + sums + ";");
    line(ind + 3, "npk_fpe |= npk::parallel_for(" + nt + ", " + cn + ", [=](int64_t " + c + ") NPK_CHUNK {");
    chunk_sum(ind + 4, c0 + " + " + c, [&](const std::string& sum) { return "npk_pp_" + acc + "[" + c + "] = " + sum; });
    line(ind + 3, "});");
    line(ind + 3, "for (int64_t " + c + " = 0; " + c + " < " + cn + "; ++" + c + ") " + st + ".push(" + c0 + " + " + c +
                      ", " + sums + "[" + c + "]);");
    line(ind + 2, "}");
    line(ind + 1, "}");
  }
  line(ind + 1, "const " + T + " " + tot + " = " + st + ".s[" + pw + ".depth];");
  line(ind + 1, acc + " = " + render_expr(helper_call(Helper::PlainAdd, s.dtype, s.dtype, {Val::local(acc, s.dtype), Val::local(tot, s.dtype)})) + ";");
  line(ind, "}");
}

void render_stmt(std::ostringstream& os, const Stmt& s, const Kernel& k, int ind) {
  switch (s.k) {
    case Stmt::K::Let:
      indent(os, ind);
      os << "const " << cpp_local_type(s.dtype) << " " << s.var << " = " << render_expr(s.expr) << ";\n";
      break;
    case Stmt::K::Decl:
      indent(os, ind);
      if (s.array_len > 0) os << cpp_local_type(s.dtype) << " " << s.var << "[" << s.array_len << "];\n";
      else os << cpp_local_type(s.dtype) << " " << s.var << " = " << render_expr(s.expr) << ";\n";
      break;
    case Stmt::K::Assign:
      indent(os, ind);
      os << s.var << (s.lane.empty() ? "" : "[" + s.lane + "]") << " = " << render_expr(s.expr) << ";\n";
      break;
    case Stmt::K::Store: {
      indent(os, ind);
      DType t = k.bufs.at(s.buf).dtype;
      std::string v = render_val(s.val);
      if (t == DType::Float16) v = "npk::d2h((double)" + v + ")";
      else if (t == DType::Bool) v = "(uint8_t)(" + v + ")";
      os << "p" << s.buf << "[" << s.index.str() << "] = " << v << ";\n";
      break;
    }
    case Stmt::K::For:
      if (!s.par_acc.empty()) {
        render_parallel_sum(os, s, k, ind);
        break;
      }
      if (s.lane_op == LaneReduce::Pairwise) {
        render_pairwise(os, s, k, ind);
        break;
      }
      if (s.parallel) {
        // Note [threads of kernels]: the plain loop when one thread does it.
        Stmt plain = s;
        plain.parallel = false;
        const std::string nt = "npk_nt_" + s.var;
        indent(os, ind);
        os << "if (const int " << nt << " = " << nest_work(s) << "; " << nt << " <= 1) {\n";
        render_stmt(os, plain, k, ind + 1);
        indent(os, ind);
        os << "} else {\n";
        ind += 1;
        // About 64 chunks a loop, handed out in order (Note [thread pool] in
        // src/core/parallel.cpp): a thread that starts late or is descheduled takes fewer.
        // Each iteration writes its own outputs, so results do not depend on the schedule.
        // Note [fp errors in kernels]: the caller's flags are taken first; each chunk clears
        // its thread's flags and npk::parallel_for ORs what the chunks raised into npk_fpe.
        const std::string v = s.var, step = std::to_string(s.step);
        indent(os, ind);
        os << "npk_fpe |= npk::fpe_take();\n";
        indent(os, ind);
        os << "const int64_t npk_lo_" << v << " = " << s.lo.str() << ", npk_hi_" << v << " = " << render_bound(s) << ";\n";
        indent(os, ind);
        os << "const int64_t npk_it_" << v << " = (npk_hi_" << v << " - npk_lo_" << v << " + " << step << " - 1) / " << step
           << ", npk_ck_" << v << " = npk_it_" << v << " / 64 > 1 ? npk_it_" << v << " / 64 : 1;\n";
        indent(os, ind);
        os << "npk_fpe |= npk::parallel_for(" << nt << ", (npk_it_" << v << " + npk_ck_" << v << " - 1) / npk_ck_" << v
           << ", [=](int64_t npk_c_" << v << ") NPK_CHUNK {\n";  // values by copy (npk::parallel_for)
        ind += 1;
        indent(os, ind);
        os << "const int64_t npk_b_" << v << " = npk_lo_" << v << " + npk_c_" << v << " * npk_ck_" << v << " * " << step
           << ", npk_e_" << v << " = std::min<int64_t>(npk_hi_" << v << ", npk_b_" << v << " + npk_ck_" << v << " * " << step
           << ");\n";
        if (s.simd) {
          indent(os, ind);
          os << "#pragma omp simd\n";
        }
        indent(os, ind);
        os << "for (int64_t " << v << " = npk_b_" << v << "; " << v << " < npk_e_" << v << "; "
           << (s.step == 1 ? "++" + v : v + " += " + step) << ") {\n";
        render_block(os, s.body, k, ind + 1);
        indent(os, ind);
        os << "}\n";
        indent(os, ind - 1);
        os << "});\n";
        indent(os, ind - 2);
        os << "}\n";
        break;
      }
      if (s.simd) {
        indent(os, ind);
        os << "#pragma omp simd";
        if (s.lane_op != LaneReduce::None) os << " " << lane_clause(s);
        os << "\n";
      }
      indent(os, ind);
      os << "for (int64_t " << s.var << " = " << s.lo.str() << "; " << s.var << " < " << render_bound(s) << "; "
         << (s.step == 1 ? "++" + s.var : s.var + " += " + std::to_string(s.step)) << ") {\n";
      render_block(os, s.body, k, ind + 1);
      indent(os, ind);
      os << "}\n";
      break;
    case Stmt::K::If:
      indent(os, ind);
      os << "if (" << render_val(s.val) << ") {\n";
      render_block(os, s.body, k, ind + 1);
      indent(os, ind);
      if (!s.orelse.empty()) {
        os << "} else {\n";
        render_block(os, s.orelse, k, ind + 1);
        indent(os, ind);
      }
      os << "}\n";
      break;
    case Stmt::K::Break:
      indent(os, ind);
      os << "break;\n";
      break;
    case Stmt::K::VecApply:
      indent(os, ind);
      os << render_vec_apply(s) << ";\n";
      break;
  }
}

void render_block(std::ostringstream& os, const Block& b, const Kernel& k, int ind) {
  for (auto& s : b) render_stmt(os, s, k, ind);
}

void dump_block(std::ostringstream& os, const Block& b, int ind) {
  for (auto& s : b) {
    indent(os, ind);
    switch (s.k) {
      case Stmt::K::Let: os << "let " << s.var << ": " << name(s.dtype) << " = " << render_expr(s.expr) << "\n"; break;
      case Stmt::K::Decl:
        if (s.array_len > 0) os << "var " << s.var << ": " << name(s.dtype) << "[" << s.array_len << "]\n";
        else os << "var " << s.var << ": " << name(s.dtype) << " = " << render_expr(s.expr) << "\n";
        break;
      case Stmt::K::Assign: os << s.var << (s.lane.empty() ? "" : "[" + s.lane + "]") << " <- " << render_expr(s.expr) << "\n"; break;
      case Stmt::K::Store: os << "store buf" << s.buf << "[" << s.index.str() << "] <- " << render_val(s.val) << "\n"; break;
      case Stmt::K::For:
        os << "for " << s.var << " in [" << s.lo.str() << ", " << render_bound(s) << ")"
           << (s.step == 1 ? "" : " step " + std::to_string(s.step)) << (s.parallel ? " parallel" : "")
           << (s.simd ? " simd" : "") << (s.lane_op == LaneReduce::None ? "" : " " + lane_clause(s))
           << (s.lane_op == LaneReduce::Pairwise ? " pairwise(" + s.lane_acc + ")" : "") << "\n";
        dump_block(os, s.body, ind + 1);
        break;
      case Stmt::K::If:
        os << "if " << render_val(s.val) << "\n";
        dump_block(os, s.body, ind + 1);
        if (!s.orelse.empty()) { indent(os, ind); os << "else\n"; dump_block(os, s.orelse, ind + 1); }
        break;
      case Stmt::K::Break: os << "break\n"; break;
      case Stmt::K::VecApply:
        os << s.var << "[0:" << render_bound(s) << "] <- vector(" << s.vec_bits << (s.vec_via_float64 ? ", via float64" : "")
           << ") " << op_info(s.expr.op).name << "(" << s.expr.args.at(0).text << ")\n";
        break;
    }
  }
}

}  // namespace

std::string Lin::str() const {
  std::string s;
  for (auto& [a, k] : t) {
    if (!s.empty()) s += " + ";
    if (k == 1) s += a;
    else s += "(int64_t)" + std::to_string(k) + "*" + a;
  }
  if (c || s.empty()) {
    if (!s.empty()) s += " + ";
    s += c == INT64_MIN ? "INT64_MIN" : "(int64_t)" + std::to_string(c);
  }
  return t.empty() ? s : "(" + s + ")";
}

std::string cpp_local_type(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8_t";
    case DType::UInt8: return "uint8_t";
    case DType::Int16: return "int16_t";
    case DType::UInt16: return "uint16_t";
    case DType::Int32: return "int32_t";
    case DType::UInt32: return "uint32_t";
    case DType::Int64: return "int64_t";
    case DType::UInt64: return "uint64_t";
    case DType::Float16: return "float";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Complex64: return "npk::c64";
    case DType::Complex128: return "npk::c128";
  }
  return "double";
}

bool cpp_supports(OpId op, DType in) {
  const Rule& r = cpp_table()[static_cast<int>(op)];
  if (r.status != Rule::Status::Pattern) return false;
  return r.kinds.find(kind_letter(in)) != std::string_view::npos;
}

EmitRule cpp_emit_rule(OpId op) {
  op_info(op);  // ValueError for an id outside the op table
  return cpp_table()[static_cast<int>(op)];
}

bool supports(OpId op, DType t) { return cpp_supports(op, t); }

const std::string& cpp_prelude() {
  static const std::string s(kPrelude);
  return s;
}

std::string cpp_prelude_for(const std::vector<std::string>& texts) {
  for (const std::string& t : texts)
    if (t.find("npk::vm::") != std::string::npos) return "#define NPK_VECTOR_MATH 1\n" + cpp_prelude();
  return cpp_prelude();
}

std::string emit_cpp_kernel(const Kernel& k, const std::string& name) {
  std::ostringstream os;
  os << "extern \"C\" int " << name << "(char* const* b, const int64_t* sym, const int64_t* st, const int64_t* kp) {\n";
  os << "  (void)sym; (void)st; (void)kp;\n";
  // Launch parameters as locals (Note [generic kernels]): loop-invariant for the compiler.
  std::vector<char> value_slot(static_cast<size_t>(k.num_params), 0);
  for (const ValueParam& vp : k.value_params) {
    const bool cplx = is_complex(vp.dtype);
    const bool single = vp.dtype == DType::Float32 || vp.dtype == DType::Complex64;
    auto part = [&](int j) {
      value_slot[static_cast<size_t>(j)] = 1;
      return single ? "npk::bits_as<float>((uint32_t)kp[" + std::to_string(j) + "])"
                    : "npk::bits_as<double>(kp[" + std::to_string(j) + "])";
    };
    os << "  const " << cpp_local_type(vp.dtype) << " npk_f" << vp.slot << " = ";
    if (cplx) os << cpp_local_type(vp.dtype) << "{" << part(vp.slot) << ", " << part(vp.slot + 1) << "};\n";
    else os << part(vp.slot) << ";\n";
  }
  for (int j = 0; j < k.num_params; ++j)
    if (!value_slot[static_cast<size_t>(j)]) os << "  const int64_t npk_k" << j << " = kp[" << j << "];\n";
  // Note [fp errors in kernels]: the calling thread's flags are its caller's to clear and read.
  os << "  int npk_fpe = 0;\n";
  for (size_t i = 0; i < k.bufs.size(); ++i) {
    os << "  " << (k.bufs[i].written ? "" : "const ") << mem_type(k.bufs[i].dtype) << "* __restrict p" << i << " = ("
       << (k.bufs[i].written ? "" : "const ") << mem_type(k.bufs[i].dtype) << "*)b[" << i << "];\n";
  }
  render_block(os, k.body, k, 1);
  os << "  return npk_fpe;\n";
  os << "}\n";
  return os.str();
}

std::string dump_kernel(const Kernel& k) {
  std::ostringstream os;
  for (size_t i = 0; i < k.bufs.size(); ++i)
    os << "buf" << i << ": " << name(k.bufs[i].dtype) << (k.bufs[i].written ? " (out)" : "") << "\n";
  dump_block(os, k.body, 0);
  return os.str();
}

}  // namespace npc::fusion
