// Google Benchmark binaries of the field suite (bench/field/): npc's C++ API beside xtensor
// doing the same computation.
//   eager dispatch   one eager ufunc call (a + b) on 16 doubles: the per-op cost of npc's
//                    dispatch (type resolution, allocation) against an xtensor assignment;
//   compiled replay  npc::compile of (a * b + 1).sum() on 16 doubles replayed: guard checks
//                    and launch, against the same xtensor expression;
//   fused kernel     the haversine chain (sin, cos, arctan2, sqrt; 2M doubles) as one fused
//                    npc kernel, against xtensor's lazy expression assigned to a result
//                    (xtensor evaluates the whole expression in one loop too, with xsimd
//                    where available and OpenMP when XTENSOR_USE_OPENMP is defined).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>

#include "npc/compile.hpp"
#include "npc/creation.hpp"
#include "npc/fusion.hpp"
#include "npc/ndarray.hpp"
#include "npc/ops.hpp"

using npc::ndarray;
using npc::OpId;
using npc::Operand;

namespace {

ndarray random_vec(int64_t n, unsigned seed, double scale) {
  ndarray a = npc::empty(std::vector<int64_t>{n});
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0.0, scale);
  auto* p = reinterpret_cast<double*>(a.data());
  for (int64_t i = 0; i < n; ++i) p[i] = u(g);
  return a;
}

xt::xtensor<double, 1> to_xt(const ndarray& a) {
  xt::xtensor<double, 1> r = xt::empty<double>({static_cast<std::size_t>(a.size())});
  std::memcpy(r.data(), a.data(), sizeof(double) * static_cast<std::size_t>(a.size()));
  return r;
}

ndarray u1(OpId op, const ndarray& a) {
  Operand in[1] = {Operand{a, false}};
  return npc::call_ufunc(op, in)[0];
}

ndarray b2(OpId op, const ndarray& a, const ndarray& b) {
  Operand in[2] = {Operand{a, false}, Operand{b, false}};
  return npc::call_ufunc(op, in)[0];
}

ndarray bs(OpId op, const ndarray& a, double s) {  // a (op) python-float s (weak scalar)
  Operand in[2] = {Operand{a, false}, Operand{npc::scalar_array(npc::Scalar::from_double(s)), true}};
  return npc::call_ufunc(op, in)[0];
}

ndarray sb(OpId op, double s, const ndarray& a) {  // python-float s (op) a
  Operand in[2] = {Operand{npc::scalar_array(npc::Scalar::from_double(s)), true}, Operand{a, false}};
  return npc::call_ufunc(op, in)[0];
}

ndarray haversine(const std::vector<ndarray>& v) {
  const ndarray &lat1 = v[0], &lon1 = v[1], &lat2 = v[2], &lon2 = v[3];
  ndarray s1 = u1(OpId::sin, bs(OpId::divide, b2(OpId::subtract, lat2, lat1), 2.0));
  ndarray s2 = u1(OpId::sin, bs(OpId::divide, b2(OpId::subtract, lon2, lon1), 2.0));
  ndarray a = b2(OpId::add, b2(OpId::multiply, s1, s1),
                 b2(OpId::multiply, b2(OpId::multiply, u1(OpId::cos, lat1), u1(OpId::cos, lat2)),
                    b2(OpId::multiply, s2, s2)));
  ndarray at = b2(OpId::arctan2, u1(OpId::sqrt, a), u1(OpId::sqrt, sb(OpId::subtract, 1.0, a)));
  return sb(OpId::multiply, 2 * 6371.0, at);
}

// ---------------------------------------------------------------- eager dispatch
void BM_eager_dispatch_npc(benchmark::State& st) {
  ndarray a = random_vec(16, 1, 1.0), b = random_vec(16, 2, 1.0);
  for (auto _ : st) {
    ndarray c = b2(OpId::add, a, b);
    benchmark::DoNotOptimize(c.data());
  }
}
BENCHMARK(BM_eager_dispatch_npc);

void BM_eager_dispatch_xtensor(benchmark::State& st) {
  auto a = to_xt(random_vec(16, 1, 1.0)), b = to_xt(random_vec(16, 2, 1.0));
  for (auto _ : st) {
    xt::xtensor<double, 1> c = a + b;
    benchmark::DoNotOptimize(c.data());
  }
}
BENCHMARK(BM_eager_dispatch_xtensor);

// ---------------------------------------------------------------- compiled replay
void BM_compiled_replay_npc(benchmark::State& st) {
  npc::fusion::register_backend();
  ndarray a = random_vec(16, 1, 1.0), b = random_vec(16, 2, 1.0);
  auto f = npc::compile([](const std::vector<ndarray>& v) {
    npc::ReduceOptions all;
    return std::vector<ndarray>{npc::reduce(OpId::add, bs(OpId::add, b2(OpId::multiply, v[0], v[1]), 1.0), all)};
  });
  f({a, b});  // trace + compile
  for (auto _ : st) {
    auto r = f({a, b});
    benchmark::DoNotOptimize(r[0].data());
  }
}
BENCHMARK(BM_compiled_replay_npc);

void BM_compiled_replay_xtensor(benchmark::State& st) {
  auto a = to_xt(random_vec(16, 1, 1.0)), b = to_xt(random_vec(16, 2, 1.0));
  for (auto _ : st) {
    double s = xt::sum(a * b + 1.0)();
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_compiled_replay_xtensor);

// ---------------------------------------------------------------- one large fused kernel
constexpr int64_t kN = 2'000'000;

void BM_fused_haversine_npc_eager(benchmark::State& st) {
  std::vector<ndarray> v = {random_vec(kN, 1, 3), random_vec(kN, 2, 6), random_vec(kN, 3, 3), random_vec(kN, 4, 6)};
  for (auto _ : st) {
    ndarray r = haversine(v);
    benchmark::DoNotOptimize(r.data());
  }
}
BENCHMARK(BM_fused_haversine_npc_eager)->Unit(benchmark::kMillisecond);

void BM_fused_haversine_npc_compiled(benchmark::State& st) {
  npc::fusion::register_backend();
  std::vector<ndarray> v = {random_vec(kN, 1, 3), random_vec(kN, 2, 6), random_vec(kN, 3, 3), random_vec(kN, 4, 6)};
  auto f = npc::compile([](const std::vector<ndarray>& a) { return std::vector<ndarray>{haversine(a)}; });
  f(v);
  for (auto _ : st) {
    auto r = f(v);
    benchmark::DoNotOptimize(r[0].data());
  }
}
BENCHMARK(BM_fused_haversine_npc_compiled)->Unit(benchmark::kMillisecond);

void BM_fused_haversine_xtensor(benchmark::State& st) {
  auto lat1 = to_xt(random_vec(kN, 1, 3)), lon1 = to_xt(random_vec(kN, 2, 6));
  auto lat2 = to_xt(random_vec(kN, 3, 3)), lon2 = to_xt(random_vec(kN, 4, 6));
  for (auto _ : st) {
    auto s1 = xt::sin((lat2 - lat1) / 2.0);
    auto s2 = xt::sin((lon2 - lon1) / 2.0);
    auto a = s1 * s1 + xt::cos(lat1) * xt::cos(lat2) * s2 * s2;
    xt::xtensor<double, 1> r = 2 * 6371.0 * xt::atan2(xt::sqrt(a), xt::sqrt(1.0 - a));
    benchmark::DoNotOptimize(r.data());
  }
}
BENCHMARK(BM_fused_haversine_xtensor)->Unit(benchmark::kMillisecond);

// A check that the three computations agree (run once before the benchmarks).
bool agree() {
  npc::fusion::register_backend();
  const int64_t n = 1000;
  std::vector<ndarray> v = {random_vec(n, 1, 3), random_vec(n, 2, 6), random_vec(n, 3, 3), random_vec(n, 4, 6)};
  ndarray e = haversine(v);
  auto f = npc::compile([](const std::vector<ndarray>& a) { return std::vector<ndarray>{haversine(a)}; });
  ndarray c = f(v)[0];
  auto lat1 = to_xt(v[0]), lon1 = to_xt(v[1]), lat2 = to_xt(v[2]), lon2 = to_xt(v[3]);
  auto s1 = xt::sin((lat2 - lat1) / 2.0);
  auto s2 = xt::sin((lon2 - lon1) / 2.0);
  auto a = s1 * s1 + xt::cos(lat1) * xt::cos(lat2) * s2 * s2;
  xt::xtensor<double, 1> x = 2 * 6371.0 * xt::atan2(xt::sqrt(a), xt::sqrt(1.0 - a));
  const auto* pe = reinterpret_cast<const double*>(e.data());
  const auto* pc = reinterpret_cast<const double*>(c.data());
  for (int64_t i = 0; i < n; ++i) {
    double tol = 1e-12 * std::abs(pe[i]) + 1e-12;
    if (std::abs(pe[i] - pc[i]) > tol || std::abs(pe[i] - x(i)) > tol) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (!agree()) {
    std::fprintf(stderr, "npc eager, npc compiled and xtensor disagree on the haversine chain\n");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
