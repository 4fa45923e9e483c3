// Floating-point error flags: hardware FE flags and a per-thread pending set.
#include "npc/fperror.hpp"

#include <cfenv>

namespace npc {

namespace {
thread_local int t_pending = 0;
// Named errors of compiled graphs: (FpFlag bit, op name) in the order they were raised.
thread_local std::vector<std::pair<int, std::string>> t_named;
int (*g_raise_reader)() = nullptr;
thread_local int t_raise_kinds = -1;  // -1: read the error state (FpRaiseKindsScope sets it)
}

int fp_raise_kinds() {
  if (t_raise_kinds >= 0) return t_raise_kinds;
  return g_raise_reader ? g_raise_reader() : 0;
}

void set_fp_raise_kinds_reader(int (*reader)()) { g_raise_reader = reader; }

FpRaiseKindsScope::FpRaiseKindsScope(int kinds) : prev_(t_raise_kinds) { t_raise_kinds = kinds; }
FpRaiseKindsScope::~FpRaiseKindsScope() { t_raise_kinds = prev_; }

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
    if (!(flags & bit)) continue;
    bool pending = false;
    for (auto& e : t_named) pending = pending || e.first == bit;
    if (!pending) t_named.emplace_back(bit, where[k]);
  }
}

void add_fp_report(int flags, const std::string& where) {
  for (int k = 0; k < 4; ++k)
    if (flags & (1 << k)) t_named.emplace_back(1 << k, where);
}

std::vector<std::pair<int, std::string>> take_named_fp_flags() {
  std::vector<std::pair<int, std::string>> r;
  r.swap(t_named);
  return r;
}

}  // namespace npc
