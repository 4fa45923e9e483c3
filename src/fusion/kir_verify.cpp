// Kernel-IR passes by name, and the kernel-IR verifier.
//
// Note [kernel-IR passes]
// Every transformation of a lowered kernel (unrolling, hoisting, scheduling, ...: the list is
// in docs/fusion.md) runs through run_pass(name, ...), as the graph passes do (docs/ir.md).
// Under NPC_VERIFY=1 the nest (or kernel) is verified after each pass, and after lowering
// itself (pass "lower"), so a pass that breaks an invariant fails there with an
// ir::VerifyError naming it, not later as a C++ compile error or a wrong number. The
// invariants (verify_nest) are those every renderer relies on:
// - a local is used only where it is in scope (defined earlier in its block or an enclosing
//   one: Let, Decl, a loop variable), with the dtype it was defined with, and defined once
//   along a scope chain (no shadowing); Assign targets a Decl (accumulators), never a Let;
// - index atoms are runtime sizes (sym[k]), runtime strides (st[k]), launch parameters
//   (npk_k<j>, j < the kernel's count) or int64 locals in scope, or products of those;
// - every expression has its kind's operand count (an op's arity, a helper's arity), a Let
//   the dtype of its expression, Value/Select/Cast operands the dtypes they declare; loads
//   read the dtype of their buffer (a bool buffer also as uint8, its bytes: Note [bool bytes
//   in kernels]), stores go to buffers marked written; special values are of a dtype that
//   has them;
// - loops have a name and a positive step; their reduction clauses, split reductions and
//   NaN flags name mutable accumulators in scope; Break is inside a loop;
// - a vector apply maps a local array of float32/float64 to a mutable local array of the
//   same dtype with a unary op and a vector width (Note [vector math in kernels]).
#include <map>
#include <string>
#include <vector>

#include "fusion/kernel_ir.hpp"
#include "npc/graph.hpp"

namespace npc::fusion {

int helper_arity(Helper h) {
  switch (h) {
    case Helper::RoundHalf:
    case Helper::Real:
    case Helper::Imag:
    case Helper::ComplexAbsPlain:
    case Helper::IsNaN:
    case Helper::WrapIndex:
    case Helper::ScalarNeg:
    case Helper::ScalarAbs: return 1;
    default: return 2;
  }
}

const char* helper_name(Helper h) {
  switch (h) {
    case Helper::PlainAdd: return "plain_add";
    case Helper::PlainMul: return "plain_mul";
    case Helper::Max: return "max";
    case Helper::Min: return "min";
    case Helper::QuietMax: return "quiet_max";
    case Helper::QuietMin: return "quiet_min";
    case Helper::MaxSimd: return "max_simd";
    case Helper::MinSimd: return "min_simd";
    case Helper::ComplexMulPlain: return "complex_mul_plain";
    case Helper::ComplexAbsPlain: return "complex_abs_plain";
    case Helper::QuietLess: return "quiet_less";
    case Helper::IsNaN: return "isnan";
    case Helper::OrNaN: return "or_nan";
    case Helper::RoundHalf: return "round_half";
    case Helper::Real: return "real";
    case Helper::Imag: return "imag";
    case Helper::WrapIndex: return "wrap_index";
    case Helper::ScalarAdd: return "scalar_add";
    case Helper::ScalarSub: return "scalar_sub";
    case Helper::ScalarMul: return "scalar_mul";
    case Helper::ScalarNeg: return "scalar_neg";
    case Helper::ScalarAbs: return "scalar_abs";
    case Helper::kCount: break;
  }
  return "?";
}

namespace {

class Verifier {
 public:
  Verifier(const std::vector<KBuffer>& bufs, int num_params, std::string_view pass)
      : bufs_(bufs), num_params_(num_params), pass_(pass) {}

  /// The kernel's value parameters (Note [generic kernels]), as an outer scope of lets.
  void value_params(const std::vector<ValueParam>& vps) {
    scopes_.emplace_back();
    for (const ValueParam& vp : vps) {
      if (vp.slot < 0 || vp.slot + (is_complex(vp.dtype) ? 2 : 1) > num_params_)
        fail("value parameter beyond the kernel's count");
      define("npk_f" + std::to_string(vp.slot), Def::Let, vp.dtype);
    }
  }

  void block(const Block& b) {
    scopes_.emplace_back();
    for (const Stmt& s : b) stmt(s);
    scopes_.pop_back();
  }

 private:
  enum class Def : uint8_t { Let, Decl, Loop };
  struct Name {
    Def def;
    DType dtype;
    bool array = false;  ///< a local array (Note [lane blocks]): used only as element [lane]
  };

  const std::vector<KBuffer>& bufs_;
  int num_params_;
  std::string_view pass_;
  std::vector<std::map<std::string, Name>> scopes_;
  int loops_ = 0;
  const Stmt* at_ = nullptr;

  [[noreturn]] void fail(const std::string& why) const {
    std::string where;
    if (at_) {
      static const char* kinds[] = {"let", "var", "assign", "store", "for", "if", "break", "vector apply"};
      where = std::string(" at ") + kinds[static_cast<int>(at_->k)] + (at_->var.empty() ? "" : " " + at_->var);
    }
    throw ir::VerifyError("kernel IR verification failed after pass '" + std::string(pass_) + "'" + where + ": " + why);
  }

  const Name* find(const std::string& n) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(n);
      if (f != it->end()) return &f->second;
    }
    return nullptr;
  }

  void define(const std::string& n, Def d, DType t) {
    if (n.empty()) fail("a definition without a name");
    if (find(n)) fail("'" + n + "' is defined twice in one scope chain");
    scopes_.back()[n] = Name{d, t};
  }

  const Name& use(const std::string& n) const {
    const Name* f = find(n);
    if (!f) fail("'" + n + "' is used where it is not defined");
    return *f;
  }

  // An array local is used as element [lane] of a loop variable, a scalar one plainly.
  void lane_use(const Name& n, const std::string& text, const std::string& lane) const {
    if (n.array != !lane.empty()) fail("'" + text + "' is " + (n.array ? "an array used without a lane" : "not an array"));
    if (!lane.empty() && use(lane).def != Def::Loop) fail("lane '" + lane + "' of '" + text + "' is not a loop variable");
  }

  void mutable_name(const std::string& n, const char* what) const {
    if (use(n).def != Def::Decl) fail(std::string(what) + " '" + n + "' is not a mutable local");
  }

  void val(const Val& v) const {
    switch (v.k) {
      case Val::K::Local: {
        const Name& n = use(v.text);
        lane_use(n, v.text, v.lane);
        if (n.dtype != v.dtype)
          fail("'" + v.text + "' is used as " + std::string(name(v.dtype)) + " but is " + std::string(name(n.dtype)));
        return;
      }
      case Val::K::Lit:
        if (!v.text.empty()) fail("a literal with a name");
        return;
      case Val::K::Special: {
        const bool fl = kind(v.dtype) == Kind::Float;
        const bool real = kind(v.dtype) != Kind::Complex;
        const bool ok = v.special == Special::Lowest || v.special == Special::Highest ? real : fl;
        if (!ok) fail("special value of dtype " + std::string(name(v.dtype)) + " that has none");
        return;
      }
    }
    fail("a value of unknown kind");
  }

  void atom(const std::string& a) const {
    size_t s = 0;
    while (s <= a.size()) {
      size_t e = a.find('*', s);
      if (e == std::string::npos) e = a.size();
      std::string f = a.substr(s, e - s);
      s = e + 1;
      auto digits = [&](size_t from, size_t to) {
        if (from >= to) return false;
        for (size_t i = from; i < to; ++i)
          if (f[i] < '0' || f[i] > '9') return false;
        return true;
      };
      if ((f.rfind("sym[", 0) == 0 && f.back() == ']' && digits(4, f.size() - 1)) ||
          (f.rfind("st[", 0) == 0 && f.back() == ']' && digits(3, f.size() - 1)))
        continue;
      if (f.rfind("npk_k", 0) == 0 && digits(5, f.size())) {
        if (std::stoll(f.substr(5)) >= num_params_) fail("launch parameter " + f + " beyond the kernel's count");
        continue;
      }
      const Name& n = use(f);
      if (n.dtype != DType::Int64) fail("index atom '" + f + "' is not an int64 value");
    }
  }

  void lin(const Lin& l) const {
    for (auto& [a, k] : l.t) atom(a);
  }

  void expr(const Expr& e) const {
    auto arity = [&](size_t n) {
      if (e.args.size() != n) fail("expression with " + std::to_string(e.args.size()) + " operands, expected " + std::to_string(n));
    };
    for (const Val& v : e.args) val(v);
    switch (e.k) {
      case Expr::K::Load:
        arity(0);
        if (e.buf < 0 || e.buf >= static_cast<int>(bufs_.size())) fail("load from a missing buffer");
        if (bufs_[e.buf].dtype != e.dtype && !(bufs_[e.buf].dtype == DType::Bool && e.dtype == DType::UInt8))
          fail("load of another dtype than its buffer's");
        lin(e.index);
        return;
      case Expr::K::Apply:
        if (e.op == OpId::kCount) fail("apply without an op");
        arity(static_cast<size_t>(op_info(e.op).nin));
        for (const Val& v : e.args)
          if (v.dtype != e.in) fail("operand of " + std::string(op_info(e.op).name) + " is not of its loop dtype");
        return;
      case Expr::K::Cast:
        arity(1);
        if (e.args[0].dtype != e.in) fail("cast operand is not of the cast's source dtype");
        return;
      case Expr::K::Select:
        arity(3);
        if (e.args[1].dtype != e.dtype || e.args[2].dtype != e.dtype) fail("select branches of another dtype");
        return;
      case Expr::K::Index:
        arity(0);
        if (e.dtype != DType::Int64) fail("index value that is not int64");
        if (e.params.size() > 1 || (e.params.size() == 1 && e.params[0] == 0)) fail("bad index divisor");
        lin(e.index);
        return;
      case Expr::K::InRange:
        arity(0);
        if (e.dtype != DType::Bool || e.params.size() != 3 || e.params[1] == 0) fail("bad range test");
        lin(e.index);
        return;
      case Expr::K::Value:
        arity(1);
        if (e.args[0].dtype != e.dtype) fail("value of another dtype than its expression's");
        return;
      case Expr::K::Call:
        if (e.helper >= Helper::kCount) fail("call of an unknown helper");
        arity(static_cast<size_t>(helper_arity(e.helper)));
        lin(e.index);
        return;
    }
    fail("expression of unknown kind");
  }

  void stmt(const Stmt& s) {
    at_ = &s;
    switch (s.k) {
      case Stmt::K::Let:
        expr(s.expr);
        if (s.expr.dtype != s.dtype) fail("let of another dtype than its expression's");
        define(s.var, Def::Let, s.dtype);
        break;
      case Stmt::K::Decl:
        if (s.array_len > 0) {
          define(s.var, Def::Decl, s.dtype);
          scopes_.back()[s.var].array = true;
          break;
        }
        expr(s.expr);
        define(s.var, Def::Decl, s.dtype);
        break;
      case Stmt::K::Assign:
        expr(s.expr);
        mutable_name(s.var, "assignment to");
        lane_use(use(s.var), s.var, s.lane);
        break;
      case Stmt::K::Store:
        if (s.buf < 0 || s.buf >= static_cast<int>(bufs_.size())) fail("store to a missing buffer");
        if (!bufs_[s.buf].written) fail("store to a buffer not marked written");
        lin(s.index);
        val(s.val);
        break;
      case Stmt::K::For: {
        if (s.step <= 0) fail("loop step " + std::to_string(s.step));
        lin(s.lo);
        lin(s.hi);
        if (s.capped) lin(s.cap);
        if (s.lane_op != LaneReduce::None) mutable_name(s.lane_acc, "lane reduction of");
        if (!s.lane_flag.empty()) mutable_name(s.lane_flag, "lane NaN flag");
        if (!s.par_acc.empty()) mutable_name(s.par_acc, "split reduction of");
        if (!s.red_acc.empty()) {
          mutable_name(s.red_acc, "reduction accumulator");
          if (s.red_combine.args.size() != 2) fail("reduction combine without its two operands");
        }
        if (!s.red_flag.empty()) mutable_name(s.red_flag, "reduction NaN flag");
        scopes_.emplace_back();
        define(s.var, Def::Loop, DType::Int64);
        ++loops_;
        block(s.body);
        --loops_;
        if (!s.orelse.empty()) fail("a loop with an else branch");
        scopes_.pop_back();
        break;
      }
      case Stmt::K::If:
        val(s.val);
        if (kind(s.val.dtype) == Kind::Float || kind(s.val.dtype) == Kind::Complex) fail("condition that is not bool");
        block(s.body);
        block(s.orelse);
        break;
      case Stmt::K::Break:
        if (loops_ == 0) fail("break outside a loop");
        break;
      case Stmt::K::VecApply: {
        // Note [vector math in kernels]: a unary float op from local array to local array.
        const Expr& e = s.expr;
        if (e.k != Expr::K::Apply || e.op == OpId::kCount || op_info(e.op).nin != 1 || e.args.size() != 1)
          fail("vector apply of something other than a unary op");
        if (e.dtype != e.in || (e.in != DType::Float32 && e.in != DType::Float64) || s.dtype != e.dtype)
          fail("vector apply outside float32/float64");
        if (s.vec_bits != 256 && s.vec_bits != 512) fail("vector apply of width " + std::to_string(s.vec_bits));
        if (s.vec_via_float64 && e.in != DType::Float32) fail("vector apply through float64 of a float64 op");
        const Val& a = e.args[0];
        if (a.k != Val::K::Local || !a.lane.empty() || !use(a.text).array || use(a.text).dtype != e.in || a.dtype != e.in)
          fail("vector apply operand that is not a local array of its dtype");
        mutable_name(s.var, "vector apply to");
        if (!use(s.var).array || use(s.var).dtype != s.dtype) fail("vector apply to a non-array or another dtype");
        lin(s.hi);
        if (s.capped) lin(s.cap);
        break;
      }
    }
    at_ = &s;
  }
};

}  // namespace

void verify_nest(const Block& b, const std::vector<KBuffer>& bufs, int num_params, std::string_view after_pass) {
  Verifier(bufs, num_params, after_pass).block(b);
}

void verify_kernel(const Kernel& k, std::string_view after_pass) {
  Verifier v(k.bufs, k.num_params, after_pass);
  v.value_params(k.value_params);
  v.block(k.body);
}

bool default_verify() { return ir::verify_enabled(); }

void run_pass(std::string_view name, Block& nest, const std::vector<KBuffer>& bufs,
              const std::function<void(Block&)>& pass, bool verify) {
  pass(nest);
  if (verify) verify_nest(nest, bufs, 0, name);
}

void run_pass(std::string_view name, Kernel& k, const std::function<void(Kernel&)>& pass, bool verify) {
  pass(k);
  if (verify) verify_kernel(k, name);
}

}  // namespace npc::fusion
