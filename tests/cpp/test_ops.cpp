// Catch2 tests of the eager ops: one op of each kind (unary, binary, comparison, reduction,
// scan) per dtype class (bool, signed, unsigned, float, complex), the op table and
// resolve_loop.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include <npc/npc.hpp>
#include <npc/ops.hpp>

using namespace npc;

namespace {
Operand arr(const ndarray& a) { return Operand{a, false}; }
Operand weak_int(int64_t v) { return Operand{scalar_array(Scalar::from_int(v)), true}; }
ndarray call1(OpId op, const ndarray& a) {
  Operand in[1] = {arr(a)};
  return call_ufunc(op, in)[0];
}
ndarray call2(OpId op, const Operand& a, const Operand& b) {
  Operand in[2] = {a, b};
  return call_ufunc(op, in)[0];
}
template <class T>
T at(const ndarray& a, int64_t i) {
  return reinterpret_cast<const T*>(a.data())[i];
}
}  // namespace

TEST_CASE("op table rows and names", "[ops]") {
  CHECK(op_info(OpId::add).nin == 2);
  CHECK(op_info(OpId::divmod).nout == 2);
  CHECK(op_info(OpId::add).identity == Identity::Zero);
  CHECK(op_info(OpId::sum).kind == OpKind::Reduce);
  CHECK(op_from_name("logaddexp") == OpId::logaddexp);
  CHECK_FALSE(op_from_name("no_such_op").has_value());
}

TEST_CASE("resolve_loop follows NEP 50 and NumPy's special rules", "[ops]") {
  std::vector<DType> i8{DType::Int8, DType::Int8};
  bool strong[2] = {false, false};
  CHECK(resolve_loop(OpId::divide, i8, strong).out[0] == DType::Float64);
  CHECK(resolve_loop(OpId::add, i8, strong).out[0] == DType::Int8);
  std::vector<DType> u8w{DType::UInt8, DType::Int64};
  bool w[2] = {false, true};
  CHECK(resolve_loop(OpId::add, u8w, w).out[0] == DType::UInt8);
  std::vector<DType> mixed{DType::Int64, DType::UInt64};
  LoopTypes lt = resolve_loop(OpId::less, mixed, strong);
  CHECK(lt.in[0] == DType::Int64);
  CHECK(lt.in[1] == DType::UInt64);
  std::vector<DType> ff{DType::Float64, DType::Float64};
  CHECK_THROWS_AS(resolve_loop(OpId::bitwise_and, ff, strong), TypeError);
}

TEST_CASE("bool: logical_not, add (or), equal, any, cumsum", "[ops][bool]") {
  ndarray a = array({true, false, true});
  ndarray n = call1(OpId::logical_not, a);
  CHECK(at<bool>(n, 1));
  ndarray s = call2(OpId::add, arr(a), arr(a));
  CHECK(s.dtype() == DType::Bool);
  CHECK(at<bool>(s, 0));
  ndarray e = call2(OpId::equal, arr(a), arr(n));
  CHECK_FALSE(at<bool>(e, 0));
  CHECK(reduce(OpId::logical_or, a).item().as_bool());
  ndarray c = accumulate(OpId::add, a, 0);
  CHECK(c.dtype() == DType::Int64);
  CHECK(at<int64_t>(c, 2) == 2);
}

TEST_CASE("signed: negative wraps, floor_divide, less, sum widens, cumsum", "[ops][signed]") {
  ndarray a = array<int8_t>({-128, -7, 7});
  ndarray n = call1(OpId::negative, a);
  CHECK(at<int8_t>(n, 0) == -128);
  CHECK(at<int8_t>(n, 1) == 7);
  ndarray q = call2(OpId::floor_divide, arr(a), weak_int(2));
  CHECK(at<int8_t>(q, 1) == -4);
  ndarray l = call2(OpId::less, arr(a), weak_int(0));
  CHECK(at<bool>(l, 0));
  CHECK_FALSE(at<bool>(l, 2));
  ndarray s = reduce(OpId::add, a);
  CHECK(s.dtype() == DType::Int64);
  CHECK(s.item().as_int() == -128);
  ndarray c = accumulate(OpId::add, a, 0);
  CHECK(at<int64_t>(c, 2) == -128);
  CHECK_THROWS_AS(call2(OpId::add, arr(a), weak_int(300)), OverflowError);
}

TEST_CASE("unsigned: add wraps, remainder by zero, greater, max, cumprod", "[ops][unsigned]") {
  ndarray a = array<uint8_t>({250, 3, 0});
  ndarray s = call2(OpId::add, arr(a), weak_int(10));
  CHECK(at<uint8_t>(s, 0) == 4);
  ndarray r = call2(OpId::remainder, arr(a), arr(array<uint8_t>({0, 2, 5})));
  CHECK(at<uint8_t>(r, 0) == 0);
  CHECK((take_fp_errors() & FpeDivide) != 0);
  ndarray g = call2(OpId::greater, arr(a), weak_int(2));
  CHECK(at<bool>(g, 1));
  CHECK(reduce(OpId::maximum, a).item().as_int() == 250);
  ndarray p = accumulate(OpId::multiply, array<uint8_t>({2, 3, 4}), 0);
  CHECK(p.dtype() == DType::UInt64);
  CHECK(at<uint64_t>(p, 2) == 24);
}

TEST_CASE("float: sqrt, maximum propagates NaN, less_equal, pairwise sum, cumsum", "[ops][float]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ndarray a = array<double>({4.0, nan, -0.0, 9.0});
  ndarray r = call1(OpId::sqrt, a);
  CHECK(at<double>(r, 0) == 2.0);
  CHECK(std::signbit(at<double>(r, 2)));
  ndarray m = call2(OpId::maximum, arr(a), Operand{scalar_array(Scalar::from_double(5.0)), true});
  CHECK(std::isnan(at<double>(m, 1)));
  CHECK(at<double>(m, 0) == 5.0);
  ndarray f = call2(OpId::fmax, arr(a), Operand{scalar_array(Scalar::from_double(5.0)), true});
  CHECK(at<double>(f, 1) == 5.0);
  ndarray le = call2(OpId::less_equal, arr(a), arr(a));
  CHECK_FALSE(at<bool>(le, 1));
  CHECK(std::isnan(reduce(OpId::add, a).item().as_double()));
  ndarray ones = full(Shape{1000}, Scalar::from_double(0.1), DType::Float64);
  CHECK(reduce(OpId::add, ones).item().as_double() == Approx(100.0).epsilon(1e-14));
  ndarray c = accumulate(OpId::add, array<double>({1.0, 2.0, 3.5}), 0);
  CHECK(at<double>(c, 2) == 6.5);
  ReduceOptions opts;
  opts.axes = std::vector<int64_t>{0};
  CHECK_THROWS_AS(reduce(OpId::maximum, npc::empty(Shape{0, 2}), opts), ValueError);
}

TEST_CASE("complex: absolute, multiply, equal, sum, cumprod", "[ops][complex]") {
  using C = std::complex<double>;
  ndarray a = array<C>({C(3, 4), C(0, 1)});
  ndarray ab = call1(OpId::absolute, a);
  CHECK(ab.dtype() == DType::Float64);
  CHECK(at<double>(ab, 0) == 5.0);
  ndarray sq = call2(OpId::multiply, arr(a), arr(a));
  CHECK(at<C>(sq, 1) == C(-1, 0));
  ndarray e = call2(OpId::equal, arr(a), arr(a));
  CHECK(at<bool>(e, 0));
  CHECK(reduce(OpId::add, a).item().as_complex() == C(3, 5));
  ndarray p = accumulate(OpId::multiply, a, 0);
  CHECK(at<C>(p, 1) == C(-4, 3));
}

TEST_CASE("broadcasting helpers", "[ops]") {
  std::vector<Shape> shapes{{3, 1}, {4}};
  CHECK(broadcast_shapes(shapes) == Shape{3, 4});
  std::vector<Shape> bad{{3}, {4}};
  CHECK_THROWS_AS(broadcast_shapes(bad), ValueError);
  ndarray b = broadcast_to(array<double>({1.0, 2.0}), Shape{3, 2});
  CHECK(b.strides()[0] == 0);
  CHECK_FALSE(b.writeable());
}

TEST_CASE("argmax/argmin: first occurrence, NaN wins", "[ops]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(arg_reduce(OpId::argmax, array<double>({1, 3, 3, 2}), std::nullopt).item().as_int() == 1);
  CHECK(arg_reduce(OpId::argmin, array<double>({1, nan, 0}), std::nullopt).item().as_int() == 1);
  CHECK_THROWS_AS(arg_reduce(OpId::argmax, npc::empty(Shape{0}), std::nullopt), ValueError);
}

TEST_CASE("reduce_loop: NumPy's reduce/accumulate resolution, ldexp's mixed loop", "[ops][reduce]") {
  // ldexp.reduce(int32) runs "di->d": a float64 accumulator, int32 exponents.
  ReduceLoop l = reduce_loop(OpId::ldexp, DType::Int32, std::nullopt, std::nullopt, false);
  CHECK(l.acc == DType::Float64);
  CHECK(l.in == DType::Int32);
  ndarray r = reduce(OpId::ldexp, array<int32_t>({1, 2}));
  CHECK(r.dtype() == DType::Float64);
  CHECK(r.item().as_double() == 4.0);
  // accumulate needs a uniform loop: NumPy's "resolved dtypes are not compatible".
  CHECK_THROWS_AS(accumulate(OpId::ldexp, array<int64_t>({1, 2}), 0), TypeError);
  // gcd has no bool loop: its uniform resolver's no-loop error; add widens bool.
  CHECK_THROWS_AS(reduce_loop(OpId::gcd, DType::Bool, std::nullopt, std::nullopt, false), TypeError);
  CHECK(reduce_loop(OpId::add, DType::Bool, std::nullopt, std::nullopt, false).acc == DType::Int64);
  // out= takes part as the first operand (maximum of uint8 into int8 runs in int16).
  CHECK(reduce_loop(OpId::maximum, DType::UInt8, std::nullopt, DType::Int8, false).acc == DType::Int16);
}
