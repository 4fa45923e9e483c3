// Floating-point error flags: hardware FE flags and a per-thread pending set.
#include "npc/fperror.hpp"

#include <cfenv>

namespace npc {

namespace {
thread_local int t_pending = 0;
thread_local int t_named = 0;
thread_local std::string t_where[4];
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

void add_named_fp_flags(int flags, const std::string (&where)[4]) {
  for (int k = 0; k < 4; ++k) {
    int bit = 1 << k;
    if ((flags & bit) && !(t_named & bit)) {
      t_named |= bit;
      t_where[k] = where[k];
    }
  }
}

std::vector<std::pair<int, std::string>> take_named_fp_flags() {
  std::vector<std::pair<int, std::string>> r;
  for (int k = 0; k < 4; ++k)
    if (t_named & (1 << k)) r.emplace_back(1 << k, std::move(t_where[k]));
  t_named = 0;
  return r;
}

}  // namespace npc
