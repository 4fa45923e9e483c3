// xtensor interop: zero-copy views both ways (compiled when xtensor is installed).
#include <catch2/catch.hpp>

#include <npc/npc.hpp>

#ifdef NPC_TEST_XTENSOR
#include <npc/xtensor.hpp>

TEST_CASE("xtensor views share npc memory", "[interop]") {
  npc::Shape sh{3, 4};
  npc::ndarray a = npc::zeros(sh, npc::DType::Float64);
  auto v = npc::as_xtensor<double>(a.T());
  REQUIRE(v.shape()[0] == 4);
  v(3, 2) = 7.5;  // element (2, 3) of a
  CHECK(a.item(std::vector<int64_t>{2, 3}).f == 7.5);
  CHECK_THROWS_AS(npc::as_xtensor<float>(a), npc::TypeError);
}

TEST_CASE("ndarray from an xtensor expression", "[interop]") {
  xt::xarray<float> x = {{1.f, 2.f}, {3.f, 4.f}};
  npc::ndarray r = npc::from_xtensor(x * 2.f + 1.f);
  CHECK(r.dtype() == npc::DType::Float32);
  CHECK(r.shape() == npc::Shape{2, 2});
  CHECK(r.item(std::vector<int64_t>{1, 0}).f == 7.0);
}
#endif

TEST_CASE("a view written through shows in its source", "[views]") {
  npc::Shape sh{4, 5};
  npc::ndarray a = npc::zeros(sh, npc::DType::Int32);
  npc::Shape flat{20};
  npc::ndarray r = a.reshape(flat);
  npc::ndarray t = a.T();
  REQUIRE(r.storage() == a.storage());
  REQUIRE(t.storage() == a.storage());
  r.fill(npc::Scalar::from_int(3));
  CHECK(a.item(std::vector<int64_t>{3, 4}).i == 3);
  CHECK(t.item(std::vector<int64_t>{4, 3}).i == 3);
  npc::ndarray c = a.copy();
  CHECK(c.storage() != a.storage());
  c.fill(npc::Scalar::from_int(9));
  CHECK(a.item(std::vector<int64_t>{0, 0}).i == 3);
}
