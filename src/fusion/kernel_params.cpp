// Kernel-IR pass: integer constants of index arithmetic become launch parameters.
//
// Note [generic kernels]
// Tracing unrolls Python loops: `for i in range(n): A[i, :i] -= ...` records n writes whose
// slice offsets and extents differ, and each of them lowers to a loop nest that differs from
// the others only in the integers of its index arithmetic (element offsets, loop bounds). If
// those integers were literals of the generated C++, every iteration would be a kernel of
// its own, and compile time would grow with the trip count (hundreds of kernels, a
// translation unit of megabytes).
//
// So, as the last step of lowering, `parametrise_constants` replaces the constant term of
// every index expression and loop bound (a `Lin`'s `c`) by a parameter `npk_k<j>` read from
// the launch's parameter block (`kp`, the kernel's fourth argument), and returns the values.
// Each occurrence gets a parameter of its own (numbered in order of appearance), also when
// two constants are equal: equal values are a coincidence of one loop iteration (the offset
// of row i - 1 equals the extent of row i's slice in another), and sharing their parameter
// would make that iteration's kernel text differ from the others'. So two kernels with the
// same text compute the same thing for the parameter block of either of them. (Checks that
// compare index texts, such as the in-place checks, run before this pass or treat distinct
// parameters as possibly different, which is conservative.) Kernels are deduplicated by that text (within a
// graph: one function, many launches; across graphs and processes: the translation unit,
// hence the memory and disk caches, see the same text). The loop-nest structure, the
// coefficients of the loop variables (the row strides of static shapes, which the
// vectoriser needs), and every decision lowering took from a static extent (unrolling a
// short reduction, blocking a long sum, the dtype of an accumulator) stay in the text:
// kernels that differ there are different kernels. Zero stays a literal (an index without
// an offset keeps its plain form).
#include "fusion/kernel_ir.hpp"

namespace npc::fusion {
namespace {

struct Params {
  std::vector<int64_t> values;

  void lin(Lin& l) {
    if (l.c == 0) return;
    l.t["npk_k" + std::to_string(values.size())] += 1;
    values.push_back(l.c);
    l.c = 0;
  }

  void block(Block& b) {
    for (Stmt& s : b) {
      lin(s.index);
      lin(s.expr.index);
      lin(s.lo);
      lin(s.hi);
      lin(s.cap);
      block(s.body);
      block(s.orelse);
    }
  }
};

}  // namespace

std::vector<int64_t> parametrise_constants(Kernel& k) {
  Params p;
  p.block(k.body);
  k.num_params = static_cast<int>(p.values.size());
  return p.values;
}

}  // namespace npc::fusion
