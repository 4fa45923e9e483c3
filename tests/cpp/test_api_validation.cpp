// Catch2 tests: every public C++ entry point rejects invalid arguments with the documented
// npc::*Error instead of reading or writing out of bounds (run under ASan/UBSan by
// `make test-asan`, where a missing check is a crash rather than a silent wrong answer).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <npc/linalg.hpp>
#include <npc/npc.hpp>
#include <npc/ops.hpp>
#include <npc/random.hpp>
#include <npc/compile.hpp>
#include <npc/fusion.hpp>
#include <npc/graph.hpp>

using namespace npc;

namespace {
Shape sh(std::initializer_list<int64_t> s) { return Shape(s); }
ndarray f64(std::initializer_list<int64_t> s) { return zeros(sh(s)); }
DType bad_dtype() { return static_cast<DType>(200); }
OpId bad_op() { return static_cast<OpId>(60000); }
}  // namespace

TEST_CASE("errors: LinAlgError is an npc error of errors.hpp", "[validation]") {
  const LinAlgError e("Singular matrix");
  const std::runtime_error& base = e;
  CHECK(std::string(base.what()) == "Singular matrix");
}

TEST_CASE("dtype: out-of-range DType values are rejected", "[validation]") {
  CHECK_THROWS_AS(itemsize(bad_dtype()), TypeError);
  CHECK_THROWS_AS(name(bad_dtype()), TypeError);
  CHECK_THROWS_AS(kind(bad_dtype()), TypeError);
  CHECK_THROWS_AS(kind_char(bad_dtype()), TypeError);
  CHECK_THROWS_AS(promote_types(bad_dtype(), DType::Float64), TypeError);
  CHECK_THROWS_AS(promote_types(DType::Float64, bad_dtype()), TypeError);
  CHECK_THROWS_AS(can_cast(bad_dtype(), DType::Float64, Casting::Safe), TypeError);
  CHECK_THROWS_AS(real_dtype(bad_dtype()), TypeError);
  CHECK_THROWS_AS(complex_dtype(bad_dtype()), TypeError);
  const DType ts[] = {DType::Int8, bad_dtype()};
  CHECK_THROWS_AS(result_type(ts), TypeError);
  CHECK_THROWS_AS(zeros(sh({2}), bad_dtype()), TypeError);
  CHECK_THROWS_AS(empty(sh({2}), bad_dtype()), TypeError);
  CHECK_THROWS_AS(f64({2}).astype(bad_dtype()), TypeError);
  CHECK_THROWS_AS(f64({2}).view(bad_dtype()), TypeError);
  Scalar s = Scalar::from_int(1);
  CHECK_THROWS_AS(s.cast(bad_dtype()), TypeError);
  s.dtype = bad_dtype();
  CHECK_THROWS_AS(s.as_double(), TypeError);
  CHECK_THROWS_AS(full(sh({2}), Scalar::from_int(1), bad_dtype()), TypeError);
  CHECK_THROWS_AS(can_cast(DType::Int8, DType::Int16, static_cast<Casting>(77)), ValueError);
  CHECK_THROWS_AS(dtype_from_name("float128"), std::invalid_argument);
  CHECK_THROWS_AS(casting_from_name("sometimes"), std::invalid_argument);
  CHECK_THROWS_AS(order_from_name("Z"), ValueError);
}

TEST_CASE("ndarray constructor: the view must fit its storage", "[validation]") {
  auto st = Storage::allocate(16);
  // Valid views: the whole buffer, a strided and a reversed one, an empty one anywhere.
  CHECK_NOTHROW(ndarray(st, 0, DType::Float64, sh({2}), Strides{8}));
  CHECK_NOTHROW(ndarray(st, 8, DType::Float64, sh({2}), Strides{-8}));
  CHECK_NOTHROW(ndarray(st, 0, DType::Float64, sh({5}), Strides{0}));
  CHECK_NOTHROW(ndarray(st, 16, DType::Float64, sh({0}), Strides{8}));
  // Shape {10} over 16 bytes, an offset past the end, a reversed view reaching before the
  // start, a huge offset, a negative offset, a null storage, a bad dtype, wrong stride count.
  CHECK_THROWS_AS(ndarray(st, 0, DType::Float64, sh({10}), Strides{8}), ValueError);
  CHECK_THROWS_AS(ndarray(st, 16, DType::Float64, sh({1}), Strides{8}), ValueError);
  CHECK_THROWS_AS(ndarray(st, 0, DType::Float64, sh({2}), Strides{-8}), ValueError);
  CHECK_THROWS_AS(ndarray(st, int64_t{1} << 40, DType::Float64, sh({}), Strides{}), ValueError);
  CHECK_THROWS_AS(ndarray(st, -8, DType::Float64, sh({1}), Strides{8}), ValueError);
  CHECK_THROWS_AS(ndarray(nullptr, 0, DType::Float64, sh({1}), Strides{8}), ValueError);
  CHECK_THROWS_AS(ndarray(st, 0, bad_dtype(), sh({1}), Strides{8}), TypeError);
  CHECK_THROWS_AS(ndarray(st, 0, DType::Float64, sh({1}), Strides{}), ValueError);
  CHECK_THROWS_AS(ndarray(st, 0, DType::Float64, sh({-1}), Strides{8}), ValueError);
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  CHECK_THROWS_AS(ndarray(st, 0, DType::Float64, sh({3}), Strides{big}), ValueError);
  CHECK_THROWS_AS(ndarray(st, 0, DType::Float64, sh({3}), Strides{std::numeric_limits<int64_t>::min()}), ValueError);
  // from_memory wraps exactly the bytes the strides reach.
  double buf[4] = {1, 2, 3, 4};
  ndarray rev = from_memory(buf + 3, DType::Float64, sh({4}), Strides{-8});
  CHECK(rev.item(std::vector<int64_t>{0}).as_double() == 4);
  CHECK(rev.item(std::vector<int64_t>{3}).as_double() == 1);
  ndarray every_other = from_memory(buf, DType::Float64, sh({2}), Strides{16});
  CHECK(every_other.item(std::vector<int64_t>{1}).as_double() == 3);
  CHECK_THROWS_AS(from_memory(nullptr, DType::Float64, sh({2}), Strides{8}), ValueError);
  CHECK_THROWS_AS(from_memory(buf, DType::Float64, sh({2}), Strides{}), ValueError);
}

TEST_CASE("with_geometry: a view must fit its storage", "[validation]") {
  ndarray a = f64({2});  // 16 bytes
  CHECK(a.with_geometry(8, DType::Float64, sh({2}), Strides{-8}).item(std::vector<int64_t>{1}).as_double() == 0);
  CHECK_NOTHROW(a.with_geometry(0, DType::Float64, sh({4}), Strides{0}));
  CHECK_NOTHROW(a.with_geometry(0, DType::Int32, sh({2, 2}), Strides{8, 4}));
  CHECK_NOTHROW(a.with_geometry(int64_t{1} << 40, DType::Float64, sh({0}), Strides{8}));  // empty: reaches nothing
  // Shape {10} over 16 bytes, a reversed view reaching before the start, an offset past the
  // end, a huge offset, a negative one, strides whose extent overflows.
  CHECK_THROWS_AS(a.with_geometry(0, DType::Float64, sh({10}), Strides{8}), ValueError);
  CHECK_THROWS_AS(a.with_geometry(0, DType::Float64, sh({2}), Strides{-8}), ValueError);
  CHECK_THROWS_AS(a.with_geometry(16, DType::Float64, sh({1}), Strides{8}), ValueError);
  CHECK_THROWS_AS(a.with_geometry(int64_t{1} << 40, DType::Float64, sh({}), Strides{}), ValueError);
  CHECK_THROWS_AS(a.with_geometry(-8, DType::Float64, sh({1}), Strides{8}), ValueError);
  CHECK_THROWS_AS(a.with_geometry(0, DType::Float64, sh({3}), Strides{std::numeric_limits<int64_t>::max() / 2}),
                  ValueError);
  CHECK_THROWS_AS(a.with_geometry(0, DType::Complex128, sh({2}), Strides{16}), ValueError);
  CHECK_THROWS_AS(a.with_geometry(0, bad_dtype(), sh({1}), Strides{8}), TypeError);
  // from_memory with the owner's block: views of the block around the array fit.
  double buf[6] = {0, 1, 2, 3, 4, 5};
  std::span<std::byte> block(reinterpret_cast<std::byte*>(buf), sizeof(buf));
  ndarray odd = from_memory(buf + 1, DType::Float64, sh({3}), Strides{16}, {}, true, block);  // 1, 3, 5
  CHECK(odd.item(std::vector<int64_t>{2}).as_double() == 5);
  CHECK(odd.with_geometry(0, DType::Float64, sh({6}), Strides{8}).item(std::vector<int64_t>{0}).as_double() == 0);
  CHECK_THROWS_AS(odd.with_geometry(0, DType::Float64, sh({7}), Strides{8}), ValueError);
  ndarray rev = from_memory(buf + 4, DType::Float64, sh({2}), Strides{-16}, {}, true, block);  // 4, 2
  CHECK(rev.item(std::vector<int64_t>{1}).as_double() == 2);
  CHECK_NOTHROW(rev.with_geometry(0, DType::Float64, sh({6}), Strides{8}));
  // An array reaching outside the block it is given.
  CHECK_THROWS_AS(from_memory(buf + 4, DType::Float64, sh({3}), Strides{8}, {}, true, block), ValueError);
  CHECK_THROWS_AS(from_memory(buf + 1, DType::Float64, sh({2}), Strides{-16}, {}, true, block), ValueError);
}

TEST_CASE("ndarray methods: bad axes, indices and geometry", "[validation]") {
  ndarray a = f64({2, 3});
  CHECK_THROWS_AS(a.shape(2), AxisError);
  CHECK_THROWS_AS(a.item(std::vector<int64_t>{2, 0}), IndexError);
  CHECK_THROWS_AS(a.item(std::vector<int64_t>{0}), IndexError);
  CHECK_THROWS_AS(a.item(), ValueError);
  const int64_t p3[] = {0, 1, 1};
  CHECK_THROWS_AS(a.transpose(p3), ValueError);
  const int64_t p1[] = {0};
  CHECK_THROWS_AS(a.transpose(p1), ValueError);
  const int64_t p5[] = {0, 5};
  CHECK_THROWS_AS(a.transpose(p5), AxisError);
  const int64_t r7[] = {7};
  CHECK_THROWS_AS(a.reshape(r7), ValueError);
  const int64_t r2[] = {-1, -1};
  CHECK_THROWS_AS(a.reshape(r2), ValueError);
  const int64_t s1[] = {8};
  CHECK_THROWS_AS(a.set_strides(s1), ValueError);
  const int64_t s2[] = {800, 8};
  CHECK_THROWS_AS(a.set_strides(s2), ValueError);
  ndarray ro = f64({2});
  ro.set_writeable(false);
  CHECK_THROWS_AS(copy_into(ro, f64({2})), ValueError);
  CHECK_THROWS_AS(copy_into(f64({2}), f64({3})), ValueError);
}

TEST_CASE("creation: bad sizes", "[validation]") {
  const int64_t neg[] = {-1};
  CHECK_THROWS_AS(zeros(neg), ValueError);
  const int64_t huge[] = {int64_t{1} << 62, 4};
  CHECK_THROWS_AS(empty(huge), ValueError);
  CHECK_THROWS_AS(linspace(0, 1, -1), ValueError);
  CHECK_THROWS_AS(logspace(0, 1, -1), ValueError);
  CHECK_THROWS_AS(eye(-1), ValueError);
  CHECK_THROWS_AS(eye(2, -3), ValueError);
  CHECK_THROWS_AS(arange(Scalar::from_int(0), Scalar::from_int(5), Scalar::from_int(0), DType::Int64), ValueError);
  const int64_t bad_shape[] = {3};
  CHECK_THROWS_AS(empty_like(f64({2}), std::nullopt, Order::K, Shape{-2}), ValueError);
  (void)bad_shape;
}

TEST_CASE("ufuncs: bad op ids, operand counts and masks", "[validation]") {
  CHECK_THROWS_AS(op_info(bad_op()), ValueError);
  CHECK_THROWS_AS(op_info(OpId::kCount), ValueError);
  Operand x{f64({3})}, y{f64({3})};
  std::vector<Operand> two{x, y};
  CHECK_THROWS_AS(call_ufunc(bad_op(), two), ValueError);
  CHECK_THROWS_AS(call_ufunc(OpId::kCount, two), ValueError);
  CHECK_THROWS_AS(call_ufunc(OpId::add, std::vector<Operand>{x}), TypeError);
  const DType dts[] = {DType::Float64, DType::Float64};
  const bool weak[] = {false, false};
  CHECK_THROWS_AS(resolve_loop(bad_op(), dts, weak), ValueError);
  CHECK_THROWS_AS(resolve_loop(OpId::add, std::span<const DType>(dts, 1), weak), TypeError);
  // where= must be a bool array (NumPy casts it under 'safe').
  UfuncOptions o;
  o.where = f64({3});
  CHECK_THROWS_AS(call_ufunc(OpId::add, two, o), TypeError);
  o.where = zeros(sh({3}), DType::Int64);
  CHECK_THROWS_AS(call_ufunc(OpId::add, two, o), TypeError);
  o.where = zeros(sh({4}), DType::Bool);
  CHECK_THROWS_AS(call_ufunc(OpId::add, two, o), ValueError);
  UfuncOptions oo;
  oo.out = {f64({3}), f64({3})};
  CHECK_THROWS_AS(call_ufunc(OpId::add, two, oo), ValueError);
  oo.out = {f64({4})};
  CHECK_THROWS_AS(call_ufunc(OpId::add, two, oo), ValueError);
  // Operands that are not arrays of a valid dtype.
  Operand bad{f64({3})};
  CHECK_THROWS_AS(call_ufunc(OpId::add, std::vector<Operand>{bad, Operand{f64({4})}}), ValueError);
  CHECK_THROWS_AS(outer(bad_op(), x, y), ValueError);
  CHECK_THROWS_AS(outer(OpId::sin, x, y), ValueError);
}

TEST_CASE("reductions: bad ops, axes and masks", "[validation]") {
  ndarray a = f64({2, 3});
  CHECK_THROWS_AS(reduce(bad_op(), a), ValueError);
  CHECK_THROWS_AS(reduce(OpId::sin, a), ValueError);
  ReduceOptions r;
  r.axes = std::vector<int64_t>{2};
  CHECK_THROWS_AS(reduce(OpId::add, a, r), AxisError);
  r.axes = std::vector<int64_t>{0, 0};
  CHECK_THROWS_AS(reduce(OpId::add, a, r), ValueError);
  ReduceOptions w;
  w.where = f64({2, 3});
  CHECK_THROWS_AS(reduce(OpId::add, a, w), TypeError);
  w.where = zeros(sh({4}), DType::Bool);
  CHECK_THROWS_AS(reduce(OpId::add, a, w), ValueError);
  ReduceOptions out;
  out.out = f64({5});
  CHECK_THROWS_AS(reduce(OpId::add, a, out), ValueError);
  CHECK_THROWS_AS(accumulate(bad_op(), a, 0), ValueError);
  CHECK_THROWS_AS(accumulate(OpId::add, a, 2), AxisError);
  CHECK_THROWS_AS(accumulate(OpId::add, a, 0, std::nullopt, f64({3})), ValueError);
  CHECK_THROWS_AS(arg_reduce(bad_op(), a, 0), ValueError);
  CHECK_THROWS_AS(arg_reduce(OpId::add, a, 0), TypeError);
  CHECK_THROWS_AS(arg_reduce(OpId::argmax, a, 2), AxisError);
  CHECK_THROWS_AS(arg_reduce(OpId::argmax, f64({0}), std::nullopt), ValueError);
  CHECK_THROWS_AS(reduce_loop_dtype(bad_op(), DType::Float64, std::nullopt, std::nullopt), ValueError);
  CHECK_THROWS_AS(reduce_loop(bad_op(), DType::Float64, std::nullopt, std::nullopt, false), ValueError);
  CHECK_THROWS_AS(ufunc_at(bad_op(), f64({3}), zeros(sh({1}), DType::Int64), std::nullopt), ValueError);
  CHECK_THROWS_AS(ufunc_at(OpId::add, f64({3}), zeros(sh({1}), DType::Int64), std::nullopt), ValueError);
  CHECK_THROWS_AS(ufunc_at(OpId::negative, f64({3}), full(sh({1}), Scalar::from_int(3), DType::Int64), std::nullopt),
                  IndexError);
  CHECK_THROWS_AS(ufunc_at(OpId::negative, f64({3}), f64({1}), std::nullopt), IndexError);
}

TEST_CASE("where, broadcasting", "[validation]") {
  CHECK_THROWS_AS(where(zeros(sh({2}), DType::Bool), Operand{f64({3})}, Operand{f64({3})}), ValueError);
  const Shape shapes[] = {sh({2}), sh({3})};
  CHECK_THROWS_AS(broadcast_shapes(shapes), ValueError);
  const int64_t to[] = {3};
  CHECK_THROWS_AS(broadcast_to(f64({2}), to), ValueError);
  const int64_t neg[] = {-3};
  CHECK_THROWS_AS(broadcast_to(f64({1}), neg), ValueError);
}

TEST_CASE("shape functions: bad axes and mismatched lists", "[validation]") {
  ndarray a = f64({2, 3});
  const int64_t sh1[] = {1, 2}, ax3[] = {0, 1, 0}, ax1[] = {0};
  CHECK_THROWS_AS(roll(a, sh1, ax3), ValueError);
  const int64_t ax01[] = {0, 1};
  CHECK_THROWS_AS(roll(a, std::span<const int64_t>(), ax01), ValueError);
  CHECK(roll(a, sh1, ax1).shape() == a.shape());  // shifts broadcast against one axis
  CHECK(roll(a, std::span<const int64_t>(), ax1).shape() == a.shape());  // nothing to roll
  const int64_t ax5[] = {5};
  CHECK_THROWS_AS(roll(a, ax1, ax5), AxisError);
  CHECK_THROWS_AS(squeeze(a, std::vector<int64_t>{0}), ValueError);
  CHECK_THROWS_AS(squeeze(a, std::vector<int64_t>{4}), AxisError);
  CHECK_THROWS_AS(expand_dims(a, ax5), AxisError);
  CHECK_THROWS_AS(swapaxes(a, 0, 3), AxisError);
  CHECK_THROWS_AS(moveaxis(a, ax1, sh1), ValueError);
  CHECK_THROWS_AS(flip(a, std::vector<int64_t>{3}), AxisError);
  CHECK_THROWS_AS(diagonal(f64({3})), ValueError);
  CHECK_THROWS_AS(diagonal(a, 0, 0, 0), ValueError);
  CHECK_THROWS_AS(concatenate(std::vector<ndarray>{}), ValueError);
  CHECK_THROWS_AS(concatenate(std::vector<ndarray>{a, f64({2, 4})}, 0), ValueError);
  CHECK_THROWS_AS(concatenate(std::vector<ndarray>{a, a}, 2), AxisError);
  CHECK_THROWS_AS(concatenate(std::vector<ndarray>{a, a}, 0, std::nullopt, Casting::SameKind, &a), ValueError);
  CHECK_THROWS_AS(stack(std::vector<ndarray>{}), ValueError);
  CHECK_THROWS_AS(stack(std::vector<ndarray>{a, f64({3, 2})}), ValueError);
  CHECK_THROWS_AS(stack(std::vector<ndarray>{a, a}, 3), AxisError);
  CHECK_THROWS_AS(repeat(a, full(sh({1}), Scalar::from_int(-1), DType::Int64)), ValueError);
  CHECK_THROWS_AS(repeat(a, full(sh({4}), Scalar::from_int(1), DType::Int64), 0), ValueError);
  CHECK_THROWS_AS(repeat(a, f64({1}), 0), TypeError);
  CHECK_THROWS_AS(tril(f64({})), ValueError);
  CHECK_THROWS_AS(triu(f64({})), ValueError);
}

TEST_CASE("indexing: bad indices", "[validation]") {
  ndarray a = f64({2, 3});
  const IndexItem oob[] = {IndexItem(5)};
  CHECK_THROWS_AS(index(a, oob), IndexError);
  const IndexItem many[] = {IndexItem(0), IndexItem(0), IndexItem(0)};
  CHECK_THROWS_AS(index(a, many), IndexError);
  const IndexItem step0[] = {IndexItem(Slice{std::nullopt, std::nullopt, 0})};
  CHECK_THROWS_AS(index(a, step0), ValueError);
  const IndexItem fidx[] = {IndexItem(f64({2}))};
  CHECK_THROWS_AS(index(a, fidx), IndexError);
  const IndexItem bmask[] = {IndexItem(zeros(sh({5}), DType::Bool))};
  CHECK_THROWS_AS(index(a, bmask), IndexError);
  ndarray ro = f64({2});
  ro.set_writeable(false);
  const IndexItem zero[] = {IndexItem(0)};
  CHECK_THROWS_AS(index_assign(ro, zero, f64({})), ValueError);
  CHECK_THROWS_AS(index_assign(a, zero, f64({4})), ValueError);
  CHECK_THROWS_AS(assign_array(f64({2}), f64({3})), ValueError);
  CHECK_THROWS_AS(assign_array(ro, f64({2})), ValueError);
  CHECK_THROWS_AS(take(a, full(sh({1}), Scalar::from_int(6), DType::Int64)), IndexError);
  CHECK_THROWS_AS(take(a, f64({1})), TypeError);
  CHECK_THROWS_AS(take(a, zeros(sh({1}), DType::Int64), 2), AxisError);
  CHECK_THROWS_AS(take(f64({0}), zeros(sh({1}), DType::Int64), std::nullopt, ClipMode::Clip), IndexError);
  CHECK_THROWS_AS(put(a, full(sh({1}), Scalar::from_int(6), DType::Int64), f64({1})), IndexError);
  CHECK_THROWS_AS(put(f64({0}), zeros(sh({1}), DType::Int64), f64({1})), IndexError);
  put(a, zeros(sh({1}), DType::Int64), f64({0}));  // no values: nothing to write (NumPy)
  CHECK_THROWS_AS(put(ro, zeros(sh({1}), DType::Int64), f64({1})), ValueError);
  CHECK_THROWS_AS(put(a, f64({1}), f64({1})), TypeError);
  CHECK_THROWS_AS(compress(zeros(sh({3}), DType::Bool), a, 0), IndexError);
  CHECK_THROWS_AS(compress(zeros(sh({2}), DType::Bool), a, 5), AxisError);
  CHECK_THROWS_AS(nonzero(f64({})), ValueError);
}

TEST_CASE("sorting and searching: bad arguments", "[validation]") {
  ndarray a = f64({2, 3});
  CHECK_THROWS_AS(sort(a, 2), AxisError);
  CHECK_THROWS_AS(argsort(a, -3), AxisError);
  CHECK_THROWS_AS(lexsort(std::vector<ndarray>{}), TypeError);
  CHECK_THROWS_AS(lexsort(std::vector<ndarray>{f64({2}), f64({3})}), ValueError);
  CHECK_THROWS_AS(lexsort(std::vector<ndarray>{f64({2})}, 1), AxisError);
  const int64_t k5[] = {5};
  CHECK_THROWS_AS(partition(f64({3}), k5), ValueError);
  CHECK_THROWS_AS(argpartition(f64({3}), k5), ValueError);
  CHECK_THROWS_AS(partition(f64({3}), k5, 3), AxisError);
  CHECK_THROWS_AS(searchsorted(a, f64({1})), ValueError);
  CHECK_THROWS_AS(searchsorted(f64({3}), f64({1}), false, zeros(sh({2}), DType::Int64)), ValueError);
  CHECK_THROWS_AS(searchsorted(f64({3}), f64({1}), false, f64({3})), TypeError);
  CHECK_THROWS_AS(bincount(full(sh({2}), Scalar::from_int(-1), DType::Int64)), ValueError);
  CHECK_THROWS_AS(bincount(zeros(sh({2}), DType::Int64), f64({3})), ValueError);
  CHECK_THROWS_AS(bincount(zeros(sh({2}), DType::Int64), std::nullopt, -1), ValueError);
  CHECK_THROWS_AS(bincount(zeros(sh({2, 2}), DType::Int64)), ValueError);
  CHECK_THROWS_AS(bincount(f64({2})), TypeError);
  const ndarray coords[] = {f64({3})}, edges2[] = {f64({2}), f64({2})}, edges1[] = {f64({1})};
  CHECK_THROWS_AS(histogram_counts(coords, edges2), ValueError);
  CHECK_THROWS_AS(histogram_counts(coords, edges1), ValueError);
  const ndarray edges[] = {linspace(0, 1, 3)};
  CHECK_THROWS_AS(histogram_counts(coords, edges, f64({4})), ValueError);
  const ndarray coords2[] = {f64({3}), f64({4})}, edges22[] = {linspace(0, 1, 3), linspace(0, 1, 3)};
  CHECK_THROWS_AS(histogram_counts(coords2, edges22), ValueError);
  CHECK_THROWS_AS(monotonic(a), ValueError);
  CHECK_THROWS_AS(value_range(f64({0})), ValueError);
}

TEST_CASE("linalg: shapes, dtypes and modes", "[validation]") {
  CHECK_THROWS_AS(matmul(f64({}), f64({2})), ValueError);
  CHECK_THROWS_AS(matmul(f64({2, 3}), f64({2, 3})), ValueError);
  if (!lapack::available()) return;
  ndarray e2 = eye(2);
  // The examples of a heap corruption and an out-of-bounds read.
  CHECK_THROWS_AS(lapack::solve(e2, f64({3})), ValueError);
  CHECK_THROWS_AS(lapack::solve(e2, f64({2})), ValueError);
  CHECK_THROWS_AS(lapack::solve(e2, f64({3, 1})), ValueError);
  CHECK_THROWS_AS(lapack::solve(f64({2, 3}), f64({2, 1})), LinAlgError);
  CHECK_THROWS_AS(lapack::solve(f64({2}), f64({2, 1})), LinAlgError);
  CHECK_THROWS_AS(lapack::solve(f64({3, 2, 2}), f64({4, 2, 1})), ValueError);
  CHECK_THROWS_AS(lapack::solve(e2, zeros(sh({2, 1}), DType::Float32)), TypeError);
  CHECK_THROWS_AS(lapack::solve(e2.astype(DType::Int64), zeros(sh({2, 1}), DType::Int64)), TypeError);
  CHECK_THROWS_AS(lapack::inv(f64({2, 3})), LinAlgError);
  CHECK_THROWS_AS(lapack::inv(f64({3})), LinAlgError);
  CHECK_THROWS_AS(lapack::inv(f64({})), LinAlgError);
  CHECK_THROWS_AS(lapack::slogdet(f64({2, 3})), LinAlgError);
  CHECK_THROWS_AS(lapack::det(f64({3})), LinAlgError);
  CHECK_THROWS_AS(lapack::cholesky(f64({2, 3}), false), LinAlgError);
  CHECK_THROWS_AS(lapack::eigh(f64({2, 3}), true, true), LinAlgError);
  CHECK_THROWS_AS(lapack::eig(f64({2, 3}), true), LinAlgError);
  CHECK_THROWS_AS(lapack::svd(f64({3}), true, true), LinAlgError);
  CHECK_THROWS_AS(lapack::qr(f64({3}), "reduced"), LinAlgError);
  CHECK_THROWS_AS(lapack::qr(e2, "foo"), ValueError);
  CHECK_THROWS_AS(lapack::qr(zeros(sh({2, 2}), DType::Int32), "reduced"), TypeError);
  CHECK_THROWS_AS(lapack::lstsq(e2, f64({3, 1}), -1), LinAlgError);
  CHECK_THROWS_AS(lapack::lstsq(f64({1, 2, 2}), f64({2, 1}), -1), LinAlgError);
  CHECK_THROWS_AS(lapack::lstsq(e2, f64({2}), -1), LinAlgError);
  CHECK_THROWS_AS(lapack::lstsq(e2, zeros(sh({2, 1}), DType::Complex128), -1), TypeError);
  // A matrix dimension beyond LAPACK's 32-bit integers: rejected before any copy is made.
  auto st = Storage::allocate(8);
  ndarray tall(st, 0, DType::Float64, sh({int64_t{1} << 31, 2}), Strides{0, 0});
  CHECK_THROWS_AS(lapack::svd(tall, false, false), ValueError);
  CHECK_THROWS_AS(lapack::qr(tall, "r"), ValueError);
  // Valid calls still work (a 1-row right-hand side stack, an empty stack).
  ndarray x = lapack::solve(e2, ones(sh({2, 1})));
  CHECK(x.shape() == sh({2, 1}));
  CHECK(lapack::inv(f64({0, 2, 2})).shape() == sh({0, 2, 2}));
}

TEST_CASE("random: bad output arrays", "[validation]") {
  if (!random::available()) return;
  CHECK_THROWS_AS(random::standard_uniform(nullptr, f64({2})), ValueError);
  random::BitGen incomplete{};
  CHECK_THROWS_AS(random::standard_normal(&incomplete, f64({2})), ValueError);
  CHECK_THROWS_AS(random::shuffle(nullptr, f64({2})), ValueError);
}

TEST_CASE("graph IR and compiled graphs: bad ops and run arguments", "[validation]") {
  CHECK_THROWS_AS(ir::op_name(bad_op()), ValueError);
  ir::Graph g;
  ir::NodeRef x = g.input(0, DType::Float64, ir::static_shape(sh({2})));
  const ir::NodeRef two[] = {x, x};
  CHECK_THROWS_AS(g.ufunc(bad_op(), two, DType::Float64), ValueError);
  CHECK_THROWS_AS(g.input(1, bad_dtype(), ir::static_shape(sh({2}))), TypeError);
  g.outputs.push_back(g.ufunc(OpId::add, two, DType::Float64));
  // Arguments that do not fit the graph: too few, another size, dtype or rank.
  const std::vector<ndarray> none, wrong_size{f64({5})}, small{f64({1})}, wrong_dtype{zeros(sh({2}), DType::Int8)},
      wrong_rank{f64({2, 1})}, right{ones(sh({2}))};
  for (const auto* in : {&none, &wrong_size, &small, &wrong_dtype, &wrong_rank}) {
    CHECK_THROWS_AS(ir::interpret(g, ir::RunArgs{*in, {}}), ValueError);
    CHECK_THROWS_AS(fusion::compile_graph(g)(ir::RunArgs{*in, {}}), ValueError);
  }
  CHECK(ir::interpret(g, ir::RunArgs{right, {}})[0].item(std::vector<int64_t>{1}).as_double() == 2);
  CHECK_THROWS_AS(compile(nullptr), ValueError);
}

TEST_CASE("indexing: a slice step whose stride product overflows", "[validation]") {
  // a[::-2**63] of a float64 array: one element; the step times the stride does not fit.
  ndarray a = arange(Scalar::from_int(0), Scalar::from_int(3), Scalar::from_int(1), DType::Float64);
  const IndexItem big[] = {IndexItem(Slice{std::nullopt, std::nullopt, std::numeric_limits<int64_t>::min() + 1})};
  ndarray v = index(a, big);
  REQUIRE(v.shape() == sh({1}));
  CHECK(v.item(std::vector<int64_t>{0}).as_double() == 2);
}
