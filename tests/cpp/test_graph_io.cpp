// Graph serialization (Note [graph serialization] in src/tracer/graph_io.cpp): exact round trips
// of every node kind and interface field, and bad bytes (truncated, flipped, hostile) that
// raise ValueError without reading out of bounds (CI runs this file under ASan and UBSan).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "npc/errors.hpp"
#include "npc/graph.hpp"
#include "core/hash.hpp"
#include "tracer/byte_io.hpp"

using namespace npc;
using ir::Dim;
using ir::Graph;
using ir::NodeRef;
using ir::SymShape;

namespace {
SymShape dims(std::initializer_list<int64_t> s) { return ir::static_shape(std::vector<int64_t>(s)); }

Scalar scalar_of(DType t) {
  Scalar v;
  v.dtype = t;
  return v;
}

// Every field of a Scalar, bit for bit.
bool same_bits(const Scalar& a, const Scalar& b) {
  return a.dtype == b.dtype && a.b == b.b && a.i == b.i && a.u == b.u &&
         std::bit_cast<uint64_t>(a.f) == std::bit_cast<uint64_t>(b.f) &&
         std::bit_cast<uint64_t>(a.c.real()) == std::bit_cast<uint64_t>(b.c.real()) &&
         std::bit_cast<uint64_t>(a.c.imag()) == std::bit_cast<uint64_t>(b.c.imag());
}

// deserialize(serialize(g)) is g: text, hashes, structure, interface, evaluation data, values
// bit for bit, the same bytes again, and interning that still merges equal nodes.
Graph round_trip(const Graph& g) {
  const std::string bytes = ir::serialize(g);
  Graph h = ir::deserialize(bytes);
  REQUIRE(h.str() == g.str());
  REQUIRE(h.structural_hash() == g.structural_hash());
  REQUIRE(g.same_structure(h));
  REQUIRE(h.num_inputs() == g.num_inputs());
  REQUIRE(h.num_scalars() == g.num_scalars());
  REQUIRE(h.symbols().size() == g.symbols().size());
  for (size_t k = 0; k < g.symbols().size(); ++k) {
    REQUIRE(h.symbols()[k].input == g.symbols()[k].input);
    REQUIRE(h.symbols()[k].axis == g.symbols()[k].axis);
    REQUIRE(h.symbols()[k].hint == g.symbols()[k].hint);
  }
  REQUIRE(h.nodes().size() == g.nodes().size());
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    NodeRef a = g.nodes()[i], b = h.nodes()[i];
    REQUIRE(b->hash == a->hash);
    REQUIRE(h.evaluations(b) == g.evaluations(a));
    REQUIRE(b->value.has_value() == a->value.has_value());
    if (a->value) REQUIRE(same_bits(*a->value, *b->value));
  }
  REQUIRE(h.evaluation_order() == g.evaluation_order());
  auto ids = [](const std::vector<NodeRef>& v) {
    std::vector<uint32_t> r;
    for (NodeRef n : v) r.push_back(n->id);
    return r;
  };
  REQUIRE(ids(h.outputs) == ids(g.outputs));
  REQUIRE(h.writebacks.size() == g.writebacks.size());
  for (size_t k = 0; k < g.writebacks.size(); ++k) {
    REQUIRE(h.writebacks[k].first == g.writebacks[k].first);
    REQUIRE(h.writebacks[k].second->id == g.writebacks[k].second->id);
  }
  REQUIRE(h.input_writes.size() == g.input_writes.size());
  for (size_t k = 0; k < g.input_writes.size(); ++k) {
    REQUIRE(h.input_writes[k].at == g.input_writes[k].at);
    REQUIRE(h.input_writes[k].input == g.input_writes[k].input);
    REQUIRE(h.input_writes[k].value->id == g.input_writes[k].value->id);
  }
  REQUIRE(h.index_checks == g.index_checks);
  REQUIRE(h.owned_inputs == g.owned_inputs);
  REQUIRE(h.unread_outputs == g.unread_outputs);
  REQUIRE(h.calls.empty());
  REQUIRE(ir::serialize(h) == bytes);
  // Note [digest of a graph's bytes]: the hash deserialize() records is that of the bytes.
  uint64_t d[2];
  REQUIRE(h.serialized_digest(d));
  const Hash128 want = hash128(bytes.data(), bytes.size());
  REQUIRE((d[0] == want.lo && d[1] == want.hi));
  // Interning goes on as in the original: a node built again is the stored one.
  for (NodeRef n : h.nodes())
    if (n->kind == ir::NodeKind::Const) REQUIRE(h.constant(*n->value) == n);
  REQUIRE(h.nodes().size() == g.nodes().size());
  return h;
}

// Constants of each dtype family, with the values whose bits matter.
void add_constants(Graph& g, std::vector<NodeRef>& outs) {
  Scalar nan_payload = scalar_of(DType::Float64);
  nan_payload.f = std::bit_cast<double>(0x7ff80000deadbeefull);
  Scalar neg_nan = scalar_of(DType::Float32);
  neg_nan.f = -std::numeric_limits<double>::quiet_NaN();
  Scalar f16 = scalar_of(DType::Float16);
  f16.f = 0.1;  // not a float16 value: the stored double is kept as it was
  Scalar i8 = scalar_of(DType::Int8);
  i8.i = -128;
  Scalar u16 = scalar_of(DType::UInt16);
  u16.u = 65535;
  Scalar c64 = scalar_of(DType::Complex64);
  c64.c = {-0.0, std::numeric_limits<double>::infinity()};
  Scalar mixed = Scalar::from_int(7);
  mixed.f = 2.5;  // a field the dtype does not use still round-trips
  mixed.u = 99;
  const Scalar values[] = {
      Scalar::from_bool(true), Scalar::from_bool(false), Scalar::from_int(std::numeric_limits<int64_t>::min()),
      Scalar::from_int(-1), Scalar::from_uint(std::numeric_limits<uint64_t>::max()), Scalar::from_double(-0.0),
      Scalar::from_double(0.0), Scalar::from_double(std::numeric_limits<double>::infinity()),
      Scalar::from_double(std::numeric_limits<double>::denorm_min()), nan_payload, neg_nan, f16, i8, u16, c64,
      Scalar::from_complex({std::numeric_limits<double>::quiet_NaN(), -0.0}), mixed};
  for (const Scalar& v : values) outs.push_back(g.constant(v));
}

// One graph with every node kind, view kind and primitive, symbols, writes, gathers with
// index checks, reductions with initial values and every interface field.
Graph every_kind() {
  Graph g;
  const int32_t s0 = g.add_symbol(0, 0, 5);
  NodeRef x = g.input(0, DType::Float64, SymShape{Dim::sym(s0), Dim::fixed(4)});
  NodeRef y = g.input(1, DType::Float32, dims({3, 4}));
  NodeRef c = g.input(2, DType::Complex128, dims({3, 4}));
  NodeRef idx = g.input(3, DType::Int64, dims({2}));
  g.index_checks.push_back({3, 3, 0});
  NodeRef sc = g.scalar(0, DType::Float64);
  NodeRef sv = g.sym_value(s0);
  std::vector<NodeRef> outs{y};
  add_constants(g, outs);

  // Ufuncs: plain, merged twice (two evaluations), scalar math, a loop choice, output 1 of two.
  NodeRef scb = g.broadcast(sc, x->shape);
  NodeRef xs[2] = {x, scb};
  NodeRef sum = g.ufunc(OpId::add, xs, DType::Float64);
  REQUIRE(g.ufunc(OpId::add, xs, DType::Float64) == sum);
  outs.push_back(g.ufunc(OpId::multiply, xs, DType::Float64, 0, true));
  outs.push_back(g.ufunc(OpId::subtract, xs, DType::Float64, 0, false, false));
  outs.push_back(g.ufunc(OpId::divmod, xs, DType::Float64, 1));
  NodeRef one[1] = {y};
  outs.push_back(g.ufunc(OpId::sqrt, one, DType::Float32, 0, false, true));
  // Casts (one of a ufunc's out=), symbol values.
  outs.push_back(g.cast(y, DType::Float16, OpId::add));
  outs.push_back(g.cast(sv, DType::Float64));
  // Reductions: initial values, keepdims (a reshape of the reduction), several axes.
  outs.push_back(g.reduce(OpId::add, x, std::vector<int64_t>{1}, false, DType::Float64, Scalar::from_double(-0.0)));
  outs.push_back(g.reduce(OpId::maximum, y, std::vector<int64_t>{0, 1}, true, DType::Float32));
  outs.push_back(g.reduce(OpId::multiply, sum, std::vector<int64_t>{0}, false, DType::Float64,
                          Scalar::from_double(std::numeric_limits<double>::quiet_NaN())));
  // Views.
  NodeRef sl = g.slice(y, std::vector<int64_t>{2, -1, 0, 2}, dims({3, 2}));
  outs.push_back(sl);
  NodeRef yt = g.permute(y, std::vector<int64_t>{1, 0});
  outs.push_back(g.broadcast(y, dims({2, 3, 4})));
  outs.push_back(g.reshape(y, dims({12})));
  outs.push_back(g.reshape(x, SymShape{Dim::sym(s0), Dim::fixed(1), Dim::fixed(4)}));
  outs.push_back(g.component(c, false));
  outs.push_back(g.component(c, true));
  outs.push_back(g.strided(y, 11, std::vector<int64_t>{-4, -1}, dims({3, 2})));
  // Gathers: one index array (an input with its check), two (the second a broadcast constant).
  outs.push_back(g.gather(y, idx, 0));
  NodeRef k1 = g.broadcast(g.constant(Scalar::from_int(-4)), dims({2}));
  NodeRef two[2] = {idx, k1};
  outs.push_back(g.gather(y, two, 0));
  // A write into input 1 through a slice, written back; the write's place among evaluations.
  NodeRef region = g.slice(y, std::vector<int64_t>{0, 1, 1, 2}, dims({3, 2}));
  NodeRef val = g.broadcast(g.cast(g.constant(Scalar::from_double(1.5)), DType::Float32), dims({3, 2}));
  NodeRef w = g.write(y, region, val);
  g.writebacks.emplace_back(1, w);
  g.input_writes.push_back({static_cast<uint32_t>(g.evaluation_order().size()), 1, w});
  // Primitives.
  NodeRef yy[2] = {y, y};
  NodeRef cond = g.ufunc(OpId::greater, yy, DType::Bool);
  outs.push_back(g.prim(OpId::where, std::vector<NodeRef>{cond, y, w}, DType::Float32, y->shape));
  outs.push_back(g.prim(OpId::argmax, std::vector<NodeRef>{y}, DType::Int64, dims({3}), std::vector<int64_t>{1, 0}));
  outs.push_back(g.prim(OpId::argmin, std::vector<NodeRef>{y}, DType::Int64, dims({1, 4}), std::vector<int64_t>{0, 1}));
  outs.push_back(g.prim(OpId::cumsum, std::vector<NodeRef>{x}, DType::Float64, x->shape, std::vector<int64_t>{0}));
  outs.push_back(g.prim(OpId::cumprod, std::vector<NodeRef>{y}, DType::Float32, y->shape, std::vector<int64_t>{1}));
  outs.push_back(g.prim(OpId::sort, std::vector<NodeRef>{y}, DType::Float32, y->shape, std::vector<int64_t>{1, 1}));
  outs.push_back(g.prim(OpId::argsort, std::vector<NodeRef>{y}, DType::Int64, y->shape, std::vector<int64_t>{0, 0}));
  outs.push_back(g.prim(OpId::matmul, std::vector<NodeRef>{y, yt}, DType::Float32, dims({3, 3})));
  NodeRef y3 = g.reshape(y, dims({1, 3, 4}));
  outs.push_back(g.prim(OpId::matmul, std::vector<NodeRef>{y3, yt}, DType::Float32, dims({1, 3, 3}),
                        std::vector<int64_t>{1}));
  NodeRef v4 = g.reshape(g.slice(y, std::vector<int64_t>{0, 1, 0, 1}, dims({1, 4})), dims({4}));
  outs.push_back(g.prim(OpId::matmul, std::vector<NodeRef>{v4, v4}, DType::Float32, dims({}), std::vector<int64_t>{2}));
  NodeRef start = g.constant(Scalar::from_double(0.5)), step = g.constant(Scalar::from_double(-0.25));
  outs.push_back(g.prim(OpId::iota, std::vector<NodeRef>{start, step}, DType::Float64, dims({5})));
  outs.push_back(g.prim(OpId::fill, std::vector<NodeRef>{g.cast(sc, DType::Float32)}, DType::Float32,
                        SymShape{Dim::fixed(2), Dim::sym(s0)}));
  outs.push_back(g.prim(OpId::copy, std::vector<NodeRef>{w}, DType::Float32, w->shape, std::vector<int64_t>{3}));
  g.ufunc(OpId::negative, one, DType::Float32);  // dead: dce copies the graph
  g.outputs = outs;
  g.owned_inputs = {2};
  g.unread_outputs = {0};
  ir::verify(g, "test");
  return g;
}
}  // namespace

TEST_CASE("graph serialization: every node kind round-trips exactly", "[tracer][graph_io]") {
  Graph g = every_kind();
  REQUIRE(g.evaluations(g.nodes()[0]) == 1);
  bool merged = false;
  for (NodeRef n : g.nodes()) merged = merged || g.evaluations(n) > 1;
  REQUIRE(merged);
  Graph h = round_trip(g);
  // What passes derive from the graph is the same too: dead-code elimination of both.
  Graph gd = ir::dce(std::move(g));
  Graph hd = ir::dce(std::move(h));
  REQUIRE(hd.str() == gd.str());
  REQUIRE(gd.same_structure(hd));
  round_trip(gd);
}

TEST_CASE("graph serialization: small graphs", "[tracer][graph_io]") {
  Graph empty;
  round_trip(empty);
  Graph consts;
  std::vector<NodeRef> outs;
  add_constants(consts, outs);
  consts.outputs = outs;
  round_trip(consts);
  // Inputs counted beyond the Input nodes left (a pass dropped them).
  Graph g;
  NodeRef a = g.input(4, DType::Bool, dims({0, 2}));
  g.scalar(2, DType::Complex128);
  g.outputs = {a, a};
  g.unread_outputs = {0, 1};
  round_trip(g);
}

TEST_CASE("graph serialization: host calls cannot be stored", "[tracer][graph_io]") {
  Graph g;
  NodeRef x = g.input(0, DType::Float64, dims({2}));
  g.outputs = {g.call([](std::span<const ndarray> a) { return a[0]; }, "numpy.random.rand", std::vector<NodeRef>{x},
                      DType::Float64, dims({2}))};
  REQUIRE_THROWS_AS(ir::serialize(g), ValueError);
  REQUIRE_THROWS_WITH(ir::serialize(g), Catch::Contains("host calls") && Catch::Contains("numpy.random.rand"));
}

TEST_CASE("graph serialization: the header binds the bytes to this build", "[tracer][graph_io]") {
  const std::string bytes = ir::serialize(every_kind());
  std::string s = bytes;
  s[0] = 'X';
  REQUIRE_THROWS_WITH(ir::deserialize(s), Catch::Contains("not a serialized npc graph"));
  s = bytes;
  s[8] ^= 1;  // the format version
  ir::io::seal(s);
  REQUIRE_THROWS_WITH(ir::deserialize(s), Catch::Contains("format version"));
  s = bytes;
  s[13] ^= 0x40;  // the build fingerprint
  ir::io::seal(s);
  REQUIRE_THROWS_WITH(ir::deserialize(s), Catch::Contains("another build"));
  s = bytes;
  s[40] ^= 0x01;  // anywhere in the body, without re-sealing
  REQUIRE_THROWS_WITH(ir::deserialize(s), Catch::Contains("checksum"));
  s = bytes + "x";
  REQUIRE_THROWS_AS(ir::deserialize(s), ValueError);
  // Counts are bounded before anything is sized by them: an input count of 2^31 - 1.
  s = bytes;
  s.replace(20, 4, std::string("\xff\xff\xff\x7f", 4));
  ir::io::seal(s);
  REQUIRE_THROWS_WITH(ir::deserialize(s), Catch::Contains("input or scalar count"));
}

TEST_CASE("graph serialization: every truncation raises ValueError", "[tracer][graph_io]") {
  const std::string bytes = ir::serialize(every_kind());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string cut = bytes.substr(0, n);
    REQUIRE_THROWS_AS(ir::deserialize(cut), ValueError);
    // Cut short with a valid checksum: the parser itself must notice.
    if (n >= 28 && n != bytes.size() - 8) {
      std::string sealed = bytes.substr(0, n) + std::string(8, '\0');
      ir::io::seal(sealed);
      REQUIRE_THROWS_AS(ir::deserialize(sealed), ValueError);
    }
  }
}

TEST_CASE("graph serialization: corrupted and hostile bytes never crash", "[tracer][graph_io]") {
  const std::string bytes = ir::serialize(every_kind());
  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<size_t> pos(20, bytes.size() - 9);  // past the header, before the trailer
  int accepted = 0;
  for (int trial = 0; trial < 6000; ++trial) {
    std::string s = bytes;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      const size_t p = pos(rng);
      switch (rng() % 4) {
        case 0: s[p] = static_cast<char>(s[p] ^ (1 << (rng() % 8))); break;
        case 1: s[p] = static_cast<char>(rng()); break;
        case 2: s[p] = static_cast<char>(0xff); break;
        default: s[p] = static_cast<char>(s[p] + ((rng() & 1) ? 1 : -1)); break;
      }
    }
    // Unsealed: the checksum catches it.
    if (s != bytes) REQUIRE_THROWS_AS(ir::deserialize(s), ValueError);
    // Sealed again: validation must reject it, or it is a valid graph whose bytes are these.
    ir::io::seal(s);
    try {
      Graph h = ir::deserialize(s);
      ir::verify(h, "fuzz");
      REQUIRE(ir::serialize(h) == s);
      ++accepted;
    } catch (const ValueError&) {
    }
  }
  // Some mutations (a hint, a constant's bits, a parameter with no invariant) give other valid
  // graphs; most do not.
  REQUIRE(accepted < 6000 / 2);
}

TEST_CASE("graph serialization: graphs the builders accept but later code cannot run are rejected",
          "[tracer][graph_io]") {
  auto rejects = [](Graph& g, const char* why) {
    INFO(why);
    REQUIRE_THROWS_AS(ir::deserialize(ir::serialize(g)), ValueError);
  };
  {
    Graph g;  // a gather whose index input has no bounds check
    NodeRef a = g.input(0, DType::Float32, dims({3}));
    NodeRef i = g.input(1, DType::Int64, dims({2}));
    g.outputs = {g.gather(a, i, 0)};
    rejects(g, "unchecked gather index");
    g.index_checks.push_back({1, 4, 0});  // a check wider than the axis
    rejects(g, "index check wider than the axis");
    g.index_checks = {{1, 3, 0}};
    round_trip(g);
  }
  {
    Graph g;  // a constant index out of range
    NodeRef a = g.input(0, DType::Float32, dims({3}));
    g.outputs = {g.gather(a, g.broadcast(g.constant(Scalar::from_int(3)), dims({1})), 0)};
    rejects(g, "constant gather index out of range");
  }
  {
    Graph g;  // primitives with parameters or shapes their library calls would not honour
    NodeRef a = g.input(0, DType::Float64, dims({3, 4}));
    g.outputs = {g.prim(OpId::argmax, std::vector<NodeRef>{a}, DType::Int64, dims({3}), std::vector<int64_t>{2, 0})};
    rejects(g, "argmax axis out of range");
    g.outputs = {g.prim(OpId::sort, std::vector<NodeRef>{a}, DType::Float64, dims({3, 4}), std::vector<int64_t>{1})};
    rejects(g, "sort without its descending flag");
    g.outputs = {g.prim(OpId::matmul, std::vector<NodeRef>{a, a}, DType::Float64, dims({3, 4}))};
    rejects(g, "matmul of mismatched shapes");
    g.outputs = {g.prim(OpId::cumsum, std::vector<NodeRef>{a}, DType::Float64, dims({12}), std::vector<int64_t>{0})};
    rejects(g, "cumsum of another shape");
    g.outputs = {g.prim(OpId::take, std::vector<NodeRef>{a, a}, DType::Float64, dims({3, 4}))};
    rejects(g, "a primitive that is no graph node");
  }
  {
    Graph g;  // a write-back of another shape than its input
    g.input(0, DType::Float64, dims({3}));
    NodeRef b = g.input(1, DType::Float64, dims({4}));
    g.writebacks.emplace_back(0, b);
    rejects(g, "write-back shape");
  }
  {
    Graph g;  // an input write after the evaluations recorded
    NodeRef a = g.input(0, DType::Float64, dims({3}));
    g.input_writes.push_back({5, 0, a});
    rejects(g, "input write out of place");
  }
}

TEST_CASE("graph io: a recorded digest of the bytes is forgotten when the graph changes", "[graph_io]") {
  // Note [digest of a graph's bytes]: a changed graph must never be named by its old bytes.
  auto build = [] {
    Graph g;
    NodeRef x = g.input(0, DType::Float64, dims({4}));
    std::vector<NodeRef> xx{x, x};
    NodeRef m = g.ufunc(OpId::multiply, xx, DType::Float64);
    g.outputs = {m};
    g.writebacks = {{0, m}};
    return g;
  };
  const std::string bytes = ir::serialize(build());
  uint64_t d[2];
  auto fresh = [&] {
    Graph h = ir::deserialize(bytes);
    REQUIRE(h.serialized_digest(d));
    return h;
  };
  {  // a merged evaluation (same node count)
    Graph h = fresh();
    std::vector<NodeRef> xx{h.nodes()[0], h.nodes()[0]};
    h.ufunc(OpId::multiply, xx, DType::Float64);
    REQUIRE_FALSE(h.serialized_digest(d));
  }
  {  // a new node
    Graph h = fresh();
    std::vector<NodeRef> one{h.nodes()[1]};
    h.ufunc(OpId::exp, one, DType::Float64);
    REQUIRE_FALSE(h.serialized_digest(d));
  }
  {  // each public interface vector
    for (int k = 0; k < 6; ++k) {
      Graph h = fresh();
      NodeRef x = h.nodes()[0];
      switch (k) {
        case 0: h.outputs.push_back(x); break;
        case 1: h.writebacks.clear(); break;
        case 2: h.input_writes.push_back({0, 0, x}); break;
        case 3: h.index_checks.push_back({0, 4, 0}); break;
        case 4: h.owned_inputs.push_back(0); break;
        case 5: h.unread_outputs.push_back(0); break;
      }
      REQUIRE_FALSE(h.serialized_digest(d));
    }
  }
  {  // a symbol
    Graph h = fresh();
    h.add_symbol(0, 0, 4);
    REQUIRE_FALSE(h.serialized_digest(d));
  }
  {  // dce of a graph without dead nodes is the graph itself: it keeps the digest
    Graph h = ir::dce(fresh());
    REQUIRE(h.serialized_digest(d));
    const Hash128 want = hash128(bytes.data(), bytes.size());
    REQUIRE((d[0] == want.lo && d[1] == want.hi));
  }
}

TEST_CASE("hash: every byte and the length count", "[graph_io]") {
  // Note [hashing bytes]: trailing zeros, each bit and each length up to a few blocks.
  std::string s(100, '\0');
  const Hash128 base = hash128(s.data(), s.size());
  REQUIRE(hash128(s.data(), 99).lo != base.lo);
  for (size_t i = 0; i < s.size(); ++i)
    for (int b = 0; b < 8; ++b) {
      std::string t = s;
      t[i] = static_cast<char>(1 << b);
      const Hash128 h = hash128(t.data(), t.size());
      REQUIRE(h.lo != base.lo);
      REQUIRE(h.hi != base.hi);
    }
  REQUIRE(hash64(s.data(), s.size(), 1) != hash64(s.data(), s.size(), 0));
}

TEST_CASE("graph serialization: a node equal to an earlier one is refused", "[tracer][graph_io]") {
  // Note [reading a plan's graphs]: nodes are read without interning and checked distinct after.
  Graph g;
  NodeRef a = g.input(0, DType::Float64, dims({2}));
  NodeRef b = g.input(1, DType::Float64, dims({2}));
  std::vector<NodeRef> ab{a, b};
  g.outputs = {g.ufunc(OpId::add, ab, DType::Float64)};
  const std::string bytes = ir::serialize(g);
  // Header 20, counts 8, symbols 4, node count 4: node 0 at 36; an Input of rank 1 is 4 + 12 +
  // 4 + 12 + 1 = 33 bytes, its input number the i64 parameter 24 bytes in.
  const size_t node0 = 36, node1 = node0 + 33;
  REQUIRE(bytes.substr(node0, 24) == bytes.substr(node1, 24));
  REQUIRE(bytes[node0 + 24] == 0);
  REQUIRE(bytes[node1 + 24] == 1);
  std::string s = bytes;
  s[node1 + 24] = 0;  // input 1 becomes a second input 0, equal to node 0
  ir::io::seal(s);
  REQUIRE_THROWS_WITH(ir::deserialize(s), Catch::Contains("node 1 repeats an earlier node"));
  // Equal hashes without equal nodes are accepted: every round trip above; and the graph
  // read back interns as a built one does (its table is rebuilt on the first new node).
  Graph h = ir::deserialize(bytes);
  NodeRef x = h.nodes()[0], y = h.nodes()[1];
  std::vector<NodeRef> xy{x, y};
  REQUIRE(h.ufunc(OpId::add, xy, DType::Float64) == h.nodes()[2]);
  REQUIRE(h.nodes().size() == 3);
}
