#pragma once
/// \file fperror.hpp
/// Floating-point error flags raised by kernels, reported the way numpy.errstate says
/// (the Python layer turns them into NumPy's RuntimeWarning / FloatingPointError).

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace npc {

/// NumPy's four floating-point error kinds, as bits.
enum FpFlag : int { kFpDivide = 1, kFpOverflow = 2, kFpUnderflow = 4, kFpInvalid = 8 };

/// Adds flags to this thread's pending set (kernels running on worker threads pass their
/// flags back to the calling thread and add them there).
void add_fp_flags(int flags);
/// Returns and clears this thread's pending flags.
int take_fp_flags();
/// Reads the hardware floating-point exception flags as FpFlag bits and clears them.
int read_and_clear_hw_fp_flags();
/// Clears the hardware floating-point exception flags (before a kernel runs).
void clear_hw_fp_flags();

/// Records errors raised by a compiled graph on this thread: each bit of `flags` (FpFlag)
/// with the name NumPy's message gives for it, `where[k]` for bit 1 << k (divide, overflow,
/// underflow, invalid). A kind already pending keeps its first name.
void add_named_fp_flags(int flags, const std::string (&where)[4]);
/// Records that op `where` raised the kinds `flags` (FpFlag bits; reported lowest bit
/// first), after the errors already pending: NumPy reports each op that raised, in order.
void add_fp_report(int flags, const std::string& where);
/// Returns and clears this thread's named errors as (FpFlag bit, name) pairs, in the order
/// they were recorded.
std::vector<std::pair<int, std::string>> take_named_fp_flags();

/// The kinds (FpFlag bits) that the error state in effect on this thread raises
/// (numpy.errstate's "raise"), read through the hook the Python layer installs; 0 without
/// one. Called where a compiled graph raised an error, to find where NumPy would stop (Note
/// [writes before a raising operation] in src/fusion/backend.cpp), not on every run.
int fp_raise_kinds();
/// Installs the reader of fp_raise_kinds().
void set_fp_raise_kinds_reader(int (*reader)());
/// Within its scope, fp_raise_kinds() on this thread answers `kinds` (a segment that runs on
/// a thread of its own answers for the error state of the thread that started it).
class FpRaiseKindsScope {
 public:
  explicit FpRaiseKindsScope(int kinds);
  ~FpRaiseKindsScope();
  FpRaiseKindsScope(const FpRaiseKindsScope&) = delete;
  FpRaiseKindsScope& operator=(const FpRaiseKindsScope&) = delete;

 private:
  int prev_;
};

/// Thrown by a compiled graph that stopped at the first operation whose floating-point error
/// the error state raises (Note [writes before a raising operation] in src/fusion/backend.cpp):
/// the errors up to that operation are pending (take_named_fp_flags), and the arrays the graph
/// writes hold what they held just before it. The caller reports the errors, which raises.
struct FpStop : std::runtime_error {
  FpStop() : std::runtime_error("npc: a compiled graph stopped at a floating-point error the error state raises") {}
};

}  // namespace npc
