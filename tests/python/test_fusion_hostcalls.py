"""Graphs with ops the fused backend does not generate (docs/fusion.md, "Library and host
calls"): such a node runs as a host call (npc's eager op on views of the kernels' buffers)
between fused kernels, instead of the whole graph running on the eager interpreter. Ops
that are easy to generate are generated: divmod (NumPy's npy_divmod, as // and %) and the
complex transcendental functions (the C library's, as NumPy's loops call them).

Every case: the result equals NumPy's (values and dtype), no graph break, no eager
fallback, and the counts of generated kernels and host calls per call are the expected ones.
"""
import os

import numpy as np
import pytest

import npc
from npc import _core


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-hostcalls")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def run_compiled(fn, args, kernels, calls):
    f = npc.compile(fn, backend="fused")
    out = None
    for _ in range(2):  # trace, replay
        s0 = npc._fusion.stats()
        out = f(*args)
        s1 = npc._fusion.stats()
        assert s1["fallbacks"] == s0["fallbacks"], "the graph ran on the eager backend"
        assert (s1["kernel_runs"] - s0["kernel_runs"], s1["library_calls"] - s0["library_calls"]) == (kernels, calls)
    assert npc.explain(fn)(*args).graph_break_count == 0
    return np.asarray(out)


rng = np.random.default_rng(0)
X = rng.standard_normal(1001)
Y = rng.standard_normal(1001) + 2.5
C = X + 1j * Y
I = rng.integers(-50, 50, 1001)
J = rng.integers(1, 50, 1001)
IDX = rng.integers(-1001, 1001, 300)

# (id, fn, args, generated kernels per call, host calls per call, exact)
CASES = [
    # host calls: producer kernel(s) -> the eager op -> epilogue kernel
    ("gcd", lambda i, j: np.gcd(i + 1, j) * 2, (I, J), 2, 1, True),
    # An integer power with an array exponent runs at a graph break (so a negative exponent
    # raises NumPy's ValueError on every call, even when the power is dead code): not here.
    ("ldexp", lambda x, i: np.ldexp(x * 2, i % 10) - 1, (X, I), 2, 1, True),
    ("nextafter", lambda x, y: np.nextafter(x + 1, y) * 2, (X, Y), 2, 1, True),
    ("complex-max", lambda c: np.max(c * 2) + 1, (C,), 2, 1, True),
    ("complex-argmin", lambda c: np.argmin(c * 2), (C,), 1, 1, True),
    ("modf", lambda x: (lambda f, w: f * 2 + w)(*np.modf(x * 3)), (X,), 2, 2, True),
    # integer-array indexing by an input: bounds checked before the run, the gather is fused
    ("gather-input-index", lambda x, k: np.exp(x[k] * 2) + 1, (X, IDX), 1, 0, False),
    # an index computed in the graph: one kernel computes it, a host call checks it, one gathers
    ("gather-computed-index", lambda x, k: np.exp(x[k % 5] * 2) + 1, (X, IDX), 2, 1, False),
    # generated: no host call
    ("divmod-float", lambda x, y: (lambda q, r: q * 2 + r)(*np.divmod(x * 3, y)), (X, Y), 1, 0, True),
    ("divmod-int", lambda i, j: (lambda q, r: q - r)(*np.divmod(i * 7, j - 25)), (I, J), 1, 0, True),
    ("complex-exp-abs", lambda c, x: np.abs(np.exp(c * 0.5)) * (x * x + 1), (C, X), 1, 0, False),
    ("complex-log", lambda c: np.log(c + 1) * 2, (C,), 1, 0, True),
]


@pytest.mark.parametrize("fn,args,kernels,calls,exact", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_unsupported_nodes_run_between_fused_kernels(fn, args, kernels, calls, exact):
    with np.errstate(all="ignore"):
        got = run_compiled(fn, args, kernels, calls)
        want = np.asarray(fn(*args))
    assert got.dtype == want.dtype and got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:  # abs of a complex is hypot in both, the rest identical: a few ULPs
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(want.dtype).eps, atol=0)


# The ufuncs whose complex loops generated code renders with a prelude helper (NumPy's own
# complex formulas), from the emitter table.
COMPLEX_FUNCS = [r.name for r in _core.op_table() if r.kind == 0 and "complex" in r.emit["cpp"][3]]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_transcendentals_bit_for_bit(dtype):
    """Generated complex functions call the C library's, as NumPy does: identical bits,
    including infinities, NaNs, signed zeros, subnormals and overflowing arguments."""
    r = np.random.default_rng(1)
    edge = [0, -0.0, np.inf, -np.inf, np.nan, 1e-310, 710, -745, 89, -104]
    re = np.concatenate([r.standard_normal(3000) * 3, r.standard_normal(300) * 700, edge, edge[::-1]])
    im = np.concatenate([r.standard_normal(3000) * 3, r.standard_normal(300) * 700, edge[::-1], edge])
    with np.errstate(all="ignore"):
        c = (re + 1j * im).astype(dtype)
    fns = [getattr(np, n) for n in COMPLEX_FUNCS]

    def all_funcs(c):
        return tuple(fn(c) for fn in fns)

    f = npc.compile(all_funcs, backend="fused")
    s0 = npc._fusion.stats()
    with np.errstate(all="ignore"):
        got = f(c)
        want = all_funcs(c)
    s1 = npc._fusion.stats()
    assert s1["kernel_runs"] - s0["kernel_runs"] == 1 and s1["library_calls"] == s0["library_calls"]
    real = np.float64 if dtype == np.complex128 else np.float32
    for name, g, w in zip(COMPLEX_FUNCS, got, want):
        g, w = np.asarray(g).view(real), w.view(real)
        same = (g.view(np.uint64 if real == np.float64 else np.uint32) == w.view(np.uint64 if real == np.float64
                                                                               else np.uint32)) | (np.isnan(g) & np.isnan(w))
        assert same.all(), f"{name}: {int((~same).sum())} elements differ"


def test_random_numbers_inside_a_fused_graph():
    """numpy.random calls (host calls, run again on each replay) no longer make the whole
    graph eager: the arithmetic around them is fused, and the stream advances per call."""
    def fn(x):
        return np.sqrt(x * x + np.random.random(x.shape)) * 2

    f = npc.compile(fn, backend="fused")
    for seed in (3, 4):
        np.random.seed(seed)
        s0 = npc._fusion.stats()
        got = f(X)
        s1 = npc._fusion.stats()
        np.random.seed(seed)
        want = fn(X)
        np.testing.assert_array_equal(got, want)
        assert s1["kernel_runs"] - s0["kernel_runs"] == 1 and s1["library_calls"] - s0["library_calls"] == 1
        assert s1["fallbacks"] == s0["fallbacks"]


def test_host_call_errors_are_numpys():
    """A host call raises NumPy's exception (an out-of-bounds index, an empty max)."""
    f = npc.compile(lambda x, k: x[k] * 2, backend="fused")
    with pytest.raises(IndexError) as got:
        f(X, np.array([0, 5000]))
    with pytest.raises(IndexError) as want:
        X[np.array([0, 5000])] * 2
    assert str(got.value) == str(want.value)
    g = npc.compile(lambda c: np.max(c * 2, axis=0), backend="fused")
    with pytest.raises(ValueError):
        g(np.zeros((0, 3), dtype=complex))
