"""The field suite's cases: NumPy source written once against a module global ``np``.

Every system runs these same functions: NumPy as written, npc eager with the functions
re-bound to ``np = npc`` (``with_np``), ``npc.compile``, Numba's ``@njit(parallel=True)`` and
``torch.compile`` on the NumPy-bound functions. Ports that cannot run the source itself (the
JAX port, Numba's explicit loops, NumExpr strings, the hand-written C++ kernels) live in
ports_*.py beside this file and are validated against these functions.

Each case has two sizes, ``"10ms"`` and ``"100ms"``: the size at which NumPy takes about 10 ms
and 100 ms per call on a 2-core x86-64 machine (per-call overhead uses tiny arrays instead).
The outer-product sum, k-means assignment, boolean chain, softmax and Jacobi cases are the
functions of bench/fusion_cases.py (the demo's cases), so the hand-written kernels apply.
"""
import types

import numpy as np

import fusion_cases as _fc


def with_np(fn, module):
    """`fn` with its global ``np`` bound to `module` (npc for the eager runs)."""
    g = dict(fn.__globals__)
    g["np"] = module
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


# ---------------------------------------------------------------- the NumPy source
outer_sum = _fc.outer_sum          # np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))
kmeans_assign = _fc.kmeans_assign  # np.argmin(np.linalg.norm(X - means[:, None], axis=2), axis=0)
chain = _fc.chain                  # a * b - 4.1 * a > 2.5 * b
softmax = _fc.softmax              # over the last axis


def haversine(lat1, lon1, lat2, lon2):
    dlat = lat2 - lat1
    dlon = lon2 - lon1
    a = np.sin(dlat / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin(dlon / 2) ** 2
    return 2 * 6371.0 * np.arctan2(np.sqrt(a), np.sqrt(1 - a))


def eos(T, S, p):
    # Density from temperature, salinity and pressure: nested polynomials with ~40 terms,
    # shaped like the classic seawater equations of state (coefficients rounded).
    rho_w = 999.84 + T * (6.79e-2 + T * (-9.09e-3 + T * (1.0e-4 + T * (-1.12e-6 + T * 6.5e-9))))
    rho_s = (S * (0.824 + T * (-4.09e-3 + T * (7.64e-5 + T * (-8.25e-7 + T * 5.39e-9))))
             + S * np.sqrt(S) * (-5.72e-3 + T * (1.02e-4 - T * 1.65e-6)) + 4.83e-4 * S * S)
    K = (19652.2 + T * (148.4 + T * (-2.33 + T * (1.36e-2 - T * 5.16e-5)))
         + S * (54.67 + T * (-0.603 + T * (1.10e-2 - T * 6.17e-5)))
         + p * (3.24 + T * (1.44e-3 + T * (1.16e-4 - T * 5.78e-7))))
    return (rho_w + rho_s) / (1.0 - p / K)


def clip_axpy(x, y):
    return np.clip(3 * x + y, -(1 << 20), 1 << 20)


def normalise(x):
    return (x - x.mean(axis=0)) / x.std(axis=0)


def jacobi(u0, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def heat3d(u0, steps):
    u = u0.copy()
    for _ in range(steps):
        c = u[1:-1, 1:-1, 1:-1]
        u[1:-1, 1:-1, 1:-1] = c + 0.1 * (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1]
                                         + u[1:-1, 2:, 1:-1] + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:] - 6.0 * c)
    return u


def hdiff(inp, coeff):
    # Fourth-order horizontal diffusion with a flux limiter; inp (I+4, J+4, K), coeff (I, J, K).
    I, J = coeff.shape[0], coeff.shape[1]
    lap = 4.0 * inp[1:I + 3, 1:J + 3] - (inp[2:I + 4, 1:J + 3] + inp[0:I + 2, 1:J + 3]
                                         + inp[1:I + 3, 2:J + 4] + inp[1:I + 3, 0:J + 2])
    flx = lap[1:, 1:-1] - lap[:-1, 1:-1]
    flx = np.where(flx * (inp[2:I + 3, 2:J + 2] - inp[1:I + 2, 2:J + 2]) > 0, 0.0, flx)
    fly = lap[1:-1, 1:] - lap[1:-1, :-1]
    fly = np.where(fly * (inp[2:I + 2, 2:J + 3] - inp[2:I + 2, 1:J + 2]) > 0, 0.0, fly)
    return inp[2:I + 2, 2:J + 2] - coeff * (flx[1:] - flx[:-1] + fly[:, 1:] - fly[:, :-1])


def thomas(a, b, c, d):
    # Tridiagonal solve down axis 0 for every column: a[i] x[i-1] + b[i] x[i] + c[i] x[i+1] = d[i].
    n = b.shape[0]
    cp = np.empty_like(c)
    dp = np.empty_like(d)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        den = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / den
        dp[i] = (d[i] - a[i] * dp[i - 1]) / den
    x = np.empty_like(d)
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


def mlp(X, W1, b1, W2, b2):
    h = np.maximum(X @ W1 + b1, 0.0)
    z = h @ W2 + b2
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def nbody(pos, vel, mass, mask):
    # One leapfrog-style step of softened gravity; mask is False on the diagonal.
    dx = pos[None, :, :] - pos[:, None, :]
    r2 = (dx * dx).sum(axis=2) + 1e-3
    w = np.where(mask, mass[None, :] * r2 ** -1.5, 0.0)
    acc = w @ pos - w.sum(axis=1)[:, None] * pos
    vel = vel + 0.01 * acc
    return pos + 0.01 * vel, vel


def cholesky(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        s = A[j, j] - L[j, :j] @ L[j, :j]
        L[j, j] = np.sqrt(s)
        L[j + 1:, j] = (A[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return L


def lu(A):
    # Doolittle LU without pivoting (the inputs are diagonally dominant), in place on a copy.
    A = A.copy()
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k] = A[k + 1:, k] / A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return A


def masked_mean(data, radius, r1, r2):
    res = np.empty(r1.shape[0])
    for i in range(r1.shape[0]):
        res[i] = data[(r1[i] <= radius) & (radius < r2[i])].mean()
    return res


def tiny(a, b):
    return (a * b + 1.0).sum()


# ---------------------------------------------------------------- inputs
def _spd(rng, n):
    M = rng.standard_normal((n, n))
    return M @ M.T / n + np.eye(n)


def _dd(rng, n):
    return rng.standard_normal((n, n)) + n * np.eye(n)


def _grid2(n):
    u = np.zeros((n, n))
    u[0, :] = 1.0
    u[:, 0] = 0.5
    return u


def _grid3(rng, n):
    u = rng.random((n, n, n))
    u[0] = 1.0
    return u


def _nbody(rng, n):
    return [rng.standard_normal((n, 3)), rng.standard_normal((n, 3)) * 0.1, rng.random(n) + 0.5,
            ~np.eye(n, dtype=bool)]


def _masked(rng, n, npt):
    data = rng.standard_normal(n)
    radius = rng.random(n) * 10.0
    edges = np.linspace(0.0, 10.0, npt + 1)
    return [data, radius, edges[:-1].copy(), edges[1:].copy()]


def _kmeans(rng, n):
    X = np.concatenate([rng.normal(0.0, 1.0, (n // 2, 2)), rng.normal(5.0, 1.0, (n - n // 2, 2))])
    return [X, np.array([[0, 0], [5, 5]], dtype=np.int64)]


# name -> (function, {size: input maker}, what the size is); static ints are inputs too.
CASES = {
    "outer_sum": (outer_sum, lambda r, n: [r.random((n, 64)), r.random((n, 64))], {"10ms": 1024, "100ms": 8192}, "X, Y (n, 64)"),
    "kmeans": (kmeans_assign, _kmeans, {"10ms": 200_000, "100ms": 1_500_000}, "X (n, 2), 2 centres"),
    "bool_chain": (chain, lambda r, n: [r.random(n), r.random(n)], {"10ms": 3_000_000, "100ms": 15_000_000}, "n float64"),
    "haversine": (haversine, lambda r, n: [r.random(n) * 3, r.random(n) * 6, r.random(n) * 3, r.random(n) * 6],
                  {"10ms": 200_000, "100ms": 2_000_000}, "n float64"),
    "eos": (eos, lambda r, n: [r.random((n, n, 16)) * 30, 30 + r.random((n, n, 16)) * 10, r.random((n, n, 16)) * 500],
            {"10ms": 128, "100ms": 400}, "(n, n, 16) float64"),
    "clip_axpy": (clip_axpy, lambda r, n: [r.integers(-1 << 20, 1 << 20, n), r.integers(-1 << 20, 1 << 20, n)],
                  {"10ms": 4_000_000, "100ms": 20_000_000}, "n int64"),
    "softmax": (softmax, lambda r, n: [r.standard_normal((n, 128)).astype(np.float32)],
                {"10ms": 20_000, "100ms": 100_000}, "(n, 128) float32"),
    "normalise": (normalise, lambda r, n: [r.standard_normal((n, 256))], {"10ms": 8_000, "100ms": 40_000}, "(n, 256) float64"),
    "jacobi2d": (jacobi, lambda r, n: [_grid2(n), 20], {"10ms": 500, "100ms": 1200}, "(n, n) x 20 steps"),
    "heat3d": (heat3d, lambda r, n: [_grid3(r, n), 10], {"10ms": 64, "100ms": 110}, "(n, n, n) x 10 steps"),
    "hdiff": (hdiff, lambda r, n: [r.random((n + 4, n + 4, 32)), r.random((n, n, 32)) * 0.1],
              {"10ms": 128, "100ms": 340}, "(n, n, 32) float64"),
    "thomas": (thomas, lambda r, n: [r.random((64, n)), 4 + r.random((64, n)), r.random((64, n)), r.random((64, n))],
               {"10ms": 20_000, "100ms": 200_000}, "64 rows x n columns"),
    "mlp": (mlp, lambda r, n: [r.standard_normal((n, 128)), r.standard_normal((128, 256)) / 11.3, r.standard_normal(256),
                               r.standard_normal((256, 10)) / 16.0, r.standard_normal(10)],
            {"10ms": 4_096, "100ms": 32_768}, "X (n, 128), 128-256-10"),
    "nbody": (nbody, _nbody, {"10ms": 600, "100ms": 1500}, "n bodies"),
    "cholesky": (cholesky, lambda r, n: [_spd(r, n)], {"10ms": 650, "100ms": 1200}, "(n, n), loop over rows"),
    "lu": (lu, lambda r, n: [_dd(r, n)], {"10ms": 250, "100ms": 550}, "(n, n), loop over rows"),
    "masked_mean": (masked_mean, lambda r, n: _masked(r, n, 100), {"10ms": 100_000, "100ms": 600_000}, "n points, 100 bins"),
    "tiny": (tiny, lambda r, n: [r.random(n), r.random(n)], {"10ms": 16, "100ms": 1024}, "n float64 (per-call overhead)"),
}

SIZES = ("10ms", "100ms")


def make_inputs(name, size):
    """The inputs of case `name` at `size` (same seed in every process)."""
    fn, maker, sizes, _ = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    return maker(rng, sizes[size])
