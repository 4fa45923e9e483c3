// Kernel-IR passes after lowering, each run by name and verified under NPC_VERIFY=1
// (Note [kernel-IR passes] in kir_verify.cpp): unrolling and hoisting (Note [small
// reductions]), reuse of reduced values, loop coalescing, the schedule and split reductions
// (Note [parallel scalar reductions]).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fusion/lower_internal.hpp"
#include "ops/exec.hpp"

namespace npc::fusion {

namespace {

void visit_lins(Block& b, const std::function<void(Lin&)>& f) {
  for (auto& s : b) {
    f(s.index);
    f(s.expr.index);
    f(s.lo);
    f(s.hi);
    f(s.cap);
    visit_lins(s.body, f);
    visit_lins(s.orelse, f);
  }
}

bool uses_var_outside_offsets(const Block& b, const std::string& v) {
  for (auto& s : b) {
    if ((s.expr.k == Expr::K::Index || s.expr.k == Expr::K::InRange || s.expr.k == Expr::K::Call) &&
        s.expr.index.t.count(v))
      return true;
    for (auto& a : s.expr.args) if (a.is_local() && a.text == v) return true;
    if ((s.k == Stmt::K::If || s.k == Stmt::K::Store) && s.val.is_local() && s.val.text == v) return true;
    if (uses_var_outside_offsets(s.body, v) || uses_var_outside_offsets(s.orelse, v)) return true;
  }
  return false;
}

}  // namespace

// Note [coalescing]: merges main-nest loops d and d+1 when every index uses them as one
// linear variable (coef(i_d) == coef(i_{d+1}) * n_{d+1}) and nothing sits between them.
void coalesce(Block& top) {
  for (;;) {
    // Find the chain of perfectly nested main loops.
    std::vector<Stmt*> chain;
    Block* b = &top;
    while (!b->empty() && b->back().k == Stmt::K::For && b->back().var[0] == 'i') {
      chain.push_back(&b->back());
      b = &b->back().body;
    }
    bool merged = false;
    for (size_t d = 0; d + 1 < chain.size(); ++d) {
      Stmt* o = chain[d];
      Stmt* in = chain[d + 1];
      if (o->body.size() != 1) continue;
      if (!o->hi.is_const() || !in->hi.is_const()) continue;
      int64_t n1 = in->hi.c;
      const std::string &vo = o->var, &vi = in->var;
      bool ok = !uses_var_outside_offsets(in->body, vo) && !uses_var_outside_offsets(in->body, vi);
      visit_lins(in->body, [&](Lin& l) {
        int64_t co = 0, ci = 0;
        for (auto& [a, k] : l.t) {
          if (a == vo) co = k;
          else if (a == vi) ci = k;
          else if (a.find(vo) != std::string::npos || a.find(vi) != std::string::npos) {
            // a product atom or a local containing the name: only safe if it is another var
            auto is_tok = [&](const std::string& v) {
              size_t p = a.find(v);
              while (p != std::string::npos) {
                size_t e = p + v.size();
                bool left = p == 0 || a[p - 1] == '*';
                bool right = e == a.size() || a[e] == '*';
                if (left && right) return true;
                p = a.find(v, p + 1);
              }
              return false;
            };
            if (is_tok(vo) || is_tok(vi)) ok = false;
          }
        }
        if (co != ci * n1) ok = false;
      });
      if (!ok) continue;
      visit_lins(in->body, [&](Lin& l) {
        auto it = l.t.find(vi);
        int64_t ci = it == l.t.end() ? 0 : it->second;
        if (it != l.t.end()) l.t.erase(it);
        l.t.erase(vo);
        if (ci) l.t[vo] = ci;
      });
      o->hi = Lin::constant(o->hi.c * n1);
      Block body = std::move(in->body);
      o->body = std::move(body);
      merged = true;
      break;
    }
    if (!merged) return;
  }
}

bool has_control(const Block& b) {
  for (auto& s : b)
    if (s.k == Stmt::K::For || s.k == Stmt::K::If || s.k == Stmt::K::Break || s.scalar_only) return true;
  return false;
}

namespace {

int64_t static_work(const Block& top) {
  int64_t w = 1;
  const Block* b = &top;
  while (!b->empty() && b->back().k == Stmt::K::For) {
    if (!b->back().hi.is_const()) return INT64_MAX;
    w *= std::max<int64_t>(1, b->back().hi.c);
    b = &b->back().body;
  }
  return w;
}

// Units of work of one pass over `b`, as eager kernels count an element of an op
// (ops::elementwise_cost, Note [elementwise cost] in src/ops/registry.cpp): a vector-math
// routine counts as a call, casts, selects and index helpers as one unit. `costly` is set
// when an op costs more than one unit: the pass is not a memory-bound loop (Note
// [memory-bound threads]).
int64_t work_of(const Block& b, bool& costly) {
  int64_t w = 0;
  for (const auto& s : b) {
    if (s.k == Stmt::K::Let || s.k == Stmt::K::Decl || s.k == Stmt::K::Assign) {
      const Expr& e = s.expr;
      if (e.k == Expr::K::Apply) {
        const int c = ops::elementwise_cost(e.op, e.in);
        costly = costly || c > 1;
        w += c;
      } else if (e.k == Expr::K::Call || e.k == Expr::K::Cast || e.k == Expr::K::Select) {
        w += 1;
      }
    } else if (s.k == Stmt::K::VecApply) {
      costly = true;
      w += 8;
    }
    w += work_of(s.body, costly) + work_of(s.orelse, costly);
  }
  return w;
}

// Stmt::par_cost and Stmt::par_memory_bound of the parallel loop whose iteration is `body`.
void set_par_cost(Stmt& loop, const Block& body) {
  bool costly = false;
  loop.par_cost = std::max<int64_t>(1, work_of(body, costly));
  loop.par_memory_bound = !costly;
}

}  // namespace

// Marks the outermost main loop parallel and unit-stride innermost main loops simd.
void schedule(Block& top, bool has_reduction_inside) {
  Stmt* outer = nullptr;
  for (auto& s : top) if (s.k == Stmt::K::For && s.var[0] == 'i') outer = &s;
  if (!outer) return;
  if (static_work(top) >= 8192 || has_reduction_inside) outer->parallel = true;
  set_par_cost(*outer, outer->body);
  Stmt* innermost = outer;
  while (!innermost->body.empty() && innermost->body.back().k == Stmt::K::For && innermost->body.back().var[0] == 'i')
    innermost = &innermost->body.back();
  if (!has_control(innermost->body) && !innermost->parallel) innermost->simd = true;
  else if (!has_control(innermost->body) && innermost->parallel) innermost->simd = true;  // "parallel for simd"
}

// Note [parallel scalar reductions]
// A reduction placed outside every parallel loop (a reduction to one value: np.sum(a * b),
// np.max(x), np.prod(i)) would run on one thread. When its loop is long, its outermost
// loop's iterations (blocks of the blocked float sum, Note [summation], rows, or elements)
// are split into one contiguous range per thread; each thread reduces its range from the
// op's identity into a partial, and the partials are combined into the accumulator (which
// holds NumPy's `initial`, if any) in thread order after the parallel region: the result is
// deterministic for a given thread count. Integer sums and products wrap (any order gives
// NumPy's result), max/min are exact in any order and float max/min OR their NaN flags, so
// NaN propagates as in NumPy; float sums round per thread range. Products of float and
// complex values stay on one thread (red_ordered): NumPy multiplies in order, and partial
// products round, overflow and underflow elsewhere (1e200 * 1e200 * 1e-200 * 1e-200 is inf
// in order, nan as inf * 0 of two partials), and the identity times a partial is not the
// partial where a complex part is inf or NaN ((1 + 0j) * (-inf + nan j) is nan + nan j).
void parallel_scalar_sums(Block& top) {
  for (size_t j = 0; j + 1 < top.size(); ++j) {
    Stmt& d = top[j];
    size_t k = j + 1;
    while (k < top.size() && top[k].k == Stmt::K::Let) ++k;  // hoisted invariants between them
    if (k == top.size()) continue;
    Stmt& f = top[k];
    if (d.k != Stmt::K::Decl || f.k != Stmt::K::For || f.parallel || f.var[0] != 'r') continue;
    if (f.red_acc != d.var || f.red_combine.args.empty() || f.red_ordered) continue;
    // Long enough to pay for a parallel region: 64k elements, or a runtime size.
    if (f.hi.is_const() && f.lo.is_const()) {
      int64_t iters = (f.hi.c - f.lo.c + f.step - 1) / f.step;
      if (iters < 2) continue;
      int64_t work = f.hi.c - f.lo.c;
      const Block* b = &f.body;
      while (!b->empty() && b->back().k == Stmt::K::For) {
        const Stmt& in = b->back();
        if (!in.hi.is_const() || !in.lo.is_const()) { work = INT64_MAX; break; }
        work *= std::max<int64_t>(1, in.hi.c - in.lo.c);
        b = &in.body;
      }
      if (work < 65536) continue;
    }
    f.par_acc = d.var;
    f.par_dtype = d.dtype;
    set_par_cost(f, f.body);
  }
}

// Note [parallel pairwise sums]
// A float sum to one value in NumPy's pairwise order (Note [summation] in lower_reduce.cpp:
// x.sum(), np.mean(f(x)) of a contiguous run) ran on one thread, so `np.log1p(2 * a).sum()`
// took twice as long as the elementwise `np.log1p(2 * a)`, and a costly expression that a
// sum fuses cost two cores' worth of time. The renderer cuts NumPy's tree into chunks
// (npk::Pairwise) whose sums npk::PairwiseStack adds as the tree adds them, and no chunk's sum
// depends on another's: so the chunks are computed on threads into an array of sums, which
// the calling thread then adds in the same order. The bits are NumPy's whatever the thread
// count. Only a top-level loop whose body computes values and stores them (Let, Store, the
// accumulator's Assign: no other accumulator, no control flow), long enough to pay for the
// threads (as parallel loops: npk::threads_for of its elements and par_cost).
void parallel_pairwise_sums(Block& top) {
  for (Stmt& f : top) {
    if (f.k != Stmt::K::For || f.lane_op != LaneReduce::Pairwise || f.parallel || !f.par_acc.empty()) continue;
    bool plain = true;
    for (const Stmt& b : f.body)
      plain = plain && (b.k == Stmt::K::Let || b.k == Stmt::K::Store ||
                        (b.k == Stmt::K::Assign && b.var == f.lane_acc && b.lane.empty()));
    if (!plain) continue;
    if (f.hi.is_const() && f.lo.is_const() && f.hi.c - f.lo.c < 2 * 1024) continue;  // one or two chunks
    f.pairwise_threads = true;
    set_par_cost(f, f.body);
  }
}

bool contains_loops(const Block& b) {
  for (auto& s : b) {
    if (s.k == Stmt::K::For && s.var[0] != 'i') return true;
    if (contains_loops(s.body) || contains_loops(s.orelse)) return true;
  }
  return false;
}

namespace {

// Note [small reductions]
// A reduction loop with a small static extent (the norm over the 2 coordinates of a point,
// argmin over 2 means) is unrolled: its body is copied once per value of the loop
// variable, locals renamed per copy. No loop is left, so loads whose indices were constant
// in the copies and the values computed from them (the means, cast to float64) are
// loop-invariant and hoisted out of the main loop (hoist_invariants), and the main loop has
// straight-line code that `schedule` vectorizes (`omp simd`). Float sums add in order.

// `l` with loop variable `var` replaced by `value` and locals renamed by `m`.
Lin subst_lin(const Lin& l, const std::string& var, int64_t value, const std::map<std::string, std::string>& m) {
  Lin r = Lin::constant(l.c);
  for (auto& [atom, k] : l.t) {
    int64_t coef = k;
    std::string rest;
    size_t s = 0;
    while (s <= atom.size()) {
      size_t e = atom.find('*', s);
      if (e == std::string::npos) e = atom.size();
      std::string f = atom.substr(s, e - s);
      if (f == var) coef *= value;
      else {
        auto it = m.find(f);
        if (!rest.empty()) rest += "*";
        rest += it == m.end() ? f : it->second;
      }
      s = e + 1;
    }
    if (rest.empty()) r += Lin::constant(coef);
    else r += Lin::atom(rest, coef);
  }
  return r;
}

void declared_names(const Block& b, std::set<std::string>& out) {
  for (auto& s : b) {
    if (s.k == Stmt::K::Let || s.k == Stmt::K::Decl || s.k == Stmt::K::For) out.insert(s.var);
    declared_names(s.body, out);
    declared_names(s.orelse, out);
  }
}

// A local renamed by `m`; the loop variable `var` becomes the int64 literal `value`.
void subst_val(Val& v, const std::string& var, int64_t value, const std::map<std::string, std::string>& m) {
  if (!v.is_local()) return;
  if (v.text == var) {
    v = Val::literal(npc::Scalar::from_int(value), DType::Int64);
    return;
  }
  auto it = m.find(v.text);
  if (it != m.end()) v.text = it->second;
}

void rename(std::string& name, const std::map<std::string, std::string>& m) {
  auto it = m.find(name);
  if (it != m.end()) name = it->second;
}

void subst_block(Block& b, const std::string& var, int64_t value, const std::map<std::string, std::string>& m) {
  for (auto& s : b) {
    rename(s.var, m);
    s.index = subst_lin(s.index, var, value, m);
    s.expr.index = subst_lin(s.expr.index, var, value, m);
    for (auto& a : s.expr.args) subst_val(a, var, value, m);
    subst_val(s.val, var, value, m);
    s.lo = subst_lin(s.lo, var, value, m);
    s.hi = subst_lin(s.hi, var, value, m);
    s.cap = subst_lin(s.cap, var, value, m);
    rename(s.lane_acc, m);
    rename(s.lane_flag, m);
    rename(s.red_acc, m);
    rename(s.red_flag, m);
    subst_block(s.body, var, value, m);
    subst_block(s.orelse, var, value, m);
  }
}

int64_t count_stmts(const Block& b) {
  int64_t n = 0;
  for (auto& s : b) n += 1 + count_stmts(s.body) + count_stmts(s.orelse);
  return n;
}

bool contains_break(const Block& b) {
  for (auto& s : b) {
    if (s.k == Stmt::K::Break) return true;
    if (s.k != Stmt::K::For && (contains_break(s.body) || contains_break(s.orelse))) return true;
  }
  return false;
}

}  // namespace

namespace {
// A block with no loop of its own is left where it is by the passes that rebuild a block
// around its loops (unroll_small, hoist_invariants): `pass` runs on the bodies of its
// statements and the block is not moved statement by statement (most kernels of a scalar
// loop are a few statements without loops, and a statement is a large object). True when
// that was the case.
template <class Pass> bool in_place_unless_loops(Block& b, Pass&& pass) {
  for (const Stmt& s : b)
    if (s.k == Stmt::K::For) return false;
  for (Stmt& s : b) {
    pass(s.body);
    pass(s.orelse);
  }
  return true;
}
}  // namespace

// Note [small reductions]: unrolls reduction loops (variables r*) of small static extent,
// innermost first.
void unroll_small(Block& b) {
  if (in_place_unless_loops(b, unroll_small)) return;
  Block out;
  out.reserve(b.size());
  for (auto& s : b) {
    unroll_small(s.body);
    unroll_small(s.orelse);
    bool ok = s.k == Stmt::K::For && s.var[0] == 'r' && s.step == 1 && s.lo.is_const() && s.hi.is_const() &&
              s.par_acc.empty() && !s.parallel && !contains_break(s.body) && s.lane_op != LaneReduce::Pairwise;
    int64_t n = ok ? s.hi.c - s.lo.c : 0;
    if (!ok || n < 1 || n > kUnrollExtent || n * count_stmts(s.body) > kUnrollStmts) {
      out.push_back(std::move(s));
      continue;
    }
    std::set<std::string> names;
    declared_names(s.body, names);
    for (int64_t v = s.lo.c; v < s.hi.c; ++v) {
      std::map<std::string, std::string> m;
      for (auto& nm : names) m[nm] = nm + "_u" + std::to_string(v);
      Block copy = s.body;
      subst_block(copy, s.var, v, m);
      for (auto& c : copy) out.push_back(std::move(c));
    }
  }
  b = std::move(out);
}

namespace {

void defined_names(const Block& b, std::set<std::string>& out) {
  for (auto& s : b) {
    if (s.k == Stmt::K::Let || s.k == Stmt::K::Decl || s.k == Stmt::K::Assign || s.k == Stmt::K::For) out.insert(s.var);
    defined_names(s.body, out);
    defined_names(s.orelse, out);
  }
}

// Calls f on each factor of index atom `a` (a name, or a product of names joined by '*').
void for_each_factor(const std::string& a, const std::function<void(const std::string&)>& f) {
  size_t s = 0;
  while (s <= a.size()) {
    size_t e = a.find('*', s);
    if (e == std::string::npos) e = a.size();
    f(a.substr(s, e - s));
    s = e + 1;
  }
}

bool mentions(const Val& v, const std::set<std::string>& names) { return v.is_local() && names.count(v.text); }

bool lin_mentions(const Lin& l, const std::set<std::string>& names) {
  bool hit = false;
  for (auto& [a, k] : l.t)
    for_each_factor(a, [&](const std::string& f) { hit = hit || names.count(f); });
  return hit;
}

// Whether evaluating `e` can raise no floating-point flag (so computing it once before a
// loop that might run zero times reports nothing NumPy would not): loads, indices, and casts
// that cannot overflow or be invalid (integers to wider-range types, float widening).
bool no_fp_effects(const Expr& e) {
  switch (e.k) {
    case Expr::K::Load:
    case Expr::K::Index: return true;
    case Expr::K::Cast: {
      Kind ki = kind(e.in), ko = kind(e.dtype);
      if (ki == Kind::Bool) return true;
      if (ki == Kind::Signed || ki == Kind::Unsigned) return e.dtype != DType::Float16;
      if (ki == Kind::Float && ko == Kind::Float) return itemsize(e.dtype) >= itemsize(e.in);
      return false;
    }
    default: return false;
  }
}

}  // namespace

// Note [small reductions]: moves the Lets of a loop body that use nothing the loop
// defines (its variable, locals declared or assigned in it) in front of the loop, when the
// loop has a static nonzero trip count; loads only from buffers the kernel does not write.
// Nothing leaves an If branch (barriers, Note [placement]).
void hoist_invariants(Block& b, const std::vector<KBuffer>& bufs) {
  if (in_place_unless_loops(b, [&](Block& x) { hoist_invariants(x, bufs); })) return;
  Block out;
  out.reserve(b.size());
  for (auto& s : b) {
    hoist_invariants(s.body, bufs);
    hoist_invariants(s.orelse, bufs);
    // Only out of loops that run at least once: a hoisted load must be one the loop makes
    // (an empty array's buffer is not read), and nothing is computed that NumPy would not.
    if (s.k != Stmt::K::For || !s.lo.is_const() || !s.hi.is_const() || s.hi.c <= s.lo.c) {
      out.push_back(std::move(s));
      continue;
    }
    std::set<std::string> defs{s.var};
    defined_names(s.body, defs);
    Block keep;
    for (auto& c : s.body) {
      bool inv = c.k == Stmt::K::Let && no_fp_effects(c.expr) && !lin_mentions(c.expr.index, defs);
      if (inv && c.expr.k == Expr::K::Load && bufs.at(c.expr.buf).written) inv = false;
      if (inv)
        for (auto& a : c.expr.args) if (mentions(a, defs)) inv = false;
      if (inv) {
        defs.erase(c.var);  // what depends on it only may move too
        out.push_back(std::move(c));
      } else {
        keep.push_back(std::move(c));
      }
    }
    s.body = std::move(keep);
    out.push_back(std::move(s));
  }
  b = std::move(out);
}

namespace {

// Note [reuse of reduced values]
// softmax's `e = exp(x - max); e / sum(e)` reads e twice per row: in the sum loop and in the
// loop that stores the result. Rather than computing e again (the exp per element is most
// of the kernel's work), the sum loop also stores e into the result's buffer and the store
// loop reads it back and divides in place: one kernel, no temporary beyond the output.
// Found on the kernel IR: a reduction loop L1 (var r*) followed in the same block by a loop
// L2 (var i*) of the same range whose Store to buffer B (B's only store in the kernel, B
// never loaded) computes a value structurally equal to one L1 computes (same ops on the
// same loads with the loop variable in the same place). L1 stores that value into
// B[store index with r for i] and L2 loads it instead of recomputing it. Only when the
// value involves an operation (not a mere load), has B's dtype (no conversion on the
// store; not float16 or bool), and is a Let directly in both loop bodies.
// A blocked sum (Note [summation] in lower_reduce.cpp: `for rb step 256 { part = 0; for r in
// [rb, min(rb + 256, n)) part += v; acc += part }`) is such an L1 too: its block loop has the
// range of L2 and the inner loop visits each element once, so the store goes into the inner
// loop. The sums are the same: only a store is added.
// A key equal for equal literals and special values (of one dtype), and for the same local.
std::string val_key(const Val& v) {
  if (v.k == Val::K::Local) return "V" + v.text + ":" + std::to_string(static_cast<int>(v.dtype));  // a value from outside
  char b[96];
  if (v.k == Val::K::Special) std::snprintf(b, sizeof b, "S%d:%d", static_cast<int>(v.special), static_cast<int>(v.dtype));
  else
    std::snprintf(b, sizeof b, "L%d:%d:%lld:%llu:%a:%a:%a", static_cast<int>(v.dtype), v.lit.b ? 1 : 0,
                  static_cast<long long>(v.lit.i), static_cast<unsigned long long>(v.lit.u), v.lit.f, v.lit.c.real(),
                  v.lit.c.imag());
  return b;
}

std::map<std::string, std::string> loop_signatures(const Stmt& loop, std::map<std::string, bool>& has_op) {
  std::map<std::string, std::string> sig;  // local -> signature
  std::map<std::string, std::string> ren{{loop.var, "#"}};
  std::set<std::string> locals{loop.var};
  int unique = 0;
  for (const Stmt& s : loop.body) {
    if (s.k != Stmt::K::Let) continue;
    const Expr& e = s.expr;
    std::string g;
    bool op = false;
    if (e.k == Expr::K::Load || e.k == Expr::K::Apply || e.k == Expr::K::Cast || e.k == Expr::K::Select) {
      g = std::to_string(static_cast<int>(e.k)) + "|" + std::to_string(static_cast<int>(e.dtype)) + "|" +
          std::to_string(static_cast<int>(e.in)) + "|" + std::to_string(static_cast<int>(e.op)) + "|" +
          std::to_string(e.buf) + "|" + subst_lin(e.index, "", 0, ren).str() + "(";
      op = e.k != Expr::K::Load;
      for (auto& a : e.args) {
        auto it = a.is_local() ? sig.find(a.text) : sig.end();
        if (it != sig.end()) {
          g += "{" + it->second + "}";
          op = op || has_op[a.text];
        } else if (mentions(a, locals)) {
          g += "?" + std::to_string(unique++);  // a value of the loop: never equal
        } else {
          g += val_key(a);
        }
        g += ",";
      }
      g += ")";
    } else {
      g = "?" + std::to_string(unique++);
    }
    sig[s.var] = g;
    has_op[s.var] = op;
    locals.insert(s.var);
  }
  return sig;
}

void used_names(const Block& b, std::set<std::string>& out) {
  auto val = [&](const Val& v) { if (v.is_local()) out.insert(v.text); };
  auto lin = [&](const Lin& l) {
    for (auto& [a, k] : l.t) for_each_factor(a, [&](const std::string& f) { out.insert(f); });
  };
  for (const Stmt& s : b) {
    for (auto& a : s.expr.args) val(a);
    lin(s.expr.index);
    lin(s.index);
    lin(s.lo);
    lin(s.hi);
    lin(s.cap);
    val(s.val);
    if (!s.lane_acc.empty()) out.insert(s.lane_acc);
    if (!s.lane_flag.empty()) out.insert(s.lane_flag);
    if (s.k == Stmt::K::Assign) out.insert(s.var);
    used_names(s.body, out);
    used_names(s.orelse, out);
  }
}

// Removes the Lets of `b` that nothing in `b` uses (their scope ends with the block).
void drop_dead_lets(Block& b) {
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::string> used;
    used_names(b, used);
    for (size_t i = 0; i < b.size(); ++i) {
      if (b[i].k == Stmt::K::Let && !used.count(b[i].var)) {
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(i));
        changed = true;
        break;
      }
    }
  }
}

void count_buffer_uses(const Block& b, std::map<int, int>& stores, std::map<int, int>& loads) {
  for (const Stmt& s : b) {
    if (s.k == Stmt::K::Store) ++stores[s.buf];
    if (s.expr.k == Expr::K::Load) ++loads[s.expr.buf];
    count_buffer_uses(s.body, stores, loads);
    count_buffer_uses(s.orelse, stores, loads);
  }
}

// The element loop of a blocked sum whose block loop is `ob` (Note [reuse of reduced values]):
// `for r in [rb, rb + step) capped at ob's end, step 1`, the one loop in ob's body; or null.
Stmt* blocked_sum_loop(Stmt& ob) {
  if (ob.step <= 1 || ob.lo.str() != Lin::constant(0).str()) return nullptr;
  Stmt* found = nullptr;
  for (Stmt& x : ob.body) {
    if (x.k == Stmt::K::For) {
      if (found) return nullptr;
      found = &x;
    } else if (x.k != Stmt::K::Decl && x.k != Stmt::K::Assign) {
      return nullptr;
    }
  }
  if (!found || found->var[0] != 'r' || found->step != 1 || !found->capped) return nullptr;
  const Lin start = Lin::atom(ob.var);
  if (found->lo.str() != start.str() || found->hi.str() != (start + Lin::constant(ob.step)).str() ||
      found->cap.str() != ob.hi.str())
    return nullptr;
  return found;
}

void reuse_in_block(Block& b, const std::vector<KBuffer>& bufs, const std::map<int, int>& stores,
                    const std::map<int, int>& loads) {
  for (auto& s : b) {
    reuse_in_block(s.body, bufs, stores, loads);
    reuse_in_block(s.orelse, bufs, stores, loads);
  }
  for (size_t j = 0; j < b.size(); ++j) {
    Stmt& outer = b[j];
    if (outer.k != Stmt::K::For || outer.var[0] != 'r' || outer.red_acc.empty() || outer.capped) continue;
    Stmt* inner = outer.step == 1 ? &outer : blocked_sum_loop(outer);
    if (!inner) continue;
    Stmt& l1 = *inner;  // the loop that visits each element: values are stored from there
    for (size_t k = j + 1; k < b.size(); ++k) {
      Stmt& l2 = b[k];
      if (l2.k != Stmt::K::For || l2.var[0] != 'i' || l2.step != 1 || l2.lo.str() != outer.lo.str() ||
          l2.hi.str() != outer.hi.str() || l2.capped)
        continue;
      const Stmt* st = nullptr;
      for (const Stmt& x : l2.body) if (x.k == Stmt::K::Store) st = &x;
      if (!st) continue;
      const int B = st->buf;
      if (stores.at(B) != 1 || loads.count(B) || bufs.at(B).dtype == DType::Float16 || bufs.at(B).dtype == DType::Bool)
        continue;
      auto it = st->index.t.find(l2.var);
      if (it == st->index.t.end() || it->second == 0) continue;  // one element per iteration
      std::set<std::string> l2_locals;
      declared_names(l2.body, l2_locals);
      if (lin_mentions(st->index, l2_locals)) continue;
      std::map<std::string, bool> op1, op2;
      auto s1 = loop_signatures(l1, op1);
      auto s2 = loop_signatures(l2, op2);
      std::map<std::string, std::string> by_sig;  // L1 signature -> L1 local
      for (auto& [v, g] : s1) if (g[0] != '?') by_sig.emplace(g, v);
      // The last L2 Let equal to an L1 value that involves an operation (the largest one:
      // Lets come after their operands).
      std::string v2, v1;
      for (const Stmt& x : l2.body) {
        if (x.k != Stmt::K::Let || !op2[x.var] || x.dtype != bufs.at(B).dtype) continue;
        auto f = by_sig.find(s2[x.var]);
        if (f != by_sig.end()) { v2 = x.var; v1 = f->second; }
      }
      if (v2.empty()) continue;
      // L1: store v1 right after its definition.
      Lin idx1 = subst_lin(st->index, "", 0, {{l2.var, l1.var}});
      for (size_t p = 0; p < l1.body.size(); ++p) {
        if (l1.body[p].k != Stmt::K::Let || l1.body[p].var != v1) continue;
        Stmt put{Stmt::K::Store};
        put.buf = B;
        put.index = idx1;
        put.val = Val{v1, l1.body[p].dtype};
        l1.body.insert(l1.body.begin() + static_cast<std::ptrdiff_t>(p) + 1, std::move(put));
        break;
      }
      // L2: load it back, and drop the Lets only it needed.
      for (Stmt& x : l2.body) {
        if (x.k != Stmt::K::Let || x.var != v2) continue;
        Expr e{Expr::K::Load, x.dtype};
        e.buf = B;
        e.index = st->index;
        x.expr = e;
      }
      drop_dead_lets(l2.body);
      return;  // B has a second store now: one reuse per kernel
    }
  }
}

}  // namespace

void reuse_reduced_values(Block& top, const std::vector<KBuffer>& bufs) {
  std::map<int, int> stores, loads;
  count_buffer_uses(top, stores, loads);
  reuse_in_block(top, bufs, stores, loads);
}

// Note [lane blocks]
// A main loop over output elements whose body runs reduction loops over outer axes
// (`x.sum(axis=0)`, `x.mean(axis=0)`, `x.std(axis=0)` of an (n, 256) array) walks one
// column per output element: every load of the reduction loop is a new cache line, and no
// loop vectorizes (an outer-axis sum is sequential, NumPy's order, Note [outer-axis sums]).
// lane_blocks strip-mines such a loop into blocks of kLanes consecutive outputs (the block
// loop takes the main loop's place, parallel if it was): every local of the body becomes a
// local array of kLanes elements, and every run of straight-line statements is wrapped in a
// loop over the block's lanes (`l`, with i = block + l), placed innermost. The reduction
// loops then run once per block around a contiguous lane loop that vectorizes, and read
// each block's rows as cache lines. Every output element sees the same operations in the
// same order as before (only the interleaving between elements changes, and the main loop's
// iterations were independent already: it may run in parallel), so the values and the FP
// flags do not change. Applied when it pays: the lanes are unit-stride in a load of a
// reduction loop, no reduction loop is unit-stride itself (a contiguous reduction streams
// already), there are at least two blocks, and the lane loops stay straight-line (no
// branch, no index arithmetic on a local). An `omp simd` reduction loop inside is taken only
// for max and min (exact in any order): it runs in order inside the block.
namespace {

constexpr int64_t kLanes = 64;

struct LaneScan {
  std::string var;                  // the main loop's variable
  std::set<std::string> loop_vars;  // variables of the reduction loops inside it
  std::set<std::string> locals;     // Let/Decl names inside it
  bool ok = true, lanes_unit = false;

  bool names_local(const Lin& l) const {
    for (auto& [atom, k] : l.t) {
      size_t s = 0;
      while (s <= atom.size()) {
        size_t e = atom.find('*', s);
        if (e == std::string::npos) e = atom.size();
        if (locals.count(atom.substr(s, e - s))) return true;
        s = e + 1;
      }
    }
    return false;
  }
  void load(const Expr& e, bool in_loop) {
    if (e.k != Expr::K::Load || !in_loop) return;
    bool on_loop = false;
    for (auto& [atom, k] : e.index.t)
      if (loop_vars.count(atom)) {
        on_loop = true;
        if (k == 1 || k == -1) ok = false;  // a contiguous reduction: it streams already
      }
    auto it = e.index.t.find(var);
    if (on_loop && it != e.index.t.end() && it->second == 1) lanes_unit = true;
  }
  void collect(const Block& b) {
    for (const Stmt& s : b) {
      if (s.k == Stmt::K::Let || s.k == Stmt::K::Decl) locals.insert(s.var);
      collect(s.body);
      collect(s.orelse);
    }
  }
  void block(const Block& b, bool in_loop) {
    for (const Stmt& s : b) {
      if (s.scalar_only) ok = false;
      switch (s.k) {
        case Stmt::K::Let:
        case Stmt::K::Decl:
        case Stmt::K::Assign:
          if (names_local(s.expr.index)) ok = false;
          load(s.expr, in_loop);
          break;
        case Stmt::K::Store:
          if (names_local(s.index)) ok = false;
          break;
        case Stmt::K::For: {
          const bool exact = s.lane_op == LaneReduce::Max || s.lane_op == LaneReduce::Min;
          if (s.simd && !exact) ok = false;
          if (s.parallel || !s.par_acc.empty()) ok = false;
          if (s.lo.t.count(var) || s.hi.t.count(var) || (s.capped && s.cap.t.count(var))) ok = false;
          if (names_local(s.lo) || names_local(s.hi) || (s.capped && names_local(s.cap))) ok = false;
          loop_vars.insert(s.var);
          block(s.body, true);
          break;
        }
        case Stmt::K::If:
        case Stmt::K::Break: ok = false; break;
      }
    }
  }
};

struct LaneRewrite {
  const Stmt& main;
  std::string blk, lane;
  const std::set<std::string>& locals;

  void val(Val& v) const {
    if (v.k == Val::K::Local && locals.count(v.text)) v.lane = lane;
  }
  Block block(const Block& b) const {
    Block out, run;
    auto flush = [&]() {
      if (run.empty()) return;
      Stmt f{Stmt::K::For};
      f.var = lane;
      f.lo = Lin::constant(0);
      f.hi = Lin::constant(kLanes);
      f.capped = true;
      f.cap = main.hi + Lin::atom(blk, -1);
      f.simd = true;
      Stmt idx{Stmt::K::Let};
      idx.var = main.var;
      idx.dtype = DType::Int64;
      idx.expr.k = Expr::K::Index;
      idx.expr.dtype = DType::Int64;
      idx.expr.index = Lin::atom(blk) + Lin::atom(lane);
      f.body.push_back(std::move(idx));
      for (auto& s : run) f.body.push_back(std::move(s));
      run.clear();
      out.push_back(std::move(f));
    };
    for (const Stmt& s : b) {
      if (s.k == Stmt::K::For) {
        flush();
        Stmt f = s;
        f.simd = false;  // the lane loop inside is the vector loop now
        f.lane_op = LaneReduce::None;
        f.lane_acc.clear();
        f.lane_flag.clear();
        f.red_acc.clear();  // only a split loop (par_acc) combines partials, and this one is not
        f.red_flag.clear();
        f.body = block(s.body);
        out.push_back(std::move(f));
        continue;
      }
      Stmt t = s;
      for (Val& a : t.expr.args) val(a);
      val(t.val);
      if (s.k == Stmt::K::Let || s.k == Stmt::K::Decl || s.k == Stmt::K::Assign) {
        t.k = Stmt::K::Assign;
        t.lane = lane;
      }
      run.push_back(std::move(t));
    }
    flush();
    return out;
  }
};

void lane_decls(const Block& b, Block& out) {
  for (const Stmt& s : b) {
    if (s.k == Stmt::K::Let || s.k == Stmt::K::Decl) {
      Stmt d{Stmt::K::Decl};
      d.var = s.var;
      d.dtype = s.dtype;
      d.array_len = kLanes;
      out.push_back(std::move(d));
    }
    lane_decls(s.body, out);
  }
}

}  // namespace

void lane_blocks(Block& top) {
  // The innermost loop of the main nest (as schedule() finds it).
  Stmt* main = nullptr;
  Block* b = &top;
  while (!b->empty() && b->back().k == Stmt::K::For && b->back().var[0] == 'i') {
    main = &b->back();
    b = &main->body;
  }
  if (!main || main->step != 1 || main->capped || main->simd || !main->par_acc.empty()) return;
  if (main->hi.is_const() && main->lo.is_const() && main->hi.c - main->lo.c < 2 * kLanes) return;
  LaneScan scan;
  scan.var = main->var;
  scan.collect(main->body);
  scan.block(main->body, false);
  if (!scan.ok || !scan.lanes_unit || scan.loop_vars.empty()) return;
  const std::string blk = "npk_lb", lane = "npk_l";
  Block body;
  lane_decls(main->body, body);
  LaneRewrite rw{*main, blk, lane, scan.locals};
  for (auto& s : rw.block(main->body)) body.push_back(std::move(s));
  Stmt blocks{Stmt::K::For};
  blocks.var = blk;
  blocks.lo = main->lo;
  blocks.hi = main->hi;
  blocks.step = kLanes;
  blocks.parallel = main->parallel;
  blocks.par_cost = main->par_cost;  // the work of an element, for npk::threads_for
  blocks.par_memory_bound = main->par_memory_bound;
  blocks.body = std::move(body);
  *main = std::move(blocks);
}

}  // namespace npc::fusion
