#pragma once
// The tracer's calls into src/ops (the eager kernels and the trace-hook registration).
#include "npc/ops.hpp"

namespace npc::detail {
// Note [ops link]
// The tracer depends on src/ops (DESIGN.md), which is built in parallel. Until every entry
// point below is defined, the tracer references them weakly: with src/ops present they
// are ordinary calls; without, the graph still builds, prints and verifies, and running a
// ufunc/reduce node or installing the hooks raises instead of failing to link.
bool ops_available();
std::vector<ndarray> eager_ufunc(OpId op, std::span<const Operand> in, const UfuncOptions& opts);
ndarray eager_reduce(OpId ufunc, const ndarray& a, const ReduceOptions& opts);
void install_op_hooks(UfuncTraceHook u, ReduceTraceHook r);
}  // namespace npc::detail
