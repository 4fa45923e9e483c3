"""The computational cases of `make demo` (bench/demo.py) and bench/bench_fusion.py: the five
fused-kernel cases of the issue, and case 7, an MLP layer (a matmul library call with a fused
epilogue).

Each case has the NumPy function (what a user writes), its inputs, and the same program
as an npc graph built directly with ``npc._core._FusionGraph`` (what the tracer records for
that function), so the fused backend can be measured on its own when ``npc.compile`` is not
available in this build.
"""
import numpy as np

CODES = {np.dtype(n): i for i, n in enumerate(
    ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
     "float16", "float32", "float64", "complex64", "complex128"])}
F8, F4, I8, B1 = CODES[np.dtype("f8")], CODES[np.dtype("f4")], CODES[np.dtype("i8")], CODES[np.dtype("?")]


# ---------------------------------------------------------------- NumPy functions
def outer_sum(X, Y):
    return np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))


def kmeans_assign(X, means):
    return np.argmin(np.linalg.norm(X - means[:, None], axis=2), axis=0)


def chain(a, b):
    return a * b - 4.1 * a > 2.5 * b


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def jacobi(u0, steps=50):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def mlp_layer(X, W, b):
    return np.maximum(X @ W + b, 0)


# ---------------------------------------------------------------- inputs
def inputs(case, small=False):
    rng = np.random.default_rng(case)
    if case == 1:
        n = 64 if small else 1024
        return [rng.random((n, 64)), rng.random((n, 64))], []
    if case == 2:
        n = 20_000 if small else 2_000_000
        X = np.concatenate([rng.normal(0.0, 1.0, (n // 2, 2)), rng.normal(5.0, 1.0, (n - n // 2, 2))])
        means = np.array([[0, 0], [5, 5]], dtype=np.int64)
        return [X, means], []
    if case == 3:
        n = 100_003 if small else 10_000_000
        return [rng.random(n), rng.random(n)], []
    if case == 4:
        shape = (2, 3, 16, 128) if small else (16, 16, 128, 128)
        return [rng.standard_normal(shape).astype(np.float32)], []
    if case == 5:
        n = 40 if small else 1000
        u = np.zeros((n, n))
        u[0, :] = 1.0
        u[:, 0] = 0.5
        return [u], []
    if case == 7:
        n, k, m = (64, 32, 16) if small else (8192, 64, 512)
        return [rng.standard_normal((n, k)), rng.standard_normal((k, m)) / np.sqrt(k), rng.standard_normal(m)], []
    raise ValueError(case)


NUMPY = {1: outer_sum, 2: kmeans_assign, 3: chain, 4: softmax, 5: jacobi, 7: mlp_layer}
NAMES = {1: "sum(X[:,:,None]*Y[:,None,:])", 2: "k-means assignment", 3: "a*b - 4.1*a > 2.5*b",
         4: "softmax (16,16,128,128) f4", 5: "Jacobi 1000^2 x 50 steps", 7: "MLP relu(X@W+b) 8192x64x512"}
# Library calls (matmul) per call of a case, besides its fused kernels.
LIBRARY_CALLS = {7: 1}


# ---------------------------------------------------------------- graphs (what the tracer records)
def graph(case, args):
    """The case's program as an npc graph for inputs `args`; returns (graph, scalars)."""
    from npc import _core
    g = _core._FusionGraph()
    if case == 1:
        X, Y = args
        n, m = X.shape
        x = g.input(0, F8, [n, m])
        y = g.input(1, F8, [n, m])
        xb = g.broadcast(g.reshape(x, [n, m, 1]), [n, m, m])
        yb = g.broadcast(g.reshape(y, [n, 1, m]), [n, m, m])
        g.output(g.reduce("add", g.ufunc("multiply", [xb, yb], F8), [1, 2], False, F8))
        return g, []
    if case == 2:
        X, means = args
        n = X.shape[0]
        x = g.input(0, F8, [n, 2])
        mf = g.cast(g.input(1, I8, [2, 2]), F8)
        d = g.ufunc("subtract", [g.broadcast(x, [2, n, 2]), g.broadcast(g.reshape(mf, [2, 1, 2]), [2, n, 2])], F8)
        s = g.reduce("add", g.ufunc("multiply", [d, d], F8), [2], False, F8)
        nrm = g.ufunc("sqrt", [s], F8)
        g.output(g.prim("argmin", [nrm], I8, [n], [0, 0]))
        return g, []
    if case == 3:
        a, b = args
        n = a.shape[0]
        x = g.input(0, F8, [n])
        y = g.input(1, F8, [n])
        c1 = g.broadcast(g.scalar(0, F8), [n])
        c2 = g.broadcast(g.scalar(1, F8), [n])
        lhs = g.ufunc("subtract", [g.ufunc("multiply", [x, y], F8), g.ufunc("multiply", [c1, x], F8)], F8)
        g.output(g.ufunc("greater", [lhs, g.ufunc("multiply", [c2, y], F8)], B1))
        return g, [4.1, 2.5]
    if case == 4:
        (x,) = args
        shape = list(x.shape)
        keep = shape[:-1] + [1]
        xi = g.input(0, F4, shape)
        mx = g.reduce("maximum", xi, [len(shape) - 1], True, F4)
        e = g.ufunc("exp", [g.ufunc("subtract", [xi, g.broadcast(mx, shape)], F4)], F4)
        s = g.reduce("add", e, [len(shape) - 1], True, F4)
        assert g.shape(s) == keep
        g.output(g.ufunc("divide", [e, g.broadcast(s, shape)], F4))
        return g, []
    if case == 5:
        (u0,) = args
        n = u0.shape[0]
        k = n - 2
        u = g.input(0, F8, [n, n])

        def sl(base, r0, c0):
            return g.slice(base, [r0, 1, c0, 1], [k, k])

        quarter = g.broadcast(g.const(0.25, F8), [k, k])
        for _ in range(50):
            s = g.ufunc("add", [g.ufunc("add", [g.ufunc("add", [sl(u, 0, 1), sl(u, 2, 1)], F8), sl(u, 1, 0)], F8),
                                sl(u, 1, 2)], F8)
            u = g.write(u, sl(u, 1, 1), g.ufunc("multiply", [quarter, s], F8))
        g.output(u)
        return g, []
    raise ValueError(case)
