// Catch2 tests of the C++ core: dtypes, promotion, ndarray geometry, views, creation.
#include <catch2/catch.hpp>

#include <npc/npc.hpp>

using namespace npc;

TEST_CASE("promotion follows NumPy's table", "[dtype]") {
  CHECK(promote_types(DType::Int8, DType::UInt8) == DType::Int16);
  CHECK(promote_types(DType::Int64, DType::UInt64) == DType::Float64);
  CHECK(promote_types(DType::UInt32, DType::Int32) == DType::Int64);
  CHECK(promote_types(DType::Int16, DType::Float16) == DType::Float32);
  CHECK(promote_types(DType::Float64, DType::Complex64) == DType::Complex128);
  CHECK(promote_types(DType::Bool, DType::Float16) == DType::Float16);
  CHECK(promote_types(DType::Float16, DType::Complex64) == DType::Complex64);
}

TEST_CASE("NEP 50 weak scalars keep the array's dtype", "[dtype]") {
  std::vector<DType> u8{DType::UInt8};
  std::vector<WeakKind> wi{WeakKind::Int}, wf{WeakKind::Float}, wc{WeakKind::Complex};
  CHECK(result_type(u8, wi) == DType::UInt8);
  CHECK(result_type(u8, wf) == DType::Float64);
  std::vector<DType> f32{DType::Float32};
  CHECK(result_type(f32, wf) == DType::Float32);
  CHECK(result_type(f32, wc) == DType::Complex64);
  std::vector<DType> b{DType::Bool};
  CHECK(result_type(b, wi) == DType::Int64);
  CHECK(result_type({}, wf) == DType::Float64);
}

TEST_CASE("can_cast levels", "[dtype]") {
  CHECK(can_cast(DType::Int8, DType::Int16, Casting::Safe));
  CHECK_FALSE(can_cast(DType::Int16, DType::Int8, Casting::Safe));
  CHECK(can_cast(DType::Int16, DType::Int8, Casting::SameKind));
  CHECK_FALSE(can_cast(DType::Float64, DType::Int64, Casting::SameKind));
  CHECK(can_cast(DType::Float64, DType::Int64, Casting::Unsafe));
  CHECK_FALSE(can_cast(DType::Float64, DType::Float32, Casting::Equiv));
}

TEST_CASE("views share memory and writes show through", "[ndarray]") {
  Shape sh{3, 4};
  ndarray a = zeros(sh, DType::Float64);
  ndarray t = a.T();
  CHECK(t.storage() == a.storage());
  CHECK(t.is_f_contiguous());
  CHECK_FALSE(t.is_c_contiguous());
  t.fill(Scalar::from_double(2.5));
  CHECK(a.item(std::vector<int64_t>{2, 3}).f == 2.5);
  Shape flat{12};
  ndarray r = a.reshape(flat);
  CHECK(r.storage() == a.storage());
  CHECK_FALSE(r.owndata());
  CHECK(a.owndata());
  // A transposed array cannot be flattened in C order without a copy.
  ndarray rt = t.reshape(flat);
  CHECK(rt.storage() != a.storage());
}

TEST_CASE("astype casts with NumPy's rules", "[ndarray]") {
  ndarray a = array({1.7, -2.5, 300.0});
  ndarray i = a.astype(DType::Int32);
  CHECK(i.item(std::vector<int64_t>{0}).i == 1);
  CHECK(i.item(std::vector<int64_t>{1}).i == -2);
  ndarray b = a.astype(DType::Bool);
  CHECK(b.item(std::vector<int64_t>{0}).b);
  ndarray h = a.astype(DType::Float16);
  CHECK(h.item(std::vector<int64_t>{2}).f == 300.0);
  CHECK_THROWS_AS(a.astype(DType::Int32, Order::K, Casting::Safe), TypeError);
}

TEST_CASE("creation functions", "[creation]") {
  ndarray r = arange(Scalar::from_int(0), Scalar::from_int(10), Scalar::from_int(3), DType::Int64);
  REQUIRE(r.size() == 4);
  CHECK(r.item(std::vector<int64_t>{3}).i == 9);
  ndarray l = linspace(0, 1, 5);
  CHECK(l.item(std::vector<int64_t>{4}).f == 1.0);
  CHECK(l.item(std::vector<int64_t>{1}).f == 0.25);
  ndarray e = eye(3, 4, 1, DType::Int8);
  CHECK(e.item(std::vector<int64_t>{0, 1}).i == 1);
  CHECK(e.item(std::vector<int64_t>{0, 0}).i == 0);
  Shape neg{-1};
  CHECK_THROWS_AS(zeros(neg), ValueError);
  Shape huge{int64_t{1} << 40, int64_t{1} << 40};
  CHECK_THROWS_AS(npc::empty(huge), ValueError);  // npc:: beats ADL to std::empty
}
