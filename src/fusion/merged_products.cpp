// Note [merged products]
// A loop of matrix-vector products with one matrix (`for j in range(n): cov[j] = X.T @ X[:, j]`,
// a Krylov basis's `A @ V[:, k]` for known columns, `r @ A` for several r) traces into a graph
// with one matmul per iteration. Run one at a time, each product reads the whole matrix: a
// memory-bound BLAS gemv per iteration. When the vectors of several such products are all
// computed before the first of them runs, the products are one matrix-matrix product: with
// the vectors as the rows of V (k x len), `S @ v_j` is row j of V @ S.T and `v_j @ S` is row j
// of V @ S. One gemm reads S once and runs at the CPU's arithmetic speed: a 700-iteration
// covariance loop over a 1050 x 700 matrix took 104 ms as gemvs and 11 ms as one gemm.
//
// Which launches: products whose operands have static views of their buffers (Note [products
// in replays] in backend.cpp) with a 2-D matrix of at least kMinMatrix elements and a 1-D
// vector; members share the matrix's buffer, view and side; no launch from the group's first
// member to a member writes the member's matrix or vector buffer (a buffer holds one value
// from the launch that writes it to its last reader, Note [memory planning], but a write in
// place, `A[k] += 1` between products, stores a new value in the same buffer); so every
// vector is a graph input or made before the group's first member, and the matrix each member
// reads is the one the first reads. The group's first launch computes every member's product
// and the other members' launches only release what they read. Vectors that are equally
// spaced views of one buffer (the columns or rows of a matrix) are V itself, as a strided
// view; others are copied into V's rows. Results are rows of one array unless one of them
// leaves the graph (then each is copied into an array of its own, so that no two outputs
// share memory as NumPy's separate products do not).
//
// Members may read their vectors with different strides (a row and a column of one matrix);
// those are copied. A group whose product has an element that is not finite (an overflow, a
// NaN or infinity in the data) is computed again product by product, as NumPy computes it:
// a sum can overflow in one order and not in another, and NumPy's values and errors are
// those of its own order. What differs from the products run one by one: the last bits of a
// finite result (NumPy leaves the summation order of its BLAS calls unspecified; a gemm
// sums in another order than a gemv).
//
// Products on both sides of one matrix (`A @ p` with `r @ A`; `A.T @ (A @ x)`) are not one
// gemm: they run as one pass over the matrix's rows instead (Note [row passes] in
// ops/matvec_pass.cpp; pass_groups below), with the same rule for results that are not finite.
#include "fusion/merged_products.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "npc/creation.hpp"
#include "npc/linalg.hpp"
#include "ops/matvec_pass.hpp"

namespace npc::fusion {
namespace {

// Smaller matrices are read from cache by each gemv; merging would only add copies.
constexpr int64_t kMinMatrix = 4096;
// At most this many elements in V and the product together (a group past it starts another).
constexpr int64_t kMaxGroupElements = int64_t{1} << 24;
// At most this many products in a row pass (each adds its work to every row).
constexpr size_t kMaxPassMembers = 8;

bool same_view(const MatVec& a, const MatVec& b) {
  return a.t == b.t && a.matrix_buf == b.matrix_buf && a.matrix_off == b.matrix_off && a.mrs == b.mrs &&
         a.mcs == b.mcs && a.rows == b.rows && a.cols == b.cols;
}

bool same_matrix(const MatVec& a, const MatVec& b) { return a.side == b.side && same_view(a, b); }

// Whether a launch in [from, to) writes buffer b (`writes[b]` ascending).
bool written(std::span<const std::vector<int>> writes, int b, int from, int to) {
  const std::vector<int>& w = writes[static_cast<size_t>(b)];
  auto it = std::lower_bound(w.begin(), w.end(), from);
  return it != w.end() && *it < to;
}

bool candidate(const MatVec& mv, size_t nbufs) {
  return mv.ok && mv.rows * mv.cols >= kMinMatrix && mv.vector_buf >= 0 && mv.matrix_buf >= 0 &&
         static_cast<size_t>(std::max(mv.vector_buf, mv.matrix_buf)) < nbufs;
}

// Whether the `n` elements (reals for a complex dtype) at p are all finite.
bool all_finite(DType t, const std::byte* p, int64_t n) {
  if (t == DType::Float32 || t == DType::Complex64) {
    const float* x = reinterpret_cast<const float*>(p);
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(x[i])) return false;
  } else {
    const double* x = reinterpret_cast<const double*>(p);
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(x[i])) return false;
  }
  return true;
}

// Note [row passes] (ops/matvec_pass.cpp): among launches not in a gemm group, products on
// both sides of one row-major matrix view. A member joins the open group of its matrix when
// the matrix is not written since the group's first member and its vector either is not
// written since then either, or is the whole product of an `S @ v` member of the group
// (`A.T @ (A @ x)`) that nothing writes after it. A group of one side only is left alone
// (gemm groups take those that pay).
std::vector<ProductGroup> pass_groups(std::span<const MatVec> launches, std::span<const std::vector<int>> writes,
                                      const std::vector<char>& taken) {
  std::vector<ProductGroup> groups;
  std::vector<ProductGroup> open;  // one per matrix view
  auto close = [&](size_t k) {
    bool sides[2] = {false, false};
    for (int m : open[k].members) sides[launches[static_cast<size_t>(m)].side] = true;
    if (open[k].members.size() >= 2 && sides[0] && sides[1]) groups.push_back(std::move(open[k]));
    open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
  };
  for (size_t li = 0; li < launches.size(); ++li) {
    const MatVec& mv = launches[li];
    if (taken[li] || !candidate(mv, writes.size()) || (mv.t != DType::Float64 && mv.t != DType::Float32) ||
        mv.mcs != static_cast<int64_t>(itemsize(mv.t)) || mv.cols < 2)  // (a column sum of one column is a dot: above)
      continue;
    const int here = static_cast<int>(li);
    size_t k = 0;
    while (k < open.size() && !same_view(launches[static_cast<size_t>(open[k].members[0])], mv)) ++k;
    if (k < open.size()) {
      ProductGroup& g = open[k];
      const int first = g.members[0];
      int from = -1;
      if (mv.side == 1 && mv.vector_off == 0 && mv.vstride == static_cast<int64_t>(itemsize(mv.t)))
        for (size_t j = 0; j < g.members.size(); ++j) {
          const MatVec& src = launches[static_cast<size_t>(g.members[j])];
          if (src.side == 0 && src.result_buf == mv.vector_buf && src.out_len() == mv.len() &&
              !written(writes, mv.vector_buf, g.members[j] + 1, here))
            from = static_cast<int>(j);
        }
      const bool ready = !written(writes, mv.matrix_buf, first, here) &&
                         (from >= 0 || !written(writes, mv.vector_buf, first, here));
      if (ready && g.members.size() < kMaxPassMembers) {
        g.members.push_back(here);
        g.from.push_back(from);
        continue;
      }
      close(k);
    }
    open.push_back({{here}, true, {-1}});
  }
  while (!open.empty()) close(open.size() - 1);
  return groups;
}

std::vector<std::vector<int>> gemm_groups(std::span<const MatVec> launches, std::span<const std::vector<int>> writes) {
  std::vector<std::vector<int>> groups;
  std::vector<std::vector<int>> open;  // the groups still taking members, one per matrix
  auto close = [&](size_t k) {
    if (open[k].size() >= 2) groups.push_back(std::move(open[k]));
    open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
  };
  for (size_t li = 0; li < launches.size(); ++li) {
    const MatVec& mv = launches[li];
    // A product of one element is a dot product, which NumPy sums in a vector loop of its
    // own; a group's gemm would take it as a gemv row summed in order (float32 sums of 10**6
    // terms 500 times further from the exact value).
    if (!candidate(mv, writes.size()) || mv.out_len() == 1) continue;
    const int64_t per_member = mv.len() + mv.out_len();
    size_t k = 0;
    while (k < open.size() && !same_matrix(launches[static_cast<size_t>(open[k][0])], mv)) ++k;
    if (k < open.size()) {
      const int first = open[k][0];
      const int here = static_cast<int>(li);
      const bool ready = !written(writes, mv.vector_buf, first, here) && !written(writes, mv.matrix_buf, first, here);
      const bool room = static_cast<int64_t>(open[k].size() + 1) * per_member <= kMaxGroupElements;
      if (ready && room) {
        open[k].push_back(static_cast<int>(li));
        continue;
      }
      close(k);
    }
    open.push_back({static_cast<int>(li)});
  }
  while (!open.empty()) close(open.size() - 1);
  return groups;
}

}  // namespace

std::vector<ProductGroup> group_products(std::span<const MatVec> launches, std::span<const std::vector<int>> writes) {
  std::vector<ProductGroup> groups;
  std::vector<char> taken(launches.size(), 0);
  for (std::vector<int>& members : gemm_groups(launches, writes)) {
    for (int m : members) taken[static_cast<size_t>(m)] = 1;
    groups.push_back({std::move(members), false, {}});
  }
  for (ProductGroup& g : pass_groups(launches, writes, taken)) groups.push_back(std::move(g));
  std::sort(groups.begin(), groups.end(),
            [](const ProductGroup& a, const ProductGroup& b) { return a.members[0] < b.members[0]; });
  return groups;
}

bool run_product_group(const MatVec& mv, std::span<const std::byte* const> matrices,
                       std::span<const std::byte* const> vectors, std::span<const int64_t> strides, bool views,
                       std::vector<ndarray>& results) {
  const size_t members = vectors.size();
  if (members < 2 || matrices.size() != members || strides.size() != members) return false;
  const int64_t isz = static_cast<int64_t>(itemsize(mv.t));
  auto aligned = [&](const std::byte* p) { return p && reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(isz) == 0; };
  const std::byte* s = matrices[0];
  if (!aligned(s)) return false;
  for (size_t j = 0; j < members; ++j)
    if (matrices[j] != s || !aligned(vectors[j])) return false;
  const int64_t k = static_cast<int64_t>(members), len = mv.len(), out = mv.out_len();
  // V: the vectors as rows, a strided view when they are equally spaced in one memory.
  const std::ptrdiff_t delta = vectors[1] - vectors[0];
  bool spaced = delta != 0;
  for (size_t j = 1; spaced && j < members; ++j)
    spaced = vectors[j] - vectors[0] == delta * static_cast<std::ptrdiff_t>(j) && strides[j] == strides[0];
  const std::byte* vp = vectors[0];
  int64_t vrs = delta, vcs = strides[0];
  ndarray packed;
  if (!spaced) {
    const std::vector<int64_t> shape{k, len};
    packed = empty(shape, mv.t);
    std::byte* dst = packed.data();
    for (size_t j = 0; j < members; ++j)
      for (int64_t i = 0; i < len; ++i, dst += isz) std::memcpy(dst, vectors[j] + i * strides[j], static_cast<size_t>(isz));
    vp = packed.data();
    vrs = len * isz;
    vcs = isz;
  }
  const std::vector<int64_t> cshape{k, out};
  ndarray c = empty(cshape, mv.t);
  // Side 0: row j of V @ S.T (S.T's rows are S's columns); side 1: row j of V @ S.
  const bool done = mv.side == 0 ? matmul_into(mv.t, vp, vrs, vcs, s, mv.mcs, mv.mrs, c.data(), k, len, out)
                                  : matmul_into(mv.t, vp, vrs, vcs, s, mv.mrs, mv.mcs, c.data(), k, len, out);
  if (!done) return false;
  // A product that is not finite may be one where a gemv and a gemm part ways (an overflow in
  // one summation order and not in the other): such groups run product by product, as NumPy
  // computes them, with their values and floating-point errors.
  if (!all_finite(mv.t, c.data(), k * out * (is_complex(mv.t) ? 2 : 1))) return false;
  results.clear();
  const Shape row{out};
  const Strides unit{isz};
  for (int64_t j = 0; j < k; ++j) {
    if (views) {
      results.emplace_back(c.storage(), c.offset() + j * out * isz, mv.t, row, unit);
    } else {
      ndarray r = empty(row, mv.t);
      std::memcpy(r.data(), c.data() + j * out * isz, static_cast<size_t>(out * isz));
      results.push_back(std::move(r));
    }
  }
  return true;
}

bool run_row_pass(const ProductGroup& g, std::span<const MatVec> launches, const std::byte* matrix,
                  std::span<const std::byte* const> vectors, std::vector<ndarray>& results) {
  const size_t members = g.members.size();
  if (!g.pass || members < 2 || vectors.size() != members || g.from.size() != members) return false;
  const MatVec& mv = launches[static_cast<size_t>(g.members[0])];
  const int64_t isz = static_cast<int64_t>(itemsize(mv.t));
  auto aligned = [&](const std::byte* p) { return p && reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(isz) == 0; };
  if (!aligned(matrix)) return false;
  std::vector<ndarray> outs, packed;
  std::vector<ops::PassProduct> products(members);
  for (size_t j = 0; j < members; ++j) {
    const MatVec& m = launches[static_cast<size_t>(g.members[j])];
    ops::PassProduct& pr = products[j];
    pr.dot = m.side == 0;
    pr.from = g.from[j];
    outs.push_back(empty(Shape{m.out_len()}, mv.t));
    pr.out = outs.back().data();
    if (pr.from >= 0) continue;
    if (!aligned(vectors[j])) return false;
    pr.v = vectors[j];
    if (m.vstride != isz) {  // a strided vector (a column of a matrix) is packed first
      ndarray c = empty(Shape{m.len()}, mv.t);
      for (int64_t i = 0; i < m.len(); ++i)
        std::memcpy(c.data() + i * isz, vectors[j] + i * m.vstride, static_cast<size_t>(isz));
      pr.v = c.data();
      packed.push_back(std::move(c));
    }
  }
  double largest = 0;
  if (!ops::matvec_pass(mv.t, matrix, mv.rows, mv.cols, mv.mrs, products, &largest)) return false;
  for (const ndarray& o : outs)
    if (!all_finite(mv.t, o.data(), o.size())) return false;
  // Note [row pass bounds]: a product that could overflow in some summation order runs as NumPy's.
  const double limit = 0.5 * (mv.t == DType::Float32 ? double{std::numeric_limits<float>::max()}
                                                      : std::numeric_limits<double>::max());
  for (size_t j = 0; j < members; ++j) {
    const MatVec& m = launches[static_cast<size_t>(g.members[j])];
    const ops::PassProduct& pr = products[j];
    const std::byte* v = pr.from >= 0 ? products[static_cast<size_t>(pr.from)].out : pr.v;
    double vmax = 0;
    for (int64_t i = 0; i < m.len(); ++i) {
      const double x = mv.t == DType::Float32 ? double{reinterpret_cast<const float*>(v)[i]}
                                              : reinterpret_cast<const double*>(v)[i];
      vmax = std::max(vmax, std::abs(x));
    }
    if (!(static_cast<double>(m.len()) * largest * vmax < limit)) return false;
  }
  results = std::move(outs);
  return true;
}

}  // namespace npc::fusion
