// Floating-point error flags: hardware FE flags and a per-thread pending set.
#include "npc/fperror.hpp"

#include <cfenv>

namespace npc {

namespace {
thread_local int t_pending = 0;
}

void add_fp_flags(int flags) { t_pending |= flags; }

int take_fp_flags() {
  int f = t_pending;
  t_pending = 0;
  return f;
}

int read_and_clear_hw_fp_flags() {
  int hw = std::fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID);
  std::feclearexcept(FE_ALL_EXCEPT);
  int f = 0;
  if (hw & FE_DIVBYZERO) f |= kFpDivide;
  if (hw & FE_OVERFLOW) f |= kFpOverflow;
  if (hw & FE_UNDERFLOW) f |= kFpUnderflow;
  if (hw & FE_INVALID) f |= kFpInvalid;
  return f;
}

void clear_hw_fp_flags() { std::feclearexcept(FE_ALL_EXCEPT); }

}  // namespace npc
