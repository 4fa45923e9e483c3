// Kernel IR (src/fusion/kernel_ir.hpp): the verifier catches broken kernels and names the
// pass that broke them (Note [kernel-IR passes]); typed literals and special values are
// rendered by the C++ emitter.
#include <catch2/catch.hpp>

#include <string>

#include "fusion/kernel_ir.hpp"
#include "fusion/lower_internal.hpp"
#include "npc/graph.hpp"
#include "ops/math_simd.hpp"

using namespace npc;
using namespace npc::fusion;

namespace {

Stmt stmt(Stmt::K k) {
  Stmt s;
  s.k = k;
  return s;
}

Expr expr(Expr::K k, DType t) {
  Expr e = value_expr(Val::literal(Scalar::from_int(0), t));
  e.k = k;
  e.args.clear();
  return e;
}

// for (i0 = 0; i0 < 4; ++i0) { v0 = buf0[i0]; v1 = v0 + 1.0; buf1[i0] = v1; }
Kernel small_kernel() {
  Kernel k;
  k.bufs = {KBuffer{DType::Float64, false}, KBuffer{DType::Float64, true}};
  Stmt load = stmt(Stmt::K::Let);
  load.var = "v0";
  load.dtype = DType::Float64;
  load.expr = expr(Expr::K::Load, DType::Float64);
  load.expr.buf = 0;
  load.expr.index = Lin::atom("i0");
  Stmt add = stmt(Stmt::K::Let);
  add.var = "v1";
  add.dtype = DType::Float64;
  add.expr = expr(Expr::K::Apply, DType::Float64);
  add.expr.op = OpId::add;
  add.expr.in = DType::Float64;
  add.expr.args = {Val::local("v0", DType::Float64), Val::literal(Scalar::from_double(1.0), DType::Float64)};
  Stmt store = stmt(Stmt::K::Store);
  store.buf = 1;
  store.index = Lin::atom("i0");
  store.val = Val::local("v1", DType::Float64);
  Stmt loop = stmt(Stmt::K::For);
  loop.var = "i0";
  loop.lo = Lin::constant(0);
  loop.hi = Lin::constant(4);
  loop.body = {load, add, store};
  k.body = {loop};
  return k;
}

// Runs `pass` on the kernel's body as a verified pass named `name`; returns the error text.
std::string failure(const std::string& name, const std::function<void(Block&)>& pass) {
  Kernel k = small_kernel();
  try {
    run_pass(name, k.body, k.bufs, pass, /*verify=*/true);
  } catch (const ir::VerifyError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("kernel IR: a well-formed kernel verifies, before and after parametrise_constants") {
  Kernel k = small_kernel();
  REQUIRE_NOTHROW(verify_kernel(k, "lower"));
  REQUIRE_NOTHROW(run_pass("noop", k.body, k.bufs, [](Block&) {}, true));
  REQUIRE_NOTHROW(run_pass("parametrise_constants", k, [](Kernel& x) { parametrise_constants(x); }, true));
  REQUIRE(k.num_params == 1);  // the loop bound 4
}

TEST_CASE("kernel IR: a pass that breaks the kernel is named by the verifier") {
  // Drops the Let that defines v0: its use is now undefined.
  std::string e = failure("drop_first_let", [](Block& b) { b[0].body.erase(b[0].body.begin()); });
  CHECK(e.find("after pass 'drop_first_let'") != std::string::npos);
  CHECK(e.find("'v0' is used where it is not defined") != std::string::npos);

  // An assignment to an immutable Let.
  e = failure("assign_to_let", [](Block& b) {
    Stmt a = stmt(Stmt::K::Assign);
    a.var = "v0";
    a.expr = value_expr(Val::literal(Scalar::from_int(0), DType::Float64));
    b[0].body.push_back(a);
  });
  CHECK(e.find("after pass 'assign_to_let'") != std::string::npos);
  CHECK(e.find("not a mutable local") != std::string::npos);

  // A store into a buffer the kernel only reads.
  e = failure("store_to_input", [](Block& b) { b[0].body.back().buf = 0; });
  CHECK(e.find("after pass 'store_to_input'") != std::string::npos);
  CHECK(e.find("not marked written") != std::string::npos);

  // A NaN of an integer dtype, and a helper with a missing operand.
  e = failure("integer_nan", [](Block& b) { b[0].body[1].expr.args[1] = Val::of(Special::NaN, DType::Int64); });
  CHECK(e.find("after pass 'integer_nan'") != std::string::npos);
  e = failure("helper_arity", [](Block& b) {
    b[0].body[1].expr = helper_call(Helper::PlainAdd, DType::Float64, DType::Float64, {Val::local("v0", DType::Float64)});
  });
  CHECK(e.find("after pass 'helper_arity'") != std::string::npos);

  // A loop variable that shadows another, and an index atom nobody defines.
  e = failure("shadow", [](Block& b) { b[0].body[0].var = "i0"; });
  CHECK(e.find("defined twice") != std::string::npos);
  e = failure("unknown_atom", [](Block& b) { b[0].body[0].expr.index = Lin::atom("i7"); });
  CHECK(e.find("'i7' is used where it is not defined") != std::string::npos);

  // Unverified, the broken kernel goes through (NPC_VERIFY unset).
  Kernel k = small_kernel();
  REQUIRE_NOTHROW(run_pass("drop_first_let", k.body, k.bufs, [](Block& b) { b[0].body.erase(b[0].body.begin()); }, false));
}

TEST_CASE("kernel IR: literals, special values and helpers are rendered by the C++ emitter") {
  Kernel k = small_kernel();
  Block& body = k.body[0].body;
  Stmt nan = stmt(Stmt::K::Decl);
  nan.var = "acc";
  nan.dtype = DType::Float32;
  nan.expr = value_expr(Val::of(Special::NaN, DType::Float32));
  Stmt low = stmt(Stmt::K::Decl);
  low.var = "lo";
  low.dtype = DType::Int16;
  low.expr = value_expr(Val::of(Special::Lowest, DType::Int16));
  Stmt q = stmt(Stmt::K::Let);
  q.var = "q";
  q.dtype = DType::Bool;
  q.expr = helper_call(Helper::QuietLess, DType::Bool, DType::Float64,
                       {Val::local("v0", DType::Float64), Val::local("v1", DType::Float64)});
  body.insert(body.begin() + 2, {nan, low, q});
  REQUIRE_NOTHROW(verify_kernel(k, "test"));
  const std::string src = emit_cpp_kernel(k, "f");
  CHECK(src.find("float acc = __builtin_nanf(\"\");") != std::string::npos);
  CHECK(src.find("int16_t lo = std::numeric_limits<int16_t>::lowest();") != std::string::npos);
  CHECK(src.find("const bool q = npk::lt_scalar(v0, v1);") != std::string::npos);
  CHECK(src.find("add<double>(v0, 0x1p+0)") != std::string::npos);  // npk::ufunc::add, the row's rule
}

// for (i0 = 0; i0 < 1000; ++i0) { v0 = buf0[i0]; v1 = sin(v0); buf1[i0] = v1 * 2 } in float32.
static Kernel sin_kernel() {
  Kernel k = small_kernel();
  k.bufs = {KBuffer{DType::Float32, false}, KBuffer{DType::Float32, true}};
  Block& b = k.body[0].body;
  b[0].dtype = b[0].expr.dtype = DType::Float32;
  b[1].dtype = DType::Float32;
  b[1].expr.op = OpId::sin;
  b[1].expr.dtype = b[1].expr.in = DType::Float32;
  b[1].expr.args = {Val::local("v0", DType::Float32)};
  Stmt twice = stmt(Stmt::K::Let);
  twice.var = "v2";
  twice.dtype = DType::Float32;
  twice.expr = expr(Expr::K::Apply, DType::Float32);
  twice.expr.op = OpId::multiply;
  twice.expr.in = DType::Float32;
  twice.expr.args = {Val::local("v1", DType::Float32), Val::literal(Scalar::from_double(2.0), DType::Float32)};
  b.insert(b.begin() + 2, twice);
  b.back().val = Val::local("v2", DType::Float32);
  k.body[0].hi = Lin::constant(1000);
  return k;
}

TEST_CASE("kernel IR: vector_math_blocks puts an eager vector routine in a verified VecApply") {
  Kernel k = sin_kernel();
  REQUIRE_NOTHROW(run_pass("vector_math_blocks", k.body, k.bufs, vector_math_blocks, true));
  bool vec = false;
  for (const Stmt& s : k.body.at(0).body) vec = vec || s.k == Stmt::K::VecApply;
  const std::string text = emit_cpp_kernel(k, "f");
  if (ops::simd::vector_math(OpId::sin, DType::Float32).bits == 0) {
    CHECK(!vec);  // eager npc runs the scalar loop: so does the kernel
    return;
  }
  CHECK(vec);
  CHECK(k.body.at(0).step == 256);
  CHECK(text.find("npk::vm::sin_") != std::string::npos);
  REQUIRE_NOTHROW(run_pass("parametrise_constants", k, [](Kernel& x) { parametrise_constants(x); }, true));

  // A VecApply whose operand is a scalar local, and one of an integer dtype, fail verification.
  Kernel bad = sin_kernel();
  run_pass("vector_math_blocks", bad.body, bad.bufs, vector_math_blocks, false);
  std::string e;
  try {
    run_pass("scalar_operand", bad.body, bad.bufs, [](Block& b) {
      for (Stmt& s : b.at(0).body)
        if (s.k == Stmt::K::VecApply) s.expr.args[0] = Val::literal(Scalar::from_double(1.0), DType::Float32);
    }, true);
  } catch (const ir::VerifyError& x) {
    e = x.what();
  }
  CHECK(e.find("after pass 'scalar_operand' at vector apply") != std::string::npos);
  CHECK(e.find("not a local array") != std::string::npos);
}
