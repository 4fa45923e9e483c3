// Graph IR, recording and npc::compile (views, casts, writes, breaks, caching).
#include <catch2/catch.hpp>
#include <algorithm>

#include "npc/compile.hpp"
#include "npc/creation.hpp"
#include "npc/graph.hpp"
#include "npc/ops.hpp"

using namespace npc;

namespace {
std::vector<double> values(const ndarray& a) {
  ndarray c = a.astype(DType::Float64).copy();
  std::vector<double> v(static_cast<size_t>(c.size()));
  for (int64_t i = 0; i < c.size(); ++i) v[i] = reinterpret_cast<const double*>(c.data())[i];
  return v;
}
ndarray iota2(int64_t r, int64_t c) {
  Shape s{r * c};
  return arange(Scalar::from_int(0), Scalar::from_int(r * c), Scalar::from_int(1), DType::Float64).reshape(Shape{r, c});
}
}  // namespace

TEST_CASE("graph: builders intern structurally equal nodes", "[tracer]") {
  ir::Graph g;
  auto x = g.input(0, DType::Float32, ir::static_shape(Shape{2, 3}));
  auto c1 = g.constant(Scalar::from_double(2.0));
  auto c2 = g.constant(Scalar::from_double(2.0));
  REQUIRE(c1 == c2);
  auto b1 = g.broadcast(g.cast(c1, DType::Float32), x->shape);
  auto b2 = g.broadcast(g.cast(c2, DType::Float32), x->shape);
  REQUIRE(b1 == b2);
  std::vector<ir::NodeRef> args{x, b1};
  auto m1 = g.ufunc(OpId::multiply, args, DType::Float32);
  auto m2 = g.ufunc(OpId::multiply, args, DType::Float32);
  REQUIRE(m1 == m2);
  REQUIRE(m1->dtype == DType::Float32);
  REQUIRE(m1->shape == x->shape);
  // Identity views and same-dtype casts are the node itself.
  REQUIRE(g.cast(x, DType::Float32) == x);
  std::vector<int64_t> id{0, 1};
  REQUIRE(g.permute(x, id) == x);
  g.outputs = {m1};
  ir::verify(g, "test");
  auto text = g.str();
  REQUIRE(text.find("multiply(%0, %3) : float32(2, 3)") != std::string::npos);
  REQUIRE(text.find("return %4") != std::string::npos);
}

TEST_CASE("graph: verifier rejects missing casts and broadcasts", "[tracer]") {
  ir::Graph g;
  auto x = g.input(0, DType::Float32, ir::static_shape(Shape{3}));
  auto y = g.input(1, DType::Float64, ir::static_shape(Shape{3}));
  std::vector<ir::NodeRef> args{x, y};
  g.ufunc(OpId::add, args, DType::Float64);
  REQUIRE_THROWS_AS(ir::verify(g, "bad"), ir::VerifyError);
  ir::Graph h;
  auto a = h.input(0, DType::Float64, ir::static_shape(Shape{3}));
  auto b = h.input(1, DType::Float64, ir::static_shape(Shape{1}));
  std::vector<ir::NodeRef> ab{a, b};
  h.ufunc(OpId::add, ab, DType::Float64);
  try {
    ir::verify(h, "mypass");
    FAIL("no error");
  } catch (const ir::VerifyError& e) {
    REQUIRE(std::string(e.what()).find("mypass") != std::string::npos);
  }
}

TEST_CASE("graph: dce keeps live nodes, symbolic shapes print", "[tracer]") {
  ir::Graph g;
  int32_t s0 = g.add_symbol(0, 0, 5);
  ir::SymShape sh{ir::Dim::sym(s0), ir::Dim::fixed(3)};
  auto x = g.input(0, DType::Float64, sh);
  g.cast(x, DType::Float32);  // dead
  std::vector<int64_t> perm{1, 0};
  auto t = g.permute(x, perm);
  g.outputs = {t};
  auto before = g.nodes().size();
  ir::Graph r = ir::run_pass(std::move(g), ir::dce, "dce");
  REQUIRE(r.nodes().size() == before - 1);
  REQUIRE(ir::sym_shape_str(r.outputs[0]->shape) == "(3, s0)");
  ir::verify(r, "dce");
}

TEST_CASE("graph: a pruned or read-back graph still interns what it holds", "[tracer]") {
  // Note [intern table of a finished graph]: dce's copy has no intern table and a graph
  // without dead nodes or one read back drops it; building on them rebuilds it.
  auto build = [](ir::Graph& g, bool dead) {
    auto x = g.input(0, DType::Float64, ir::static_shape(Shape{4}));
    std::vector<ir::NodeRef> xx{x, x};
    if (dead) g.cast(x, DType::Float32);
    auto m = g.ufunc(OpId::multiply, xx, DType::Float64);
    std::vector<ir::NodeRef> one{m};
    g.outputs = {g.ufunc(OpId::log, one, DType::Float64)};
  };
  for (int round = 0; round < 3; ++round) {
    ir::Graph g;
    build(g, round == 0);
    ir::Graph r = round == 2 ? ir::deserialize(ir::serialize(g)) : ir::dce(std::move(g));
    const size_t n = r.nodes().size();
    const size_t h = r.structural_hash();
    auto x = r.nodes()[0];
    std::vector<ir::NodeRef> xx{x, x};
    auto m = r.ufunc(OpId::multiply, xx, DType::Float64);
    REQUIRE(m == r.nodes()[1]);  // the existing node, not a new one
    REQUIRE(r.evaluations(m) == 2);
    REQUIRE(r.nodes().size() == n);
    std::vector<ir::NodeRef> one{m};
    auto e = r.ufunc(OpId::exp, one, DType::Float64);
    REQUIRE(r.nodes().size() == n + 1);
    REQUIRE(r.ufunc(OpId::exp, one, DType::Float64) == e);
    REQUIRE(r.structural_hash() == h);  // exp is dead
    ir::verify(r, "rebuilt table");
  }
}

TEST_CASE("graph: evaluation order keeps the place of each merged evaluation", "[tracer]") {
  // Note [merged evaluations]: u = a * a; v = log(a); w = a * a evaluates the product twice.
  ir::Graph g;
  auto a = g.input(0, DType::Float64, ir::static_shape(Shape{3}));
  std::vector<ir::NodeRef> aa{a, a}, one{a};
  auto u = g.ufunc(OpId::multiply, aa, DType::Float64);
  auto v = g.ufunc(OpId::log, one, DType::Float64);
  g.cast(a, DType::Float32);  // dead
  auto w = g.ufunc(OpId::multiply, aa, DType::Float64);
  REQUIRE(u == w);
  std::vector<ir::NodeRef> uv{u, v};
  g.outputs = {g.ufunc(OpId::add, uv, DType::Float64)};
  auto ids = [](const ir::Graph& x) {
    std::vector<std::string> r;
    for (uint32_t id : x.evaluation_order()) r.push_back(std::string(ir::kind_name(x.nodes()[id]->kind)) + ":" + std::to_string(id));
    return r;
  };
  const std::string mul = "ufunc:" + std::to_string(u->id), lg = "ufunc:" + std::to_string(v->id);
  auto order = ids(g);
  REQUIRE(std::count(order.begin(), order.end(), mul) == 2);
  REQUIRE(std::find(order.begin(), order.end(), mul) < std::find(order.begin(), order.end(), lg));
  REQUIRE(order[order.size() - 2] == mul);  // the second product, after the log and the cast
  ir::Graph r = ir::run_pass(std::move(g), ir::dce, "dce");
  std::vector<std::string> kinds;
  for (uint32_t id : r.evaluation_order()) kinds.push_back(std::string(ir::kind_name(r.nodes()[id]->kind)));
  REQUIRE(kinds == std::vector<std::string>{"input", "ufunc", "ufunc", "ufunc", "ufunc"});
  REQUIRE(r.evaluations(r.nodes()[r.evaluation_order()[1]]) == 2);
  REQUIRE(r.evaluation_order()[1] == r.evaluation_order()[3]);
}

TEST_CASE("interpret: views, casts and functionalized writes", "[tracer]") {
  ir::Graph g;
  auto x = g.input(0, DType::Float64, ir::static_shape(Shape{2, 3}));
  std::vector<int64_t> ss{1, 1, 0, 2};  // x[1:, ::2]
  auto region = g.slice(x, ss, ir::static_shape(Shape{1, 2}));
  auto v = g.broadcast(g.constant(Scalar::from_double(-1)), region->shape);
  auto w = g.write(x, region, v);
  std::vector<int64_t> perm{1, 0};
  g.outputs = {g.cast(g.permute(w, perm), DType::Int32)};
  g.writebacks = {{0, w}};
  ir::verify(g, "test");
  ndarray a = iota2(2, 3);
  std::vector<ndarray> in{a};
  auto out = ir::interpret(g, ir::RunArgs{in, {}});
  REQUIRE(values(a) == std::vector<double>{0, 1, 2, -1, 4, -1});
  REQUIRE(out[0].dtype() == DType::Int32);
  REQUIRE(out[0].shape() == Shape{3, 2});
  REQUIRE(values(out[0]) == std::vector<double>{0, -1, 1, 4, 2, -1});
}

TEST_CASE("compile: views, copies and writes replay like eager", "[tracer]") {
  auto body = [](const std::vector<ndarray>& a) {
    ndarray t = a[0].T();                    // a view
    ndarray c = t.astype(DType::Float32);    // a copy
    ndarray v = a[0].reshape(Shape{-1});     // a view of the input
    ndarray row = v.with_geometry(v.offset() + 8, v.dtype(), Shape{2}, Strides{16});  // v[1::2]
    row.fill(Scalar::from_double(7));        // writes through to the input
    return std::vector<ndarray>{c, t};
  };
  auto f = npc::compile(body, {.backend = "eager"});
  for (int call = 0; call < 3; ++call) {
    ndarray a = iota2(2, 2), e = iota2(2, 2);
    auto got = f({a});
    auto want = body({e});
    REQUIRE(values(a) == values(e));
    REQUIRE(got[0].dtype() == want[0].dtype());
    REQUIRE(got[0].shape() == want[0].shape());
    REQUIRE(values(got[0]) == values(want[0]));
    REQUIRE(values(got[1]) == values(want[1]));
  }
  REQUIRE(f.stats().traces == 1);
  REQUIRE(f.stats().cache_hits == 2);
  REQUIRE(f.graphs().size() == 1);
  ir::verify(*f.graphs()[0], "test");
}

TEST_CASE("compile: a concrete value is a graph break; results equal eager", "[tracer]") {
  auto body = [](const std::vector<ndarray>& a) {
    ndarray t = a[0].T().copy();
    double first = t.item(std::vector<int64_t>{0, 1}).as_double();  // needs data: break
    ndarray u = t.astype(DType::Int64);
    u.fill(Scalar::from_double(first));
    return std::vector<ndarray>{u, t};
  };
  auto f = npc::compile(body, {.backend = "eager"});
  ndarray a = iota2(2, 2);
  auto got = f({a});
  auto want = body({iota2(2, 2)});
  REQUIRE(values(got[0]) == values(want[0]));
  REQUIRE(values(got[1]) == values(want[1]));
  REQUIRE(f.stats().graph_breaks == 1);
  auto g = npc::compile(body, {.backend = "eager", .fullgraph = true});
  REQUIRE_THROWS_AS(g({iota2(2, 2)}), GraphBreakError);
}

TEST_CASE("compile: shape changes recompile once, then dims are symbolic", "[tracer]") {
  auto body = [](const std::vector<ndarray>& a) { return std::vector<ndarray>{a[0].T()}; };
  auto f = npc::compile(body, {.backend = "eager"});
  for (int64_t n : {3, 4, 5, 6}) {
    auto out = f({iota2(n, 2)});
    REQUIRE(out[0].shape() == Shape{2, n});
    REQUIRE(values(out[0]) == values(iota2(n, 2).T()));
  }
  REQUIRE(f.stats().traces == 2);
  REQUIRE(f.stats().recompiles == 1);
  REQUIRE(f.graphs().back()->symbols().size() == 1);
}

TEST_CASE("compile: ufuncs, reductions and out= record explicit casts and equal eager", "[tracer]") {
  auto body = [](const std::vector<ndarray>& a) {
    std::vector<Operand> in{{a[0], false}, {scalar_array(Scalar::from_double(0.5)), true}};
    ndarray y = call_ufunc(OpId::multiply, in).at(0);          // float32 * weak float -> float32
    std::vector<Operand> in2{{y, false}, {a[1], false}};       // float32 + int16 -> float32
    ndarray z = call_ufunc(OpId::add, in2).at(0);
    ReduceOptions ro;
    ro.axes = std::vector<int64_t>{0};
    ndarray s = reduce(OpId::add, z, ro);
    UfuncOptions uo;
    uo.out = {a[0]};                                           // in place into the input
    std::vector<Operand> in3{{a[0], false}, {z, false}};
    call_ufunc(OpId::subtract, in3, uo);
    return std::vector<ndarray>{z, s};
  };
  auto make = [] {
    ndarray x = arange(Scalar::from_int(0), Scalar::from_int(6), Scalar::from_int(1), DType::Float32).reshape(Shape{2, 3});
    ndarray k = arange(Scalar::from_int(1), Scalar::from_int(4), Scalar::from_int(1), DType::Int16);
    return std::vector<ndarray>{x, k};
  };
  auto f = npc::compile(body, {.backend = "eager"});
  for (int call = 0; call < 2; ++call) {
    auto a = make(), b = make();
    auto got = f(a);
    auto want = body(b);
    for (size_t i = 0; i < got.size(); ++i) {
      REQUIRE(got[i].dtype() == want[i].dtype());
      REQUIRE(got[i].shape() == want[i].shape());
      REQUIRE(values(got[i]) == values(want[i]));
    }
    REQUIRE(values(a[0]) == values(b[0]));  // the write-back into the input
  }
  REQUIRE(f.stats().traces == 1);
  const ir::Graph& g = *f.graphs().at(0);
  ir::verify(g, "test");
  // Every ufunc node's operands share its loop dtype; the int16 input was cast explicitly.
  bool cast_int16 = false;
  for (ir::NodeRef n : g.nodes()) {
    if (n->kind == ir::NodeKind::Cast && n->args[0]->dtype == DType::Int16 && n->dtype == DType::Float32) cast_int16 = true;
    if (n->kind == ir::NodeKind::Ufunc)
      for (ir::NodeRef a : n->args) REQUIRE(a->dtype == DType::Float32);
  }
  REQUIRE(cast_int16);
  REQUIRE(g.writebacks.size() == 1);
}
