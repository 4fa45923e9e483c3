// Kernel-IR pass bool_bytes: bool values that a kernel only moves (copies, casts to bool,
// where, concatenation) keep their bytes.
//
// Note [bool bytes in kernels]
// A bool array can view bytes other than 0 and 1 (`np.frombuffer(b, np.uint8).view(bool)`,
// Note [bool bytes] in src/ops/ufunc.cpp). NumPy moves such elements as bytes: a copy, an
// astype(bool) (a copy of the same dtype), where, concatenate, take all keep a 2 or a 255; only
// operations that compute with the truth value (logical and bitwise ops, casts to other
// dtypes, sums) read any nonzero byte as True. A kernel loads a bool element as its truth
// value (`p[i] != 0`, a C++ bool local), which is what the computing operations need, and
// which a store writes back as 0 or 1. So this pass (run right after lowering) gives every
// store into a bool buffer whose value is only moved from bool loads the bytes themselves:
// - a Let loading a bool buffer gets a twin right after it that loads the same element as
//   uint8 (the verifier allows a bool buffer read as uint8: its bytes);
// - a Value of such a load, or a bool -> bool cast of it, is the load's twin;
// - a bool Select gets a uint8 Select twin over its branches' twins (a branch that computes a
//   truth value, or a literal, enters as its 0/1 byte);
// and the store writes the twin. The original Lets stay for the other readers (a dead one is
// dropped by the C++ compiler). Stores of computed truth values are unchanged.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fusion/lower_internal.hpp"

namespace npc::fusion {
namespace {

class BoolBytes {
 public:
  explicit BoolBytes(const std::vector<KBuffer>& bufs) : bufs_(bufs) {}

  void run(Block& top) {
    index(top);
    rewrite_stores(top);
    if (!after_.empty()) insert(top);
  }

 private:
  const std::vector<KBuffer>& bufs_;
  std::map<std::string, const Stmt*> defs_;               // Let name -> its statement
  std::map<std::string, std::optional<Val>> memo_;        // Let name -> its bytes, if moved
  std::map<std::string, std::vector<Stmt>> after_;        // Let name -> twins placed after it

  void index(const Block& b) {
    for (const Stmt& s : b) {
      if (s.k == Stmt::K::Let) defs_[s.var] = &s;
      index(s.body);
      index(s.orelse);
    }
  }

  static Stmt let(const std::string& var, Expr e) {
    Stmt s{Stmt::K::Let};
    s.var = var;
    s.dtype = e.dtype;
    s.expr = std::move(e);
    return s;
  }

  // The bytes of bool value `v` as uint8, when `v` only moves bool elements (a twin is
  // scheduled after the Let that defines it); nullopt for a computed truth value.
  std::optional<Val> bytes(const Val& v) {
    if (v.dtype != DType::Bool || !v.lane.empty()) return std::nullopt;
    if (v.k == Val::K::Lit) return Val::literal(v.lit, DType::UInt8);
    if (v.k != Val::K::Local) return std::nullopt;
    auto d = defs_.find(v.text);
    if (d == defs_.end()) return std::nullopt;  // a mutable local or a loop variable
    auto m = memo_.find(v.text);
    if (m != memo_.end()) return m->second;
    std::optional<Val> r = twin(*d->second);
    memo_[v.text] = r;
    return r;
  }

  std::optional<Val> twin(const Stmt& l) {
    const Expr& e = l.expr;
    const std::string name = l.var + "_u8";
    switch (e.k) {
      case Expr::K::Load: {
        if (e.dtype != DType::Bool || bufs_.at(e.buf).dtype != DType::Bool) return std::nullopt;
        Expr raw = e;
        raw.dtype = DType::UInt8;
        after_[l.var].push_back(let(name, std::move(raw)));
        return Val::local(name, DType::UInt8);
      }
      case Expr::K::Value: return bytes(e.args.at(0));
      case Expr::K::Cast:
        if (e.in != DType::Bool || e.dtype != DType::Bool) return std::nullopt;
        return bytes(e.args.at(0));
      case Expr::K::Select: {
        if (e.dtype != DType::Bool) return std::nullopt;
        std::optional<Val> x = bytes(e.args.at(1)), y = bytes(e.args.at(2));
        if (!x && !y) return std::nullopt;
        std::vector<Stmt>& out = after_[l.var];
        // A branch that computes its truth value enters as 0 or 1, cast where the select is.
        auto byte_of = [&](const std::optional<Val>& b, const Val& branch, const char* suffix) {
          if (b) return *b;
          Expr c{Expr::K::Cast, DType::UInt8};
          c.in = DType::Bool;
          c.args = {branch};
          out.push_back(let(name + suffix, std::move(c)));
          return Val::local(name + suffix, DType::UInt8);
        };
        Val bx = byte_of(x, e.args[1], "x"), by = byte_of(y, e.args[2], "y");
        out.push_back(let(name, select_expr(e.args[0], bx, by)));
        return Val::local(name, DType::UInt8);
      }
      default: return std::nullopt;
    }
  }

  void rewrite_stores(Block& b) {
    for (Stmt& s : b) {
      if (s.k == Stmt::K::Store && bufs_.at(s.buf).dtype == DType::Bool)
        if (std::optional<Val> r = bytes(s.val)) s.val = *r;
      rewrite_stores(s.body);
      rewrite_stores(s.orelse);
    }
  }

  void insert(Block& b) {
    Block out;
    out.reserve(b.size());
    for (Stmt& s : b) {
      insert(s.body);
      insert(s.orelse);
      const bool twinned = s.k == Stmt::K::Let && after_.count(s.var);
      const std::string var = s.var;
      out.push_back(std::move(s));
      if (twinned)
        for (Stmt& t : after_[var]) out.push_back(std::move(t));
    }
    b = std::move(out);
  }
};

}  // namespace

void bool_bytes(Block& top, const std::vector<KBuffer>& bufs) { BoolBytes(bufs).run(top); }

}  // namespace npc::fusion
