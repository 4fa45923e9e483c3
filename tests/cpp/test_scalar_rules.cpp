// include/npc/scalar_rules.hpp on its own, with this file's NPK_RAISE_FP hook (as a GPU target
// would supply one) while npc_core's kernels use theirs: the rules have internal linkage, so
// both coexist in one program (Note [scalar rules]).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

namespace {
int g_raised = 0;
}
#define NPK_RAISE_FP(bits) (g_raised |= (bits))
#include "npc/scalar_rules.hpp"

TEST_CASE("scalar rules: integer division reports NumPy's flags through NPK_RAISE_FP") {
  g_raised = 0;
  CHECK(npk::floordiv<int32_t>(7, 0) == 0);
  CHECK(g_raised == 1);  // divide
  g_raised = 0;
  CHECK(npk::floordiv<int8_t>(-128, -1) == -128);
  CHECK(g_raised == 2);  // overflow
  g_raised = 0;
  CHECK(npk::floordiv<int16_t>(-7, 2) == -4);
  CHECK(npk::rem<int16_t>(-7, 2) == 1);
  CHECK(npk::fmodv<int16_t>(-7, 2) == -1);
  CHECK(npk::rem<int64_t>(INT64_MIN, -1) == 0);
  CHECK(g_raised == 0);
  int64_t mod = 5;
  CHECK(npk::divmodv<int64_t>(-7, 0, &mod) == 0);
  CHECK(mod == 0);
  CHECK(g_raised == 1);
}

TEST_CASE("scalar rules: float16 rounding raises overflow and underflow") {
  g_raised = 0;
  CHECK(npk::d2h(70000.0) == 0x7c00u);
  CHECK(g_raised == 2);
  g_raised = 0;
  CHECK(npk::d2h(1e-10) == 0);
  CHECK(g_raised == 4);
  g_raised = 0;
  CHECK(npk::h2f(npk::d2h(1.5)) == 1.5f);
  CHECK(g_raised == 0);
}

TEST_CASE("scalar rules: complex power and float floor division") {
  g_raised = 0;
  npk::c128 r = npk::cpowv(npk::c128{0, 0}, npk::c128{-1, 0});
  CHECK(std::isnan(r.re));
  CHECK(g_raised == 8);  // invalid
  npk::c128 p = npk::cpowv(npk::c128{1, 1}, npk::c128{2, 0});
  CHECK(p.re == 0);
  CHECK(p.im == 2);
  double m = 0;
  CHECK(npk::fdivmod(-7.0, 2.0, &m) == -4.0);
  CHECK(m == 1.0);
  CHECK(std::signbit(npk::rem(-0.0, 3.0)) == false);  // the sign of the divisor
  CHECK(std::signbit(npk::floordiv(-0.0, 3.0)));
}
