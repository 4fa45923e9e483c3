// Catch2 tests of npc::matmul, npc::outer and the LAPACK drivers (npc/linalg.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <npc/linalg.hpp>
#include <npc/npc.hpp>

#include <array>
#include <cstring>

#include "ops/matvec_pass.hpp"

using namespace npc;

namespace {
ndarray mat(std::vector<double> v, int64_t r, int64_t c, DType t = DType::Float64) {
  std::vector<int64_t> shape{r, c};
  return array(std::span<const double>(v), DType::Float64).reshape(shape).astype(t);
}
double at(const ndarray& a, std::vector<int64_t> i) { return a.item(i).as_double(); }
}  // namespace

TEST_CASE("matmul: 2-D, dtypes and promotion", "[linalg]") {
  ndarray a = mat({1, 2, 3, 4, 5, 6}, 2, 3);
  ndarray b = mat({1, 0, 0, 1, 1, 1}, 3, 2);
  for (DType t : {DType::Float64, DType::Float32, DType::Int64, DType::Int8, DType::Complex128, DType::Float16}) {
    ndarray r = matmul(a.astype(t), b.astype(t));
    REQUIRE(r.dtype() == t);
    REQUIRE(r.shape() == Shape{2, 2});
    CHECK(at(r, {0, 0}) == 4);
    CHECK(at(r, {0, 1}) == 5);
    CHECK(at(r, {1, 0}) == 10);
    CHECK(at(r, {1, 1}) == 11);
  }
  CHECK(matmul(a.astype(DType::Int32), b.astype(DType::Float32)).dtype() == DType::Float64);
  ndarray bb = matmul(mat({1, 0, 1, 1}, 2, 2, DType::Bool), mat({0, 1, 1, 0}, 2, 2, DType::Bool));
  CHECK(bb.dtype() == DType::Bool);
  CHECK(!bb.item(std::vector<int64_t>{0, 0}).as_bool());
  CHECK(bb.item(std::vector<int64_t>{0, 1}).as_bool());
}

TEST_CASE("matmul: 1-D operands, batches, transposed views, errors", "[linalg]") {
  ndarray v = mat({1, 2, 3}, 1, 3).reshape(std::vector<int64_t>{3});
  ndarray a = mat({1, 2, 3, 4, 5, 6}, 2, 3);
  CHECK(matmul(v, v).ndim() == 0);
  CHECK(matmul(v, v).item().as_double() == 14);
  CHECK(matmul(a, v).shape() == Shape{2});
  ndarray at_ = a.T();  // (3, 2), not C-contiguous
  ndarray r = matmul(at_, a);
  CHECK(r.shape() == Shape{3, 3});
  CHECK(at(r, {2, 2}) == 45);
  ndarray batch = a.reshape(std::vector<int64_t>{1, 2, 3});
  CHECK(matmul(batch, at_).shape() == Shape{1, 2, 2});
  CHECK_THROWS_AS(matmul(a, a), ValueError);
  CHECK_THROWS_AS(matmul(zeros(std::vector<int64_t>{}), v), ValueError);
  ndarray z = matmul(zeros(std::vector<int64_t>{2, 0}), zeros(std::vector<int64_t>{0, 3}));
  CHECK(z.shape() == Shape{2, 3});
  CHECK(at(z, {1, 2}) == 0);
}

TEST_CASE("outer keeps signed zeros like multiply", "[linalg]") {
  ndarray r = outer(mat({-1, 2}, 1, 2), mat({0, 3}, 1, 2));
  REQUIRE(r.shape() == Shape{2, 2});
  CHECK(std::signbit(at(r, {0, 0})));
  CHECK(at(r, {1, 1}) == 6);
}

TEST_CASE("LAPACK drivers: solve, inv, det, cholesky, eigh, svd, qr", "[linalg]") {
  if (!lapack::available()) return;
  ndarray a = mat({4, 1, 1, 3}, 2, 2);
  ndarray b = mat({1, 2}, 2, 1);
  ndarray x = lapack::solve(a, b);
  CHECK(at(x, {0, 0}) == Approx(1.0 / 11));
  CHECK(at(x, {1, 0}) == Approx(7.0 / 11));
  ndarray ai = lapack::inv(a);
  CHECK(at(ai, {0, 0}) == Approx(3.0 / 11));
  CHECK(lapack::det(a).item().as_double() == Approx(11));
  CHECK_THROWS_AS(lapack::inv(mat({1, 2, 2, 4}, 2, 2)), LinAlgError);
  ndarray l = lapack::cholesky(a, false);
  CHECK(at(l, {0, 1}) == 0);
  CHECK(at(l, {0, 0}) == Approx(2));
  CHECK_THROWS_AS(lapack::cholesky(mat({-1, 0, 0, 1}, 2, 2), false), LinAlgError);
  auto [w, v] = lapack::eigh(a, true, true);
  CHECK(at(w, {0}) < at(w, {1}));
  CHECK(at(w, {0}) + at(w, {1}) == Approx(7));
  auto [u, s, vh] = lapack::svd(a, true, true);
  CHECK(at(s, {0}) * at(s, {1}) == Approx(11));
  auto [q, r] = lapack::qr(mat({1, 2, 3, 4, 5, 6}, 3, 2), "reduced");
  CHECK(q.shape() == Shape{3, 2});
  CHECK(r.shape() == Shape{2, 2});
  CHECK(at(r, {1, 0}) == 0);
}

// Note [row passes] (src/ops/matvec_pass.cpp): several products in one pass over a matrix's
// rows give the same bits for every vector width, and a gemv's values within rounding.
template <class T>
static void check_row_pass(DType t, int64_t rows, int64_t cols, int64_t lda) {
  std::vector<T> a(static_cast<size_t>(rows * lda)), x(static_cast<size_t>(cols)), r(static_cast<size_t>(rows)),
      y(static_cast<size_t>(cols));
  uint64_t s = 12345;
  auto next = [&] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<T>(static_cast<double>(s >> 11) / 9007199254740992.0 - 0.5);
  };
  for (auto& v : a) v = next();
  for (auto& v : x) v = next();
  for (auto& v : r) v = next();
  for (auto& v : y) v = next();
  auto bytes = [](auto& v) { return reinterpret_cast<std::byte*>(v.data()); };
  std::vector<std::vector<T>> first;
  for (int width : {16, 32, 64}) {
    // A @ x, r @ A, A.T @ (A @ x), A @ y, A.T @ (A @ y): a dot and a column sum in one loop,
    // a dot alone, and column sums of dots one block behind.
    std::vector<T> dot(static_cast<size_t>(rows)), sum(static_cast<size_t>(cols)), chain(static_cast<size_t>(cols)),
        dot2(static_cast<size_t>(rows)), chain2(static_cast<size_t>(cols));
    const ops::PassProduct prods[] = {{true, bytes(x), -1, bytes(dot)},
                                      {false, bytes(r), -1, bytes(sum)},
                                      {false, nullptr, 0, bytes(chain)},
                                      {true, bytes(y), -1, bytes(dot2)},
                                      {false, nullptr, 3, bytes(chain2)}};
    double largest = -1;
    if (!ops::matvec_pass_isa(width, t, bytes(a), rows, cols, lda * static_cast<int64_t>(sizeof(T)), prods, &largest)) {
      CHECK(width != 16);  // the baseline always runs
      continue;
    }
    double want = 0;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) want = std::max(want, std::abs(double(a[i * lda + j])));
    CHECK(largest == want);
    if (first.empty()) {
      first = {dot, sum, chain, dot2, chain2};
      const double tol = sizeof(T) == 4 ? 1e-4 : 1e-12;
      for (int64_t i = 0; i < rows; ++i) {
        double d = 0;
        for (int64_t j = 0; j < cols; ++j) d += double(a[i * lda + j]) * double(x[j]);
        CHECK(std::abs(dot[i] - d) <= tol * (1 + std::abs(d)) * std::sqrt(double(cols)));
        double d2 = 0;
        for (int64_t j = 0; j < cols; ++j) d2 += double(a[i * lda + j]) * double(y[j]);
        CHECK(std::abs(dot2[i] - d2) <= tol * (1 + std::abs(d2)) * std::sqrt(double(cols)));
      }
      for (int64_t j = 0; j < cols; ++j) {
        double u = 0, w = 0, w2 = 0;
        for (int64_t i = 0; i < rows; ++i) {
          u += double(r[i]) * double(a[i * lda + j]);
          w += double(dot[i]) * double(a[i * lda + j]);
          w2 += double(dot2[i]) * double(a[i * lda + j]);
        }
        CHECK(std::abs(chain2[j] - w2) <= tol * (1 + std::abs(w2)) * std::sqrt(double(rows * cols)));
        CHECK(std::abs(sum[j] - u) <= tol * (1 + std::abs(u)) * std::sqrt(double(rows)));
        CHECK(std::abs(chain[j] - w) <= tol * (1 + std::abs(w)) * std::sqrt(double(rows * cols)));
      }
    } else {
      CHECK(std::memcmp(dot.data(), first[0].data(), dot.size() * sizeof(T)) == 0);
      CHECK(std::memcmp(sum.data(), first[1].data(), sum.size() * sizeof(T)) == 0);
      CHECK(std::memcmp(chain.data(), first[2].data(), chain.size() * sizeof(T)) == 0);
      CHECK(std::memcmp(dot2.data(), first[3].data(), dot2.size() * sizeof(T)) == 0);
      CHECK(std::memcmp(chain2.data(), first[4].data(), chain2.size() * sizeof(T)) == 0);
    }
  }
}

TEST_CASE("row pass: same bits for every vector width", "[linalg]") {
  for (auto [rows, cols, lda] : {std::array<int64_t, 3>{1, 1, 1}, {3, 5, 7}, {4, 16, 16}, {257, 33, 40},
                                 {1030, 67, 67}, {7, 1003, 1003}, {600, 130, 131}}) {
    check_row_pass<double>(DType::Float64, rows, cols, lda);
    check_row_pass<float>(DType::Float32, rows, cols, lda);
  }
  // Note [row pass bounds]: a NaN anywhere makes the largest magnitude NaN, whatever came
  // before or after it, in the vector loops, their scalar tails and across chunks.
  for (auto [rows, cols, at] : {std::array<int64_t, 3>{9, 3, 4}, {3, 5, 14}, {300, 8, 3}, {300, 8, 2399},
                                {1030, 67, 5000}}) {
    std::vector<double> m(static_cast<size_t>(rows * cols), 1.0), x(static_cast<size_t>(cols), 1.0),
        c(static_cast<size_t>(rows), 1.0), dot(static_cast<size_t>(rows)), sum(static_cast<size_t>(cols));
    m[0] = 1000.0;
    m[static_cast<size_t>(at)] = std::nan("");
    const ops::PassProduct prods[] = {{true, reinterpret_cast<std::byte*>(x.data()), -1, reinterpret_cast<std::byte*>(dot.data())},
                                      {false, reinterpret_cast<std::byte*>(c.data()), -1, reinterpret_cast<std::byte*>(sum.data())}};
    for (int width : {16, 32, 64}) {
      double largest = 0;
      if (!ops::matvec_pass_isa(width, DType::Float64, reinterpret_cast<std::byte*>(m.data()), rows, cols,
                                cols * static_cast<int64_t>(sizeof(double)), prods, &largest))
        continue;
      CHECK(std::isnan(largest));
    }
  }
  std::vector<double> a(16), v(4), out(4);
  const ops::PassProduct bad[] = {{false, nullptr, 1, reinterpret_cast<std::byte*>(out.data())},
                                  {true, reinterpret_cast<std::byte*>(v.data()), -1, nullptr}};
  CHECK_FALSE(ops::matvec_pass(DType::Float64, reinterpret_cast<std::byte*>(a.data()), 4, 4, 32, bad));  // from a later product
  CHECK_FALSE(ops::matvec_pass(DType::Int64, reinterpret_cast<std::byte*>(a.data()), 4, 4, 32, {}));
}
