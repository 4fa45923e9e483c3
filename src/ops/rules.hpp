#pragma once
// Internal: NumPy's element rules (include/npc/scalar_rules.hpp, Note [scalar rules]) as the
// eager kernel files use them: FP errors go to the hardware flags, and std::complex values
// pass to and from the rules' npk::cplx. Only the kernel files include it, so editing a rule
// rebuilds them and the fused prelude, nothing else.
#include <cfenv>
#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "ops/loops.hpp"
#include "ops/op_rows.hpp"

namespace npc::ops {
/// Raises npc's FpFlag bits (1 divide, 2 overflow, 4 underflow, 8 invalid) as hardware flags:
/// the scalar rules' NPK_RAISE_FP hook in eager kernels.
inline void raise_fp(int bits) {
  if (bits & 1) raise_divbyzero();
  if (bits & 2) raise_overflow();
  if (bits & 4) std::feraiseexcept(FE_UNDERFLOW);
  if (bits & 8) raise_invalid();
}
}  // namespace npc::ops

#define NPK_RAISE_FP(bits) ::npc::ops::raise_fp(bits)
// Every product of the complex formulas rounded on its own, as in the fused kernels'
// prelude: the loops' AVX2 and AVX-512 versions (Note [multiversioned loops]) are compiled
// with FMA, and GCC's SLP vectorizer fuses the `x + y * rat`, `y - x * rat` pair of a complex
// quotient into vfmaddsub whatever -ffp-contract says (in the scalar tail of a contiguous
// loop: a / a gave an imaginary part of 2.6e-17 where NumPy's Smith division gives 0).
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define NPK_KEEP_ROUNDED(x) asm("" : "+x"(x))
#define NPK_KEEP_EVALUATED(x) asm volatile("" : "+x"(x))
#endif
#include "npc/scalar_rules.hpp"

namespace npc::ops {
/// An element as the scalar rules take it (std::complex becomes npk::cplx, same layout).
template <class T>
inline auto to_rule(T v) {
  if constexpr (is_cplx<T>) return npk::cplx<typename T::value_type>{v.real(), v.imag()};
  else return v;
}
/// A scalar rule's result as the loops store it (npk::cplx becomes std::complex, npk::two a
/// std::pair).
template <class T>
inline auto from_rule(T v) {
  if constexpr (npk::is_cplx<T>) return std::complex<decltype(v.re)>(v.re, v.im);
  else if constexpr (npk::is_two<T>) return std::pair(from_rule(v.first), from_rule(v.second));
  else return v;
}

// Note [rule kernels]
// Every ufunc row of ops.def gets its eager kernels from its entry point in the scalar header,
// npk::ufunc::<name> (Note [ufunc entry points]): Rule<OpId::name> is the functor that calls
// it (std::complex in and out as npk::cplx, npk::two out as std::pair), and
// register_rule_kernels instantiates it for every loop of the row, through the same loop
// templates as any functor. The kernel files then register what differs from the rule (NumPy's
// SIMD loops picked by stride, libmvec loops, float16 bit-level loops, comparisons' mixed
// int64/uint64 loops) over it: a registration replaces the kernels of the loops it covers.
// Each kernel file instantiates the rows whose index is its part modulo kRuleParts, so the
// kernels of all rows are compiled in parallel, and a new row needs no edit here.
namespace {
/// The ops.def loop characters of an element type as the loops compute it (float16 loops
/// compute in float).
template <class T>
constexpr std::string_view loop_chars() {
  if constexpr (std::is_same_v<T, bool>) return "?";
  else if constexpr (std::is_same_v<T, int8_t>) return "b";
  else if constexpr (std::is_same_v<T, uint8_t>) return "B";
  else if constexpr (std::is_same_v<T, int16_t>) return "h";
  else if constexpr (std::is_same_v<T, uint16_t>) return "H";
  else if constexpr (std::is_same_v<T, int32_t>) return "i";
  else if constexpr (std::is_same_v<T, uint32_t>) return "I";
  else if constexpr (std::is_same_v<T, int64_t>) return "lq";
  else if constexpr (std::is_same_v<T, uint64_t>) return "LQ";
  else if constexpr (std::is_same_v<T, float>) return "ef";
  else if constexpr (std::is_same_v<T, double>) return "d";
  else if constexpr (std::is_same_v<T, std::complex<float>>) return "F";
  else if constexpr (std::is_same_v<T, std::complex<double>>) return "D";
  else return "";
}

/// Whether a row's loops ("ff->f dd->d ...") have one whose inputs are `A...`: a rule is
/// instantiated for those element types only.
template <class... A>
constexpr bool has_loop(std::string_view loops) {
  constexpr std::string_view chars[] = {loop_chars<A>()...};
  size_t pos = 0;
  while (pos < loops.size()) {
    size_t end = loops.find(' ', pos);
    if (end == std::string_view::npos) end = loops.size();
    const std::string_view sig = loops.substr(pos, end - pos);
    pos = end + 1;
    if (sig.find("->") != sizeof...(A)) continue;
    bool ok = true;
    for (size_t k = 0; k < sizeof...(A); ++k) ok = ok && chars[k].find(sig[k]) != std::string_view::npos;
    if (ok) return true;
  }
  return false;
}

template <OpId op> struct Rule;
/// Rows whose float32 rule is vector code (no call, no branch): their contiguous float32 loops
/// are multiversioned (Note [multiversioned loops] in loops.hpp).
constexpr bool vector_rule(OpId op) { return op == OpId::exp; }  // Note [float32 exp]
/// Rows whose float32/float64 rule is one correctly rounded IEEE operation (or an exact sign
/// or comparison operation) on operands of the same type, and exact on integers: their contiguous loops are multiversioned too
/// (Note [wide arithmetic] in loops.hpp).
constexpr bool wide_arith(OpId op) {
  return op == OpId::add || op == OpId::subtract || op == OpId::multiply || op == OpId::divide ||
         op == OpId::maximum || op == OpId::minimum || op == OpId::square || op == OpId::negative ||
         op == OpId::absolute || op == OpId::sqrt;
}
#define NPC_UFUNC(name, ...)                                                              \
  template <> struct Rule<OpId::name> {                                                    \
    static constexpr bool kMixed = true; /* ldexp's (float, int) loops */                  \
    static constexpr bool kVectorRule = vector_rule(OpId::name);                           \
    static constexpr bool kWideArith = wide_arith(OpId::name);                             \
    static constexpr bool kComplexProduct = OpId::name == OpId::multiply;                  \
    template <class... A> requires (has_loop<A...>(op_row(OpId::name).loops))              \
    auto operator()(A... a) const { return from_rule(npk::ufunc::name(to_rule(a)...)); }   \
  };
#include "npc/ops.def"

constexpr int kRuleParts = 3;  // src/ops/kernels_{arith,math,logic}.cpp

template <int Part, OpId op, int nin>
void register_rule_kernel(Registrar& r) {
  if constexpr (static_cast<int>(op) % kRuleParts == Part) r.rule<Rule<op>, nin>(op);
}

/// Registers Rule<op> for the loops of every ufunc row whose index is Part modulo kRuleParts.
template <int Part>
void register_rule_kernels(Registrar& r) {
#define NPC_UFUNC(name, nin, ...) register_rule_kernel<Part, OpId::name, nin>(r);
#include "npc/ops.def"
}
}  // namespace
}  // namespace npc::ops
