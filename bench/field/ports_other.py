"""NumExpr expressions and the hand-written C++/OpenMP kernels for the cases that have them."""
import ctypes

import numpy as np

# NumExpr: the cases that are elementwise expressions (one string each, or two where a user
# would name an intermediate). Strings are evaluated with the case's arguments as locals.
NUMEXPR = {
    "bool_chain": (("a", "b"), ["a * b - 4.1 * a > 2.5 * b"]),
    "haversine": (("lat1", "lon1", "lat2", "lon2"),
                  ["sin((lat2 - lat1) / 2) ** 2 + cos(lat1) * cos(lat2) * sin((lon2 - lon1) / 2) ** 2",
                   "2 * 6371.0 * arctan2(sqrt(h), sqrt(1 - h))"]),
    "eos": (("T", "S", "p"),
            ["(999.84 + T * (6.79e-2 + T * (-9.09e-3 + T * (1.0e-4 + T * (-1.12e-6 + T * 6.5e-9))))"
             " + S * (0.824 + T * (-4.09e-3 + T * (7.64e-5 + T * (-8.25e-7 + T * 5.39e-9))))"
             " + S * sqrt(S) * (-5.72e-3 + T * (1.02e-4 - T * 1.65e-6)) + 4.83e-4 * S * S)"
             " / (1.0 - p / (19652.2 + T * (148.4 + T * (-2.33 + T * (1.36e-2 - T * 5.16e-5)))"
             " + S * (54.67 + T * (-0.603 + T * (1.10e-2 - T * 6.17e-5)))"
             " + p * (3.24 + T * (1.44e-3 + T * (1.16e-4 - T * 5.78e-7)))))"]),
    "clip_axpy": (("x", "y"), ["where(3 * x + y < -1048576, -1048576, where(3 * x + y > 1048576, 1048576, 3 * x + y))"]),
    "tiny": (("a", "b"), ["sum(a * b + 1.0)"]),
}


def numexpr_runner(name, args):
    """A no-argument callable evaluating the case with NumExpr, or None when it has no expression."""
    if name not in NUMEXPR:
        return None
    import numexpr as ne
    names, exprs = NUMEXPR[name]
    env = dict(zip(names, args))
    if len(exprs) == 1:
        (e,) = exprs
        return lambda: ne.evaluate(e, local_dict=env)

    def run():
        h = ne.evaluate(exprs[0], local_dict=env)
        return ne.evaluate(exprs[1], local_dict=dict(env, h=h))
    return run


def handwritten_runner(name, args):
    """A no-argument callable running bench/handwritten/kernels.cpp on `args`, or None."""
    import bench_fusion
    lib = bench_fusion.handwritten()
    if lib is None:
        return None
    p = lambda a: ctypes.c_void_p(a.ctypes.data)  # noqa: E731
    i64 = ctypes.c_int64
    if name == "outer_sum":
        X, Y = args
        out = np.empty(X.shape[0])
        return lambda: (lib.hw_outer_sum(p(X), p(Y), p(out), i64(X.shape[0]), i64(X.shape[1])), out)[1]
    if name == "kmeans":
        X, means = args
        out = np.empty(X.shape[0], dtype=np.int64)
        return lambda: (lib.hw_kmeans(p(X), p(means), p(out), i64(X.shape[0])), out)[1]
    if name == "bool_chain":
        a, b = args
        out = np.empty(a.shape[0], dtype=bool)
        return lambda: (lib.hw_chain(p(a), p(b), p(out), i64(a.shape[0])), out)[1]
    if name == "softmax":
        (x,) = args
        out = np.empty_like(x)
        return lambda: (lib.hw_softmax(p(x), p(out), i64(x.shape[0]), i64(x.shape[1])), out)[1]
    if name == "jacobi2d":
        u0, steps = args
        u, tmp = u0.copy(), np.empty_like(u0)

        def run():
            u[...] = u0  # the source copies its input too
            lib.hw_jacobi(p(u), p(tmp), i64(u.shape[0]), i64(steps))
            return u
        return run
    return None
