// Kernel-IR pass vector_math_blocks: transcendental ufuncs of fused kernels on the eager
// loops' vector routines.
//
// Note [vector math in kernels]
// Eager npc computes most float32 transcendentals (and float64 tanh, arcsinh, arccosh,
// arctanh, cbrt) with glibc's libmvec routines, a block of elements at a time (Note [vector
// math], Note [vector math policy] in src/ops/math_simd.cpp). A fused kernel that called the
// scalar C function per element would be slower than those separate eager loops, and its
// results would differ from eager ones by an ULP or so where the routines differ. So, where
// eager npc uses a vector routine for an op and dtype (ops::simd::vector_math, which reads the
// same policy and CPU check as the eager registration, once per process), the innermost main
// loop of an elementwise nest (a body of Lets and Stores only: no control flow, no
// reduction, no index computed from a local) is strip-mined into blocks of kBlock elements
// (the block loop takes the main loop's place, parallel if it was):
//
//   for b in [lo, hi) step kBlock:                    (parallel if the main loop was)
//     for l in [0, min(kBlock, hi - b)) simd:  i = b + l; straight-line code before the op
//     VecApply y[0:n] = sin(x[0:n])               (npk::vm::sin_e(x, y, n) in C++)
//     for l in [0, min(kBlock, hi - b)) simd:  i = b + l; the code after it, reading y[l]
//
// Locals used across such a boundary become local arrays of kBlock elements (typed IR:
// `Decl` with `array_len`, values and assignments with a `lane`, as in Note [lane blocks]);
// the others stay scalars of their lane loop. The VecApply statement names the op, its
// dtype and the routine (register width, float32 through float64); the renderer calls the
// prelude's entry point for it, which is the eager loops' own block function
// (src/ops/vector_math_block.hpp, embedded into the prelude): the same libmvec routine on
// the same lanes, the same scalar redo of special lanes (NaN, inf, zero, subnormal or tiny
// inputs, results that are not ordinary numbers) with the C library's function, and the
// vector routine's own floating-point flags discarded (MXCSR saved and restored on the
// calling thread). So every element is bit for bit the eager result, NaN and inf give
// NumPy's special values, and the flags a kernel reports are the scalar functions' (those
// of NumPy's loops). Every element still sees the same operations in the same order.
// Applied only where eager npc is vectorised (NPC_VECTOR_MATH=0 leaves every kernel as it
// was; NPC_VECTOR_MATH=all vectorises the kernels as it does the eager loops), only when the
// operand is a local of the loop body (an op of a loop-invariant value stays scalar), and
// with at most kMaxArrays local arrays (they live on each thread's stack). A translation
// unit that calls no vector routine does not compile the block code (cpp_prelude_for).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fusion/lower_internal.hpp"
#include "ops/math_simd.hpp"

namespace npc::fusion {
namespace {

constexpr int64_t kBlock = 256;
constexpr size_t kMaxArrays = 128;

bool names_any(const Lin& l, const std::set<std::string>& names) {
  for (auto& [atom, k] : l.t) {
    size_t s = 0;
    while (s <= atom.size()) {
      size_t e = atom.find('*', s);
      if (e == std::string::npos) e = atom.size();
      if (names.count(atom.substr(s, e - s))) return true;
      s = e + 1;
    }
  }
  return false;
}

// The eager routine for the Let `s`, when it is a unary float op on a local of the loop body
// that eager npc computes with a vector routine (bits == 0 otherwise).
ops::simd::VectorMath routine(const Stmt& s, const std::set<std::string>& body_lets) {
  if (s.k != Stmt::K::Let || s.expr.k != Expr::K::Apply) return {};
  const Expr& e = s.expr;
  if (e.dtype != e.in || (e.in != DType::Float32 && e.in != DType::Float64) || s.dtype != e.dtype) return {};
  const OpInfo& row = op_info(e.op);
  if (row.nin != 1 || row.nout != 1 || e.args.size() != 1) return {};
  const Val& a = e.args[0];
  if (a.k != Val::K::Local || !a.lane.empty() || !body_lets.count(a.text)) return {};
  if (*ops::simd::vector_math_name(e.op) == '\0') return {};
  return ops::simd::vector_math(e.op, e.in);
}

}  // namespace

void vector_math_blocks(Block& top) {
  // The innermost loop of the main nest (as schedule() finds it).
  Stmt* main = nullptr;
  Block* b = &top;
  while (!b->empty() && b->back().k == Stmt::K::For && b->back().var[0] == 'i') {
    main = &b->back();
    b = &main->body;
  }
  if (!main || main->step != 1 || main->capped || !main->par_acc.empty() || !main->red_acc.empty() ||
      main->lane_op != LaneReduce::None)
    return;
  std::set<std::string> lets;
  for (const Stmt& s : main->body) {
    if (s.scalar_only || (s.k != Stmt::K::Let && s.k != Stmt::K::Store)) return;
    if (s.k == Stmt::K::Let) lets.insert(s.var);
  }
  for (const Stmt& s : main->body)
    if (names_any(s.index, lets) || names_any(s.expr.index, lets)) return;

  // Segments: runs of statements between vector applies; a local read in another segment
  // than its own (or by a vector apply, or written by one) becomes a local array.
  const Block& body = main->body;
  std::vector<ops::simd::VectorMath> vm(body.size());
  std::map<std::string, int> seg_of;
  std::set<std::string> arrays;
  int seg = 0;
  bool any = false;
  for (size_t j = 0; j < body.size(); ++j) {
    const Stmt& s = body[j];
    vm[j] = routine(s, lets);
    if (vm[j].bits) {
      any = true;
      arrays.insert(s.expr.args[0].text);
      arrays.insert(s.var);
      seg_of[s.var] = ++seg;
      ++seg;
      continue;
    }
    auto read = [&](const Val& v) {
      if (v.k == Val::K::Local && lets.count(v.text) && seg_of.at(v.text) != seg) arrays.insert(v.text);
    };
    for (const Val& a : s.expr.args) read(a);
    if (s.k == Stmt::K::Store) read(s.val);
    else seg_of[s.var] = seg;
  }
  // Local arrays live on each thread's stack: at most kMaxArrays of them (256 KiB of float64).
  if (!any || arrays.size() > kMaxArrays) return;

  const std::string blk = "npk_vb", lane = "npk_vl";
  const Lin left = main->hi + Lin::atom(blk, -1);  // elements from the block's start to the end
  Block out;
  for (const Stmt& s : body)
    if (s.k == Stmt::K::Let && arrays.count(s.var)) {
      Stmt d{Stmt::K::Decl};
      d.var = s.var;
      d.dtype = s.dtype;
      d.array_len = kBlock;
      out.push_back(std::move(d));
    }
  Block run;
  auto flush = [&]() {
    if (run.empty()) return;
    Stmt f{Stmt::K::For};
    f.var = lane;
    f.lo = Lin::constant(0);
    f.hi = Lin::constant(kBlock);
    f.capped = true;
    f.cap = left;
    f.simd = main->simd;
    Stmt idx{Stmt::K::Let};
    idx.var = main->var;
    idx.dtype = DType::Int64;
    idx.expr.k = Expr::K::Index;
    idx.expr.dtype = DType::Int64;
    idx.expr.index = Lin::atom(blk) + Lin::atom(lane);
    f.body.push_back(std::move(idx));
    for (auto& s : run) f.body.push_back(std::move(s));
    run.clear();
    out.push_back(std::move(f));
  };
  auto lane_val = [&](Val& v) {
    if (v.k == Val::K::Local && arrays.count(v.text)) v.lane = lane;
  };
  for (size_t j = 0; j < body.size(); ++j) {
    const Stmt& s = body[j];
    if (vm[j].bits) {
      flush();
      Stmt v{Stmt::K::VecApply};
      v.var = s.var;
      v.dtype = s.dtype;
      v.expr = s.expr;
      v.hi = Lin::constant(kBlock);
      v.capped = true;
      v.cap = left;
      v.vec_bits = vm[j].bits;
      v.vec_via_float64 = vm[j].via_float64;
      out.push_back(std::move(v));
      continue;
    }
    Stmt t = s;
    for (Val& a : t.expr.args) lane_val(a);
    lane_val(t.val);
    if (t.k == Stmt::K::Let && arrays.count(t.var)) {
      t.k = Stmt::K::Assign;
      t.lane = lane;
    }
    run.push_back(std::move(t));
  }
  flush();
  Stmt blocks{Stmt::K::For};
  blocks.var = blk;
  blocks.lo = main->lo;
  blocks.hi = main->hi;
  blocks.step = kBlock;
  blocks.parallel = main->parallel;
  blocks.par_cost = main->par_cost;  // the work of an element, for npk::threads_for
  blocks.par_memory_bound = main->par_memory_bound;
  blocks.body = std::move(out);
  *main = std::move(blocks);
}

}  // namespace npc::fusion
