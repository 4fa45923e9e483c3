// Catch2 tests of npc/shape.hpp and npc/sorting.hpp: views share memory, joins copy,
// sorting follows NumPy's order (NaN last).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <npc/npc.hpp>

using namespace npc;

namespace {
ndarray iota(int64_t n, DType t = DType::Float64) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return array(v, t);
}
double at(const ndarray& a, std::vector<int64_t> i) { return a.item(i).as_double(); }
}  // namespace

TEST_CASE("shape functions return views that share memory", "[shape]") {
  std::vector<int64_t> shape{2, 3, 4};
  ndarray a = iota(24).reshape(shape);
  std::vector<int64_t> src{0}, dst{-1};
  ndarray m = moveaxis(a, src, dst);
  CHECK(m.shape() == Shape{3, 4, 2});
  CHECK(m.storage() == a.storage());
  ndarray f = flip(a, std::vector<int64_t>{1});
  CHECK(f.storage() == a.storage());
  CHECK(at(f, {0, 0, 0}) == 8.0);
  std::vector<int64_t> ax{0, 2};
  ndarray e = expand_dims(iota(3), ax);
  CHECK(e.shape() == Shape{1, 3, 1});
  CHECK(squeeze(e).shape() == Shape{3});
  ndarray d = diagonal(a, 0, 1, 2);
  CHECK(d.shape() == Shape{2, 3});
  CHECK(d.storage() == a.storage());
  CHECK_FALSE(d.writeable());
  CHECK(ravel(a).storage() == a.storage());
  CHECK(ravel(a.T()).storage() != a.storage());  // not C-contiguous: a copy, as NumPy
}

TEST_CASE("concatenate and stack copy and promote", "[shape]") {
  std::vector<ndarray> parts{iota(3, DType::Int8), iota(2, DType::UInt8)};
  ndarray c = concatenate(parts);
  CHECK(c.dtype() == DType::Int16);
  CHECK(c.shape() == Shape{5});
  CHECK(at(c, {4}) == 1.0);
  std::vector<ndarray> same{iota(3), iota(3)};
  CHECK(stack(same, 1).shape() == Shape{3, 2});
  std::vector<ndarray> bad{iota(3), iota(4)};
  CHECK_THROWS_AS(stack(bad), ValueError);
  CHECK_THROWS_AS(concatenate(std::vector<ndarray>{}), ValueError);
}

TEST_CASE("roll, repeat, tril", "[shape]") {
  std::vector<int64_t> s{1}, ax{0};
  ndarray r = roll(iota(4), s, ax);
  CHECK(at(r, {0}) == 3.0);
  CHECK(at(r, {1}) == 0.0);
  ndarray rep = repeat(iota(3), array({2}), std::nullopt);
  CHECK(rep.shape() == Shape{6});
  CHECK(at(rep, {3}) == 1.0);
  std::vector<int64_t> sq{3, 3};
  ndarray t = tril(iota(9).reshape(sq));
  CHECK(at(t, {0, 1}) == 0.0);
  CHECK(at(t, {2, 1}) == 7.0);
}

TEST_CASE("sort puts NaN last and argsort is stable", "[sort]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  std::vector<double> v{3, nan, -inf, 1, inf, 1, 0};
  ndarray a = array(v, DType::Float64);
  ndarray s = sort(a);
  CHECK(at(s, {0}) == -inf);
  CHECK(at(s, {4}) == 3.0);
  CHECK(at(s, {5}) == inf);
  CHECK(std::isnan(at(s, {6})));
  ndarray i = argsort(a);
  CHECK(i.item(std::vector<int64_t>{2}).as_int() == 3);  // the first 1.0 comes first
  CHECK(i.item(std::vector<int64_t>{3}).as_int() == 5);
  CHECK(i.item(std::vector<int64_t>{6}).as_int() == 1);
}

TEST_CASE("searchsorted, unique, isin, bincount", "[sort]") {
  ndarray a = array({1.0, 2.0, 2.0, 5.0});
  ndarray pos = searchsorted(a, array({2.0, 6.0}), false);
  CHECK(pos.item(std::vector<int64_t>{0}).as_int() == 1);
  CHECK(pos.item(std::vector<int64_t>{1}).as_int() == 4);
  UniqueResult u = unique(array({3, 1, 3, 2}));
  CHECK(u.values.shape() == Shape{3});
  CHECK(u.counts.item(std::vector<int64_t>{2}).as_int() == 2);
  CHECK(u.index.item(std::vector<int64_t>{2}).as_int() == 0);
  ndarray in = isin(array({1, 4}), array({4, 5}));
  CHECK_FALSE(in.item(std::vector<int64_t>{0}).as_bool());
  CHECK(in.item(std::vector<int64_t>{1}).as_bool());
  ndarray bc = bincount(array({0, 2, 2}));
  CHECK(bc.shape() == Shape{3});
  CHECK(bc.item(std::vector<int64_t>{2}).as_int() == 2);
  CHECK_THROWS_AS(bincount(array({-1})), ValueError);
}
