// Comparisons, logical and bitwise ufuncs, predicates, rounding and the floating-point
// bit-level functions: the loops where npc's kernel is not the row's scalar rule (real
// comparisons with C's operators, the exact mixed int64/uint64 comparisons, float16
// nextafter/spacing on the bits), and a third of the rows' rule kernels.
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "ops/loops.hpp"
#include "ops/rules.hpp"

namespace npc::ops {
namespace {

// The element rules are npk::* (include/npc/scalar_rules.hpp, Note [scalar rules]); every
// row's rule is registered for all its loops (Note [rule kernels] in rules.hpp), complex
// ordering included (Note [complex order flags] in the header).

template <class A, class B>
inline constexpr bool int64_uint64 = (std::is_same_v<A, int64_t> && std::is_same_v<B, uint64_t>) ||
                                     (std::is_same_v<A, uint64_t> && std::is_same_v<B, int64_t>);

// a < b for int64 vs uint64 without conversion.
template <class A, class B>
inline int cmp3(A a, B b) {
  if constexpr (std::is_same_v<A, int64_t> && std::is_same_v<B, uint64_t>) {
    if (a < 0) return -1;
    uint64_t ua = static_cast<uint64_t>(a);
    return ua < b ? -1 : ua > b ? 1 : 0;
  } else {
    return -cmp3(b, a);
  }
}

// NumPy 2's exact int64 <-> uint64 comparison loops ("qQ->?", "Qq->?"), which the rows'
// rules (one element type) do not take; and real float comparisons with C's operators
// (comparisons do not check the floating-point status, and these vectorize on baseline
// x86-64, where the rules' quiet compares do not).
#define NPC_CMP(Name, op, ordered)                                                          \
  struct Name {                                                                             \
    static constexpr bool kMixed = true;                                                    \
    template <class A, class B> requires int64_uint64<A, B> bool operator()(A a, B b) const {     \
      return cmp3(a, b) op 0;                                                               \
    }                                                                                       \
    template <class A, class B> requires (ordered && std::is_same_v<A, B> && is_real_float<A>) \
    bool operator()(A a, B b) const { return a op b; }                                      \
  };
NPC_CMP(Equal, ==, false)  // the rule is C's == already
NPC_CMP(NotEqual, !=, false)
NPC_CMP(Less, <, true)
NPC_CMP(LessEqual, <=, true)
NPC_CMP(Greater, >, true)
NPC_CMP(GreaterEqual, >=, true)
#undef NPC_CMP

// ---------------------------------------------------------------- float16 bit-level loops
// npy_half_nextafter / npy_half_spacing work on the binary16 bit patterns.
void half_nextafter_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    store<uint16_t>(p[2] + i * s[2], npk::half_nextafter(load<uint16_t>(p[0] + i * s[0]), load<uint16_t>(p[1] + i * s[1])));
}
void half_spacing_loop(std::byte* const* p, const int64_t* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) store<uint16_t>(p[1] + i * s[1], npk::half_spacing(load<uint16_t>(p[0] + i * s[0])));
}

}  // namespace

template <>
void register_rules<2>(Registrar& r) {
  register_rule_kernels<2>(r);
}

void register_logic(Registrar& r) {
  r.binary<Equal>(OpId::equal);
  r.binary<NotEqual>(OpId::not_equal);
  r.binary<Less>(OpId::less);
  r.binary<LessEqual>(OpId::less_equal);
  r.binary<Greater>(OpId::greater);
  r.binary<GreaterEqual>(OpId::greater_equal);
  r.set(OpId::nextafter, DType::Float16, &half_nextafter_loop);
  r.set(OpId::spacing, DType::Float16, &half_spacing_loop);
}

}  // namespace npc::ops
