#pragma once
// The rows of include/npc/ops.def expanded once, as constants: kOpRows[op] is the OpInfo
// that op_info(op) returns. Code that reads a column at compile time (the rule kernels' loop
// lists, the bindings' operator slots) reads it here, and code that needs a row's name as a
// C++ token expands ops.def with a variadic macro (NPC_UFUNC(name, ...)), so a new column is
// a change to ops.def, to OpInfo and to the expansions below (every member named in each, for
// -Wmissing-field-initializers), and to nothing else.
#include <iterator>
#include <string_view>

#include "npc/ops.hpp"

namespace npc::ops {

inline constexpr OpInfo kOpRows[] = {
#define NPC_UFUNC(n, nin_, nout_, id, diff, resolver_, fpe_check_, fpe_, at_, dunders_, vmath_, loops_)          \
  OpInfo{.name = #n, .kind = OpKind::Ufunc, .nin = nin_, .nout = nout_, .identity = Identity::id,                \
         .differentiable = std::string_view(#diff) == "Diff", .loops = loops_, .resolver = Resolver::resolver_, \
         .fpe_check = std::string_view(#fpe_check_) == "Fpe", .fpe = fpe_, .at = at_, .dunders = dunders_,      \
         .vmath = vmath_, .fused = ""},
#define NPC_REDUCE(n, uf, diff, fpe_, fused_)                                                                    \
  OpInfo{.name = #n, .kind = OpKind::Reduce, .nin = 1, .nout = 1, .identity = Identity::None_,                 \
         .differentiable = std::string_view(#diff) == "Diff", .loops = #uf, .resolver = Resolver::Default,       \
         .fpe_check = true, .fpe = fpe_, .at = "", .dunders = "", .vmath = "", .fused = fused_},
#define NPC_PRIM(n, nin_, diff, fpe_)                                                                            \
  OpInfo{.name = #n, .kind = OpKind::Prim, .nin = nin_, .nout = 1, .identity = Identity::None_,                \
         .differentiable = std::string_view(#diff) == "Diff", .loops = "", .resolver = Resolver::Default,        \
         .fpe_check = true, .fpe = fpe_, .at = "", .dunders = "", .vmath = "", .fused = ""},
#include "npc/ops.def"
};
static_assert(std::size(kOpRows) == kNumOps);

/// Row `op` of the table, as a constant (no range check: op_info checks).
constexpr const OpInfo& op_row(OpId op) { return kOpRows[static_cast<int>(op)]; }

}  // namespace npc::ops
