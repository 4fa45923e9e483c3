// Catch2 tests of the reduction machinery's NumPy details: where= lanes are not computed,
// reductions report FP errors, ufunc.at on non-contiguous views, summation order.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include <npc/npc.hpp>
#include <npc/ops.hpp>

using namespace npc;

namespace {
ndarray vec(std::vector<double> v) {
  Shape s{static_cast<int64_t>(v.size())};
  ndarray a = empty(s, DType::Float64);
  for (size_t i = 0; i < v.size(); ++i) reinterpret_cast<double*>(a.data())[i] = v[i];
  return a;
}
double at(const ndarray& a, int64_t i) { return reinterpret_cast<const double*>(a.data())[i]; }
}  // namespace

TEST_CASE("where= leaves masked lanes uncomputed and their FP errors unraised", "[stats][where]") {
  take_fp_errors();
  ndarray x = vec({0.0, 2.0, 0.0, 4.0});
  ndarray out = vec({7.0, 7.0, 7.0, 7.0});
  Shape s4{4};
  ndarray mask = empty(s4, DType::Bool);
  bool m[4] = {false, true, false, true};
  for (int i = 0; i < 4; ++i) reinterpret_cast<bool*>(mask.data())[i] = m[i];
  Operand in[2] = {Operand{scalar_array(Scalar::from_double(1.0)), true}, Operand{x, false}};
  UfuncOptions o;
  o.out.emplace_back(out);
  o.where = mask;
  call_ufunc(OpId::divide, in, o);
  CHECK(take_fp_errors() == 0);
  CHECK(at(out, 0) == 7.0);
  CHECK(at(out, 1) == 0.5);
  CHECK(at(out, 2) == 7.0);
  CHECK(at(out, 3) == 0.25);
}

TEST_CASE("float reductions report overflow and invalid", "[stats][reduce]") {
  take_fp_errors();
  ReduceOptions opts;
  ndarray r = reduce(OpId::add, vec({1e308, 1e308, 1.0}), opts);
  CHECK(std::isinf(at(r, 0)));
  CHECK((take_fp_errors() & FpeOverflow) != 0);
  reduce(OpId::add, vec({std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}), opts);
  CHECK((take_fp_errors() & FpeInvalid) != 0);
  reduce(OpId::maximum, vec({1.0, std::nan("")}), opts);
  CHECK(take_fp_errors() == 0);  // NaN propagates quietly, as in NumPy
}

TEST_CASE("ufunc.at updates a reversed, strided view", "[stats][at]") {
  ndarray a = vec({0, 1, 2, 3, 4, 5});
  // a[::-2]: elements 5, 3, 1
  ndarray v = a.with_geometry(a.offset() + 5 * 8, DType::Float64, Shape{3}, Strides{-16});
  Shape s3{3};
  ndarray idx = empty(s3, DType::Int64);
  int64_t ii[3] = {0, 2, 2};
  for (int i = 0; i < 3; ++i) reinterpret_cast<int64_t*>(idx.data())[i] = ii[i];
  ufunc_at(OpId::add, v, idx, Operand{scalar_array(Scalar::from_double(10.0)), false});
  CHECK(at(a, 5) == 15.0);
  CHECK(at(a, 1) == 21.0);
  CHECK(at(a, 3) == 3.0);
}
