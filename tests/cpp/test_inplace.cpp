// In-place geometry changes of npc::ndarray (numpy's shape/strides/dtype setters and
// ndarray.resize) and adopted storage (OWNDATA for memory npc takes over).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>

#include "npc/npc.hpp"

using namespace npc;

namespace {
double at(const ndarray& a, int64_t i) { return a.item(std::vector<int64_t>{i}).as_double(); }
}  // namespace

TEST_CASE("resize keeps the leading bytes and zero-fills the rest", "[inplace]") {
  ndarray a = arange(Scalar::from_int(0), Scalar::from_int(4), Scalar::from_int(1), DType::Float64);
  ndarray old_view = a;  // another view of the old memory
  std::vector<int64_t> shape{2, 3};
  a.resize(shape);
  CHECK(a.shape() == Shape{2, 3});
  CHECK(a.strides() == Strides{24, 8});
  CHECK(a.owndata());
  CHECK(a.item(std::vector<int64_t>{0, 2}).as_double() == 2.0);
  CHECK(a.item(std::vector<int64_t>{1, 0}).as_double() == 3.0);
  CHECK(a.item(std::vector<int64_t>{1, 2}).as_double() == 0.0);
  CHECK(old_view.size() == 4);  // still valid: the old storage lives on
  CHECK(at(old_view, 3) == 3.0);
  std::vector<int64_t> smaller{2};
  a.resize(smaller);
  CHECK(at(a, 1) == 1.0);
  std::vector<int64_t> empty{0};
  a.resize(empty);
  CHECK(a.size() == 0);
  CHECK(a.strides() == Strides{8});
}

TEST_CASE("resize keeps Fortran order and rejects what NumPy rejects", "[inplace]") {
  std::vector<int64_t> s23{2, 3};
  ndarray f = zeros(s23, DType::Int32, Order::F);
  std::vector<int64_t> s33{3, 3};
  f.resize(s33);
  CHECK(f.strides() == Strides{4, 12});
  ndarray base = zeros(std::vector<int64_t>{6}, DType::Float64);
  ndarray view = base.reshape(s23);
  CHECK_THROWS_AS(view.resize(s33), ValueError);  // does not own its data
  std::vector<int64_t> s32{3, 2};
  view.resize(s32);  // same size: a reshape in place
  CHECK(view.shape() == Shape{3, 2});
  ndarray t = zeros(s23, DType::Float64).T();
  ndarray strided = t.with_geometry(t.offset(), t.dtype(), Shape{3}, Strides{16});
  CHECK_THROWS_WITH(strided.resize(std::vector<int64_t>{3}), "resize only works on single-segment arrays");
  std::vector<int64_t> neg{-1};
  CHECK_THROWS_WITH(base.resize(neg), "negative dimensions not allowed");
}

TEST_CASE("set_strides checks the storage bounds", "[inplace]") {
  ndarray big = zeros(std::vector<int64_t>{12}, DType::Float64);
  ndarray half = big.with_geometry(0, DType::Float64, Shape{6}, Strides{8});
  std::vector<int64_t> s16{16};
  half.set_strides(s16);  // reaches into the rest of the storage: allowed, as in NumPy
  CHECK(half.strides() == Strides{16});
  std::vector<int64_t> s24{24};
  CHECK_THROWS_WITH(half.set_strides(s24), "strides is not compatible with available memory");
  std::vector<int64_t> neg{-8};
  CHECK_THROWS_AS(half.set_strides(neg), ValueError);
  std::vector<int64_t> two{8, 8};
  CHECK_THROWS_WITH(half.set_strides(two), "strides must be  same length as shape (1)");
}

TEST_CASE("assign_geometry keeps OWNDATA; adopted storage owns its data", "[inplace]") {
  ndarray a = zeros(std::vector<int64_t>{6}, DType::Int64);
  std::vector<int64_t> s23{2, 3};
  a.assign_geometry(a.reshape(s23));
  CHECK(a.owndata());
  CHECK(a.shape() == Shape{2, 3});
  bool released = false;
  void* mem = std::calloc(4, sizeof(double));
  {
    auto st = Storage::adopt(mem, 4 * sizeof(double), [&] {
      released = true;
      std::free(mem);
    });
    ndarray b(st, 0, DType::Float64, Shape{4}, Strides{8});
    CHECK(b.owndata());
    ndarray c(Storage::borrow(mem, 4 * sizeof(double), {}), 0, DType::Float64, Shape{4}, Strides{8});
    CHECK_FALSE(c.owndata());
  }
  CHECK(released);
}
