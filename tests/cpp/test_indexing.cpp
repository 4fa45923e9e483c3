// Catch2 tests of npc::index / index_assign: views share memory, copies do not.
#include <catch2/catch.hpp>

#include <cstring>

#include <npc/npc.hpp>

using namespace npc;

namespace {
double at(const ndarray& a, std::vector<int64_t> i) { return a.item(i).as_double(); }
ndarray iota(int64_t n) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return array(v, DType::Float64);
}
}  // namespace

TEST_CASE("basic indexing returns views that share memory", "[indexing]") {
  std::vector<int64_t> shape{3, 4};
  ndarray a = iota(12).reshape(shape);
  std::vector<IndexItem> key{IndexItem(1), IndexItem(Slice{std::nullopt, std::nullopt, -1})};
  ndarray v = index(a, key);
  REQUIRE(v.storage() == a.storage());
  REQUIRE(v.shape() == Shape{4});
  REQUIRE(v.strides() == Strides{-8});
  CHECK(at(v, {0}) == 7.0);
  v.fill(Scalar::from_double(-1));
  CHECK(at(a, {1, 2}) == -1.0);
  CHECK(at(a, {0, 2}) == 2.0);
}

TEST_CASE("ellipsis and newaxis", "[indexing]") {
  std::vector<int64_t> shape{2, 3, 4};
  ndarray a = iota(24).reshape(shape);
  std::vector<IndexItem> key{IndexItem::ellipsis(), IndexItem::newaxis(), IndexItem(0)};
  ndarray v = index(a, key);
  CHECK(v.shape() == Shape{2, 3, 1});
  CHECK(v.storage() == a.storage());
  CHECK(index_is_basic(key));
}

TEST_CASE("advanced indexing copies and places dimensions like NumPy", "[indexing]") {
  std::vector<int64_t> shape{5, 6, 7};
  ndarray a = iota(210).reshape(shape);
  ndarray i = array({0, 1});
  std::vector<IndexItem> adjacent{IndexItem(Slice{}), IndexItem(i), IndexItem(0)};
  CHECK(index(a, adjacent).shape() == Shape{5, 2});
  std::vector<IndexItem> separated{IndexItem(i), IndexItem(Slice{}), IndexItem(0)};
  ndarray r = index(a, separated);
  CHECK(r.shape() == Shape{2, 6});
  CHECK(r.storage() != a.storage());
  CHECK(at(r, {1, 2}) == 1 * 42 + 2 * 7);
}

TEST_CASE("index errors carry NumPy's messages", "[indexing]") {
  ndarray a = iota(3);
  std::vector<IndexItem> key{IndexItem(5)};
  CHECK_THROWS_WITH(index(a, key), "index 5 is out of bounds for axis 0 with size 3");
  std::vector<IndexItem> two{IndexItem(0), IndexItem(0)};
  CHECK_THROWS_AS(index(a, two), IndexError);
  std::vector<IndexItem> step0{IndexItem(Slice{std::nullopt, std::nullopt, 0})};
  CHECK_THROWS_AS(index(a, step0), ValueError);
}

TEST_CASE("index_assign handles overlap and repeated indices", "[indexing]") {
  ndarray a = iota(5);
  std::vector<IndexItem> dst{IndexItem(Slice{1, std::nullopt, std::nullopt})};
  std::vector<IndexItem> src{IndexItem(Slice{std::nullopt, -1, std::nullopt})};
  index_assign(a, dst, index(a, src));
  CHECK(at(a, {4}) == 3.0);
  CHECK(at(a, {1}) == 0.0);
  ndarray b = iota(3);
  std::vector<IndexItem> rep{IndexItem(array({0, 0}))};
  index_assign(b, rep, array({7.0, 8.0}));
  CHECK(at(b, {0}) == 8.0);
}
