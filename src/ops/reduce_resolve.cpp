// The loop of numpy.ufunc.reduce / accumulate: NumPy's reduce-like type resolution.
#include <optional>
#include <string>

#include "ops/loops.hpp"
#include "ops/reduce_internal.hpp"

namespace npc {
namespace {
// The dtype NumPy reduces in: add/multiply widen small integers and bool to int64/uint64.
DType reduce_dtype(OpId op, DType t, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  if ((op == OpId::add || op == OpId::multiply) && (kind(t) == Kind::Bool || (is_integer(t) && itemsize(t) < 8)))
    return kind(t) == Kind::Unsigned ? DType::UInt64 : DType::Int64;
  return t;
}
}  // namespace

// Note [reduce loop signature]
// NumPy resolves the loop of a reduce or accumulate (reducelike_promote_and_resolve in
// ufunc_object.c, promote_and_get_ufuncimpl in dispatching.cpp) from three operand DTypes:
// (out or None, input, None), with dtype= (or add/multiply's widening of bool and small
// integers when neither keyword is given) fixing the first and the output:
// (dtype, input, dtype). Then:
//  1. a loop whose DTypes equal the given ones is taken as it is (ldexp's "di->d" for an
//     int32 input and out=float64);
//  2. else the ufunc's legacy type resolver runs on the operands (out or input, input) under
//     unsafe casting: the default one searches the loops in order for the first whose inputs
//     take the operands safely (with dtype=: the loops with first input and output `dtype`,
//     then the homogeneous one, whose casts it does not check); the uniform one (gcd, lcm,
//     maximum, minimum, fmax, fmin, add, subtract, multiply) takes the promoted dtype for
//     every operand, and a loop of those dtypes must exist (else NumPy's no-loop error,
//     naming the DTypes of step 1: "(None, BoolDType) -> None"). Their own errors are
//     NumPy's TypeErrors ("not supported for the input types", "No loop matching ...");
//  3. a loop whose first input is not its output (a comparison's) is retried with the first
//     DType fixed to the output's;
//  4. the first input and the output must be one dtype (and for accumulate, the second
//     input too): else NumPy's "the resolved dtypes are not compatible with ldexp.accumulate".
// So ldexp.reduce(int8) runs "ei->e": the float16 accumulator takes each int8 as an int32
// exponent (Note [mixed reduce loops]).
// Logical reductions run in bool whatever the resolved loop's inputs are (their promoter
// casts every input to bool). A comparison's loops give bool from other inputs, so only a
// bool input (or dtype=) has a loop whose first input is its output: others raise NumPy's
// TypeError (with out=, its no-loop error naming a bool first operand, as NumPy's
// comparison promoter reports it).
namespace {
enum class LegacyResolver { Default, Uniform, TrueDivision };

LegacyResolver legacy_resolver_of(OpId op) {
  if (has_uniform_type_resolver(op)) return LegacyResolver::Uniform;
  return op_info(op).resolver == Resolver::TrueDivide ? LegacyResolver::TrueDivision : LegacyResolver::Default;
}

[[noreturn]] void reduce_no_loop(OpId op, std::optional<DType> first, DType in, std::optional<DType> outd) {
  throw UfuncNoLoopError(std::vector<std::optional<DType>>{first, in, outd}, op);
}

std::string dtype_repr(DType t) { return "dtype('" + std::string(name(t)) + "')"; }

// One resolution (steps 1-3 of Note [reduce loop signature]) for fixed first DType `sig0`
// (also the output's when `sig_out`) and a first operand of dtype `op0`.
const ops::Loop& find_reduce_loop(OpId op, DType op0, DType in, std::optional<DType> sig0, bool sig_out,
                                  std::optional<DType> first_dt) {
  const auto& loops = ops::loops_of(op);
  const std::string nm(op_info(op).name);
  // 1. The loop with exactly these DTypes.
  if (first_dt) {
    for (const auto& l : loops)
      if (l.in[0] == *first_dt && l.in[1] == in && (!sig_out || l.out[0] == *sig0)) return l;
  }
  // 2. The legacy type resolver.
  const LegacyResolver kindr = legacy_resolver_of(op);
  auto exact = [&](DType a, DType b, DType c) -> const ops::Loop& {
    for (const auto& l : loops)
      if (l.in[0] == a && l.in[1] == b && l.out[0] == c) return l;
    reduce_no_loop(op, first_dt, in, sig_out ? sig0 : std::nullopt);
  };
  auto typed = [&](DType s0, bool with_out) -> const ops::Loop* {
    // type_tuple_type_resolver: the given types must match, the others take the operands
    // safely (the input's, second); then every unset type replaced by the output's.
    for (const auto& l : loops)
      if (l.in[0] == s0 && (!with_out || l.out[0] == s0) && can_cast(in, l.in[1], Casting::Safe)) return &l;
    if (with_out)
      for (const auto& l : loops)
        if (l.in[0] == s0 && l.in[1] == s0 && l.out[0] == s0) return &l;
    throw TypeError("No loop matching the specified signature and casting was found for ufunc " + nm);
  };
  if (kindr == LegacyResolver::Uniform) {
    DType r;
    if (sig0 && sig_out) {
      r = *sig0;
    } else if (sig0) {
      return *typed(*sig0, false);  // a fixed first input only: the default resolver
    } else {
      DType two[2] = {op0, in};
      r = result_type(std::span<const DType>(two, 2));
    }
    if (op == OpId::subtract && r == DType::Bool)
      throw TypeError("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` "
                      "operator, or the logical_xor function instead.");
    return exact(r, r, r);
  }
  if (sig0) return *typed(*sig0, sig_out);
  if (kindr == LegacyResolver::TrueDivision && (is_integer(op0) || op0 == DType::Bool) &&
      (is_integer(in) || in == DType::Bool))
    return exact(DType::Float64, DType::Float64, DType::Float64);
  for (const auto& l : loops)
    if (can_cast(op0, l.in[0], Casting::Safe) && can_cast(in, l.in[1], Casting::Safe)) return l;
  throw TypeError("ufunc '" + nm + "' not supported for the input types, and the inputs could not be safely "
                  "coerced to any supported types according to the casting rule ''safe''");
}
}  // namespace

void check_reducelike(OpId op, const char* method) {
  if (op_info(op).nin != 2) throw ValueError(std::string(method) + " only supported for binary functions");
  if (op_info(op).nout != 1)
    throw ValueError(std::string(method) + " only supported for functions returning a single value");
}

ReduceLoop reduce_loop(OpId op_in, DType in, std::optional<DType> dtype, std::optional<DType> out, bool accumulate) {
  const OpId op = ufunc_of(op_in);
  check_reducelike(op, accumulate ? "accumulate" : "reduce");
  const bool logical = is_logical_binary(op);
  if (!dtype && is_comparison_op(op) && in != DType::Bool) {
    if (out) throw UfuncNoLoopError(op, {DType::Bool, in});
    throw TypeError("No loop matching the specified signature and casting was found for ufunc " +
                    std::string(op_info(op).name));
  }
  if (logical || is_comparison_op(op)) {
    // Their promoters (logical: every input to bool) and bool outputs: the loop's own dtypes.
    DType t;
    if (dtype) {
      DType sig[2] = {*dtype, *dtype};
      t = resolve_loop(op, sig, {}, dtype).out[0];
    } else if (out) {
      DType sig[2] = {*out, in};
      t = resolve_loop(op, sig, {}, std::nullopt).out[0];
    } else {
      DType sig[2] = {in, in};
      t = resolve_loop(op, sig, {}, std::nullopt).out[0];
    }
    if (logical) t = DType::Bool;
    return {t, t};
  }
  std::optional<DType> sig0 = dtype;
  if (!dtype && !out) {
    const DType w = reduce_dtype(op, in, std::nullopt);
    if (w != in) sig0 = w;
  }
  const DType op0 = out ? *out : in;
  std::optional<DType> first_dt = sig0 ? sig0 : out;
  const ops::Loop* l = &find_reduce_loop(op, op0, in, sig0, sig0.has_value(), first_dt);
  if (!sig0 && l->in[0] != l->out[0]) {  // 3. not reduce-compatible: fix the first DType
    sig0 = l->out[0];
    l = &find_reduce_loop(op, op0, in, sig0, false, sig0);
    if (l->in[0] != *sig0) reduce_no_loop(op, sig0, in, std::nullopt);
  }
  // 4. NumPy's check of the resolved descriptors.
  if (l->in[0] != l->out[0] || (accumulate && l->in[1] != l->in[0]))
    throw TypeError("the resolved dtypes are not compatible with " + std::string(op_info(op).name) +
                    (accumulate ? ".accumulate" : ".reduce") + ". Resolved (" + dtype_repr(l->in[0]) + ", " +
                    dtype_repr(l->in[1]) + ", " + dtype_repr(l->out[0]) + ")");
  return {l->out[0], l->in[1]};
}

DType reduce_loop_dtype(OpId op, DType in, std::optional<DType> dtype, std::optional<DType> out) {
  return reduce_loop(op, in, dtype, out, false).acc;
}

}  // namespace npc
