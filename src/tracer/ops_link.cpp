// Weak references to src/ops: see Note [ops link] in ops_link.hpp.
#include "tracer/ops_link.hpp"

namespace npc {
[[gnu::weak]] std::vector<ndarray> call_ufunc(OpId op, std::span<const Operand> inputs, const UfuncOptions& opts);
[[gnu::weak]] ndarray reduce(OpId ufunc, const ndarray& a, const ReduceOptions& opts);
[[gnu::weak]] void set_trace_hooks(UfuncTraceHook ufunc_hook, ReduceTraceHook reduce_hook);
}  // namespace npc

namespace npc::detail {
namespace {
template <class F>
bool defined(F* f) {
  return reinterpret_cast<void*>(f) != nullptr;
}
[[noreturn]] void missing() { throw TypeError("npc was built without its eager kernels (src/ops)"); }
}  // namespace

bool ops_available() { return defined(&npc::call_ufunc) && defined(&npc::reduce) && defined(&npc::set_trace_hooks); }

std::vector<ndarray> eager_ufunc(OpId op, std::span<const Operand> in, const UfuncOptions& opts) {
  if (!defined(&npc::call_ufunc)) missing();
  return npc::call_ufunc(op, in, opts);
}

ndarray eager_reduce(OpId ufunc, const ndarray& a, const ReduceOptions& opts) {
  if (!defined(&npc::reduce)) missing();
  return npc::reduce(ufunc, a, opts);
}

void install_op_hooks(UfuncTraceHook u, ReduceTraceHook r) {
  if (defined(&npc::set_trace_hooks)) npc::set_trace_hooks(u, r);
}
}  // namespace npc::detail
