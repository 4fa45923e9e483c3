// Hand-written fused C++/OpenMP reference kernels for the five cases of bench/demo.py:
// what a programmer writes by hand for each NumPy expression (same loop structure as the
// fused code npc generates, no algebraic rewrites). bench/bench_fusion.py builds this file
// with the fused backend's flags and times npc against it.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

extern "C" {

// Case 1: np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1)), X, Y (n, m) float64.
void hw_outer_sum(const double* X, const double* Y, double* out, int64_t n, int64_t m) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const double* x = X + i * m;
    const double* y = Y + i * m;
    double acc = 0;
    for (int64_t j = 0; j < m; ++j) {
      double xj = x[j];
#pragma omp simd reduction(+ : acc)
      for (int64_t k = 0; k < m; ++k) acc += xj * y[k];
    }
    out[i] = acc;
  }
}

// Case 2: np.argmin(np.linalg.norm(X - means[:, None], axis=2), axis=0); X (n, 2) float64,
// means (2, 2) int64.
void hw_kmeans(const double* X, const int64_t* means, int64_t* out, int64_t n) {
  const double m00 = (double)means[0], m01 = (double)means[1], m10 = (double)means[2], m11 = (double)means[3];
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    double a0 = X[2 * i] - m00, a1 = X[2 * i + 1] - m01;
    double b0 = X[2 * i] - m10, b1 = X[2 * i + 1] - m11;
    double d0 = std::sqrt(a0 * a0 + a1 * a1), d1 = std::sqrt(b0 * b0 + b1 * b1);
    out[i] = (d1 < d0 || (std::isnan(d1) && !std::isnan(d0))) ? 1 : 0;
  }
}

// Case 3: a*b - 4.1*a > 2.5*b on float64 vectors.
void hw_chain(const double* a, const double* b, bool* out, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b[i] - 4.1 * a[i] > 2.5 * b[i];
}

// Case 4: softmax over the last axis of a (rows, cols) float32 array.
void hw_softmax(const float* x, float* out, int64_t rows, int64_t cols) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x + r * cols;
    float* q = out + r * cols;
    float mx = -INFINITY;
    for (int64_t k = 0; k < cols; ++k) mx = (p[k] >= mx || std::isnan(p[k])) ? p[k] : mx;
    float s = 0;
    for (int64_t k = 0; k < cols; ++k) { q[k] = std::exp(p[k] - mx); s += q[k]; }
    for (int64_t k = 0; k < cols; ++k) q[k] = q[k] / s;
  }
}

// Case 5: Jacobi five-point stencil, `steps` sweeps on an (n, n) float64 grid, written with
// two buffers; the result is in `u` (copied back when steps is odd).
void hw_jacobi(double* u, double* tmp, int64_t n, int64_t steps) {
  double* a = u;
  double* b = tmp;
  for (int64_t i = 0; i < n; ++i) { b[i] = a[i]; b[(n - 1) * n + i] = a[(n - 1) * n + i]; b[i * n] = a[i * n]; b[i * n + n - 1] = a[i * n + n - 1]; }
  for (int64_t s = 0; s < steps; ++s) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 1; i < n - 1; ++i) {
#pragma omp simd
      for (int64_t j = 1; j < n - 1; ++j)
        b[i * n + j] = 0.25 * (((a[(i - 1) * n + j] + a[(i + 1) * n + j]) + a[i * n + j - 1]) + a[i * n + j + 1]);
    }
    std::swap(a, b);
  }
  if (a != u)
    for (int64_t i = 0; i < n * n; ++i) u[i] = a[i];
}

}  // extern "C"
