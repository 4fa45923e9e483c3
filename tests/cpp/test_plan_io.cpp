// Plan serialization (Note [plan serialization] in src/tracer/plan_io.cpp): a plan built by hand
// (two steps share a graph) round-trips exactly, is stored with each graph once, replays to the
// same bits, and bad bytes (truncated, flipped, inconsistent steps) raise ValueError.
#include <catch2/catch.hpp>

#include <bit>
#include <cstring>
#include <random>

#include "npc/creation.hpp"
#include "npc/errors.hpp"
#include "npc/graph.hpp"
#include "tracer/byte_io.hpp"
#include "tracer/trace.hpp"

using namespace npc;
using ir::Graph;
using ir::NodeRef;
using tracer::Plan;

namespace {
ir::SymShape vec4() { return ir::static_shape(Shape{4}); }

ir::Executable interpreted(const std::shared_ptr<Graph>& g) {
  return [g](const ir::RunArgs& a) { return ir::interpret(*g, a); };
}

// input 0 * float argument 0 + step scalar (scalar 1).
std::shared_ptr<Graph> scale_shift() {
  auto g = std::make_shared<Graph>();
  NodeRef x = g->input(0, DType::Float64, vec4());
  NodeRef a = g->broadcast(g->scalar(0, DType::Float64), vec4());
  NodeRef b = g->broadcast(g->scalar(1, DType::Float64), vec4());
  std::vector<NodeRef> xa{x, a};
  NodeRef m = g->ufunc(OpId::multiply, xa, DType::Float64);
  std::vector<NodeRef> mb{m, b};
  g->outputs = {g->ufunc(OpId::add, mb, DType::Float64)};
  return g;
}

// input 0 + input 1 (the float argument declared, unread).
std::shared_ptr<Graph> sum() {
  auto g = std::make_shared<Graph>();
  NodeRef x = g->input(0, DType::Float64, vec4());
  NodeRef y = g->input(1, DType::Float64, vec4());
  g->scalar(0, DType::Float64);
  std::vector<NodeRef> xy{x, y};
  g->outputs = {g->ufunc(OpId::add, xy, DType::Float64)};
  g->owned_inputs = {0};  // a step's output
  return g;
}

// Three steps: s0 = x0 * f + 2.5, s1 = s0 * f - 0.0 (the same graph), s2 = s1 + x1.
Plan sample() {
  auto g1 = scale_shift(), g2 = sum();
  Plan p;
  p.num_inputs = 2;
  p.steps.push_back({{g1, interpreted(g1)}, {{0, 0, -1}}, {Scalar::from_double(2.5)}, {}});
  p.steps.push_back({{g1, interpreted(g1)}, {{1, 0, 0}}, {Scalar::from_double(-0.0)}, {{0, 0}}});
  p.steps.push_back({{g2, interpreted(g2)}, {{1, 0, 1}, {0, 1, -1}}, {}, {{1, 0}}});
  return p;
}

tracer::PlanCompiler counting(int& compiled) {
  return [&compiled](std::shared_ptr<Graph> g, size_t h) {
    REQUIRE(h == g->structural_hash());
    ++compiled;
    return tracer::SegmentRun{g, interpreted(g)};
  };
}

std::vector<ndarray> replay(const Plan& p) {
  std::vector<ndarray> in{arange(Scalar::from_int(1), Scalar::from_int(5), Scalar::from_int(1), DType::Float64),
                          full(Shape{4}, Scalar::from_double(0.1), DType::Float64)};
  return p.run(in, {Scalar::from_double(3.0)},
               [](const ir::Executable& e, const ir::RunArgs& a) { return e(a); });
}

std::string bits(const ndarray& a) {
  ndarray c = a.copy();
  return std::string(reinterpret_cast<const char*>(c.data()), static_cast<size_t>(c.size()) * 8);
}

int load_fails(const std::string& bytes) {
  int compiled = 0;
  try {
    tracer::deserialize_plan(bytes, counting(compiled));
  } catch (const ValueError&) {
    return 1;
  }
  return 0;
}
}  // namespace

TEST_CASE("plan serialization: round trip, shared graphs stored once, same results", "[tracer][plan_io]") {
  const Plan p = sample();
  const std::string bytes = tracer::serialize(p);
  int compiled = 0;
  const Plan q = tracer::deserialize_plan(bytes, counting(compiled));
  REQUIRE(compiled == 2);  // each distinct graph once
  REQUIRE(q.steps.size() == 3);
  REQUIRE(q.steps[0].run.graph == q.steps[1].run.graph);
  REQUIRE(q.steps[0].run.graph != q.steps[2].run.graph);
  REQUIRE(q.num_inputs == 2);
  REQUIRE(std::bit_cast<uint64_t>(q.steps[1].scalars[0].f) == std::bit_cast<uint64_t>(-0.0));
  REQUIRE(q.steps[1].release == p.steps[1].release);
  REQUIRE(tracer::serialize(q) == bytes);
  // The shared graph's bytes appear once.
  const std::string g1 = ir::serialize(*p.steps[0].run.graph);
  REQUIRE(bytes.find(g1) != std::string::npos);
  REQUIRE(bytes.find(g1, bytes.find(g1) + 1) == std::string::npos);
  const std::vector<ndarray> want = replay(p), got = replay(q);
  REQUIRE(want.size() == 1);
  REQUIRE(got.size() == 1);
  REQUIRE(bits(got[0]) == bits(want[0]));
}

TEST_CASE("plan serialization: inconsistent plans are not written", "[tracer][plan_io]") {
  Plan p = sample();
  p.steps[1].inputs[0] = {1, 0, 1};  // its own output
  REQUIRE_THROWS_WITH(tracer::serialize(p), Catch::Contains("not an earlier one"));
  p = sample();
  p.steps[2].inputs[0] = {0, 0, -1};  // an owned input from the caller
  REQUIRE_THROWS_WITH(tracer::serialize(p), Catch::Contains("owns an input"));
  p = sample();
  p.steps[0].scalars.clear();  // the steps disagree on the float arguments
  REQUIRE_THROWS_AS(tracer::serialize(p), ValueError);
  p = sample();
  p.steps[2].release.push_back({0, 0});  // released twice
  REQUIRE_THROWS_WITH(tracer::serialize(p), Catch::Contains("twice"));
  p = sample();
  p.steps[0].scalars[0] = Scalar::from_int(2);  // not the Scalar node's dtype
  REQUIRE_THROWS_WITH(tracer::serialize(p), Catch::Contains("dtype"));
  p = sample();
  auto g = std::make_shared<Graph>();
  NodeRef x = g->input(0, DType::Float64, vec4());
  std::vector<NodeRef> xs{x};
  g->outputs = {g->call([](std::span<const ndarray> a) { return a[0]; }, "host.fn", xs, DType::Float64, vec4())};
  g->scalar(0, DType::Float64);
  for (int s : {0, 1}) {
    p.steps[s].run = {g, interpreted(g)};
    p.steps[s].scalars.clear();
  }
  REQUIRE_THROWS_WITH(tracer::serialize(p), Catch::Contains("host calls"));
}

TEST_CASE("plan serialization: truncated and corrupted bytes raise ValueError", "[tracer][plan_io]") {
  const std::string bytes = tracer::serialize(sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    REQUIRE(load_fails(bytes.substr(0, n)) == 1);
    if (n >= 28 && n != bytes.size() - 8) {  // cut short with a valid checksum: the parser must notice
      std::string sealed = bytes.substr(0, n) + std::string(8, '\0');
      ir::io::seal(sealed);
      REQUIRE(load_fails(sealed) == 1);
    }
  }
  for (size_t i = 0; i + 8 < bytes.size(); ++i) {
    std::string s = bytes;
    s[i] = static_cast<char>(s[i] ^ 0x10);
    REQUIRE(load_fails(s) == 1);  // the checksum, or the header before it
  }
  // Resealed random mutations of anything after the header: accepted only as a plan that
  // writes the same bytes back (a scalar's value changed), never a crash.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<size_t> pos(20, bytes.size() - 9);
  int accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string s = bytes;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) s[pos(rng)] = static_cast<char>(rng());
    ir::io::seal(s);
    int compiled = 0;
    try {
      const Plan q = tracer::deserialize_plan(s, counting(compiled));
      REQUIRE(tracer::serialize(q) == s);
      ++accepted;
    } catch (const ValueError&) {
    }
  }
  REQUIRE(accepted < 3000);
}

namespace {
// x + 1 + 2 + ... + n (each constant a node of its own): a graph of about 60 n bytes.
std::shared_ptr<Graph> long_chain(int n, double start) {
  auto g = std::make_shared<Graph>();
  NodeRef x = g->input(0, DType::Float64, vec4());
  for (int k = 0; k < n; ++k) {
    std::vector<NodeRef> xc{x, g->broadcast(g->constant(Scalar::from_double(start + k)), vec4())};
    x = g->ufunc(OpId::add, xc, DType::Float64);
  }
  g->outputs = {x};
  return g;
}

// Three steps of two large graphs (over 1 MB of graph bytes: read on two threads, Note
// [graphs read on two threads]).
Plan large() {
  auto g1 = long_chain(6000, 1.0), g2 = long_chain(6000, 0.5);
  g2->owned_inputs = {0};
  Plan p;
  p.num_inputs = 1;
  p.steps.push_back({{g1, interpreted(g1)}, {{0, 0, -1}}, {}, {}});
  p.steps.push_back({{g2, interpreted(g2)}, {{1, 0, 0}}, {}, {{0, 0}}});
  p.steps.push_back({{g1, interpreted(g1)}, {{1, 0, 1}}, {}, {{1, 0}}});
  return p;
}
}  // namespace

TEST_CASE("plan serialization: large graphs read on two threads", "[tracer][plan_io]") {
  const Plan p = large();
  const std::string bytes = tracer::serialize(p);
  REQUIRE(bytes.size() > (size_t(1) << 20));
  int compiled = 0;
  const Plan q = tracer::deserialize_plan(bytes, counting(compiled));
  REQUIRE(compiled == 2);
  REQUIRE(q.steps[0].run.graph == q.steps[2].run.graph);
  REQUIRE(q.steps[0].run.graph->same_structure(*p.steps[0].run.graph));
  REQUIRE(q.steps[1].run.graph->same_structure(*p.steps[1].run.graph));
  REQUIRE(tracer::serialize(q) == bytes);
  std::vector<ndarray> in{full(Shape{4}, Scalar::from_double(0.25), DType::Float64)};
  auto run = [&](const Plan& x) {
    return x.run(in, {}, [](const ir::Executable& e, const ir::RunArgs& a) { return e(a); });
  };
  REQUIRE(bits(run(q).at(0)) == bits(run(p).at(0)));
  // A damaged graph is refused by its number, whichever thread read it; with both damaged,
  // the first is named.
  const std::string g0 = ir::serialize(*p.steps[0].run.graph), g1 = ir::serialize(*p.steps[1].run.graph);
  const size_t at0 = bytes.find(g0), at1 = bytes.find(g1);
  REQUIRE(at0 != std::string::npos);
  REQUIRE(at1 != std::string::npos);
  for (int which : {0, 1, 2}) {
    std::string s = bytes;
    if (which != 1) s[at0 + g0.size() / 2] ^= 0x10;  // inside graph 0 (its own checksum)
    if (which != 0) s[at1 + g1.size() / 2] ^= 0x10;
    ir::io::seal(s);
    int n = 0;
    REQUIRE_THROWS_WITH(tracer::deserialize_plan(s, counting(n)),
                        Catch::Contains(which == 1 ? "graph 1:" : "graph 0:"));
    REQUIRE(n == 0);  // nothing compiled
  }
}
