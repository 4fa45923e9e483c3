"""cumsum/cumprod and sort/argsort inside npc.compile (docs/ir.md, Note [traced scans and
sorts] in src/tracer/trace_hooks.cpp): they are graph nodes, not graph breaks.

Every case runs on the eager interpreter (backend="eager") and on the fused backend with
codegen_errors="raise", and compares with NumPy: values bit-identical, dtypes and shapes
equal. Graph facts come from npc.compiler.stats() / npc.explain (no graph break), the fused
backend's counters (kernels and library calls that ran, no eager fallback) and the cached
graphs (the IR's dtype and shape of each scan/sort node equal the eager result's).
"""
import os
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
          "float32", "float64", "complex64", "complex128"]
KINDS = ["0d", "empty", "1d", "2d", "strided", "negative"]


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-scansort")
    compiler.reset()
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield
    compiler.reset()


def _example(dtype, kind):
    rng = np.random.default_rng(11)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        base = rng.standard_normal((5, 7)) > 0
    elif dt.kind == "c":
        base = (rng.integers(-3, 4, (5, 7)) + 1j * rng.integers(-3, 4, (5, 7))).astype(dt)
    elif dt.kind == "f":
        base = (rng.standard_normal((5, 7)) * 3).astype(dt)
        base[1, 2] = np.nan  # NaN sorts last; a scan propagates it
        base[3, 0] = base[3, 4]  # ties (argsort is stable)
    else:
        base = rng.integers(-20 if dt.kind == "i" else 0, 40, (5, 7)).astype(dt)
        base[2, 1] = base[2, 5]
    if kind == "0d":
        return np.array(base[1, 3])
    if kind == "empty":
        return base[:0]
    if kind == "1d":
        return base[2].copy()
    if kind == "2d":
        return base
    if kind == "strided":
        return base[:, ::2]
    if kind == "negative":
        return base[::-1, ::-2]
    raise AssertionError(kind)


def _axes(x, zero_d_axes=()):
    """None, every axis; a 0-d input (which NumPy treats as 1-d for cumsum and argsort) also
    takes `zero_d_axes`."""
    return [None] + (list(zero_d_axes) if x.ndim == 0 else list(range(-x.ndim, x.ndim)))


def _bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    # bit-identical (NaN payloads and signed zeros included)
    assert got.tobytes() == want.tobytes(), (got, want)


def _run(fn, args, backend):
    """Traces, then replays `fn` compiled; checks no graph break and no eager fallback."""
    f = npc.compile(fn, backend=backend)
    outs = []
    for _ in range(2):
        s0, f0 = compiler.stats(), npc._fusion.stats()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs.append(f(*args))
        s1, f1 = compiler.stats(), npc._fusion.stats()
        assert s1["graph_breaks"] == s0["graph_breaks"], "graph break"
        if backend == "fused":
            assert f1["fallbacks"] == f0["fallbacks"], "the graph ran on the eager backend"
            ran = f1["library_calls"] - f0["library_calls"] + f1["kernel_runs"] - f0["kernel_runs"]
            assert ran > 0, "no generated kernel or library call ran"
    return f, outs


def _nodes(f, what):
    es = [e for es in f._entries.values() for e in es]
    assert len(es) == 1
    return [n for n in es[0].graph.nodes() if n[1] == what]


def _check_ir(f, what, want):
    (node,) = _nodes(f, what)
    assert np.dtype(npc._dtypes.DTYPES[node[2]]) == np.asarray(want).dtype
    assert tuple(node[3]) == np.shape(want)


def _same_results_as_numpy(fn, args, backend):
    """fn compiled returns a tuple equal bit for bit to fn run eagerly on NumPy."""
    want = fn(*args)
    _, outs = _run(fn, args, backend)
    for got in outs:
        for g, w in zip(got, want, strict=True):
            _bits_equal(g, w)


def _check_every_kind_and_axis(npf, dtype, backend, prim, zero_d_axes=(), traced_kw=None, want_kw=None):
    """Compile ``npf(x, axis=axis, **traced_kw)`` for every shape kind of `dtype` and every
    axis; each result must equal NumPy's eager ``npf(x, axis=axis, **want_kw)`` bit for bit
    and the graph must hold the primitive `prim`."""
    checked = 0
    for kind in KINDS:
        x = _example(dtype, kind)
        for axis in _axes(x, zero_d_axes=zero_d_axes):
            fn = (lambda a, _ax=axis: npf(a, axis=_ax, **(traced_kw or {})))
            with np.errstate(all="ignore"):
                want = npf(x, axis=axis, **(want_kw or {}))
            f, outs = _run(fn, (x,), backend)
            for got in outs:
                _bits_equal(got, want)
            _check_ir(f, prim, want)
            checked += 1
    assert checked > 0


# ---------------------------------------------------------------- cumsum / cumprod
@pytest.mark.parametrize("backend", ["eager", "fused"])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_scan_every_dtype_shape_axis(name, dtype, backend):
    _check_every_kind_and_axis(getattr(np, name), dtype, backend, "prim:" + name, zero_d_axes=(0, -1))


@pytest.mark.parametrize("backend", ["eager", "fused"])
def test_scan_dtype_keyword_and_methods(backend):
    x = _example("int8", "2d")
    y = _example("float32", "strided")
    b = _example("bool", "2d")

    def fn(x, y, b):
        return (np.cumsum(x, axis=1, dtype=np.int16), x.cumsum(), np.cumprod(y, axis=0, dtype=np.float64),
                y.cumprod(1), np.cumsum(b, axis=0), np.cumsum(b, dtype=np.uint8), np.cumprod(x, dtype=np.float16))
    with np.errstate(all="ignore"):
        want = fn(x, y, b)
    _, outs = _run(fn, (x, y, b), backend)
    for got in outs:
        for g, w in zip(got, want):
            _bits_equal(g, w)


@pytest.mark.parametrize("backend", ["eager", "fused"])
def test_scan_out_argument(backend):
    x = _example("int16", "2d")

    def fn(x, o):
        r = np.cumsum(x, axis=0, out=o)
        return r * 2

    o_np = np.zeros(x.shape, np.float64)
    want = fn(x, o_np)
    o = np.zeros(x.shape, np.float64)
    f = npc.compile(fn, backend=backend)
    got = f(x, o)
    _bits_equal(got, want)
    _bits_equal(o, o_np)
    o[...] = 0
    got = f(x, o)  # replay writes the caller's array again
    _bits_equal(got, want)
    _bits_equal(o, o_np)
    assert compiler.stats()["graph_breaks"] == 0


@pytest.mark.parametrize("backend", ["eager", "fused"])
def test_nancumsum_nancumprod(backend):
    x = _example("float64", "2d")

    def fn(x):
        return np.nancumsum(x, axis=1), np.nancumprod(x * 0.5)
    _same_results_as_numpy(fn, (x,), backend)


@pytest.mark.parametrize("backend", ["eager", "fused"])
def test_scan_errors_match_numpy(backend):
    x = _example("float64", "0d")
    f = npc.compile(lambda a: np.cumsum(a, axis=1), backend=backend)
    with pytest.raises(np.exceptions.AxisError):
        np.cumsum(x, axis=1)
    with pytest.raises(np.exceptions.AxisError):
        f(x)
    y = _example("float64", "2d")
    g = npc.compile(lambda a: np.cumprod(a, axis=2), backend=backend)
    with pytest.raises(np.exceptions.AxisError):
        g(y)


# ---------------------------------------------------------------- sort / argsort
@pytest.mark.parametrize("backend", ["eager", "fused"])
@pytest.mark.parametrize("name", ["sort", "argsort"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_every_dtype_shape_axis(name, dtype, backend):
    # The compiled call asks for quicksort; npc sorts stably, so argsort matches NumPy's stable order.
    _check_every_kind_and_axis(getattr(np, name), dtype, backend, "prim:" + name,
                               zero_d_axes=(0, -1) if name == "argsort" else (),
                               traced_kw={"kind": "quicksort"},
                               want_kw={"kind": "stable"} if name == "argsort" else {})


@pytest.mark.parametrize("backend", ["eager", "fused"])
def test_sort_method_in_place_and_descending(backend):
    x = _example("float32", "2d")

    def fn(a):
        b = a * 2
        b.sort(axis=0)
        c = a[1] + 1
        c.sort()
        return b, c, np.sort(a, axis=-1, descending=True), np.argsort(a, axis=0, descending=True)
    _same_results_as_numpy(fn, (x,), backend)


@pytest.mark.parametrize("backend", ["eager", "fused"])
def test_sort_in_place_on_input_writes_back(backend):
    def fn(a):
        a.sort(axis=1)
        return a[:, :2] + 0

    x_np = _example("int32", "2d").copy()
    x = x_np.copy()
    want = fn(x_np)
    f = npc.compile(fn, backend=backend)
    got = f(x)
    _bits_equal(got, want)
    _bits_equal(x, x_np)
    assert compiler.stats()["graph_breaks"] == 0


@pytest.mark.parametrize("backend", ["eager", "fused"])
def test_sort_errors_match_numpy(backend):
    x = _example("float64", "0d")
    y = _example("float64", "2d")
    for fn, arg in [(lambda a: np.sort(a), x), (lambda a: np.sort(a, axis=0), x),
                    (lambda a: np.argsort(a, axis=1), x), (lambda a: np.sort(a, axis=2), y),
                    (lambda a: np.argsort(a, axis=-3), y)]:
        with pytest.raises(np.exceptions.AxisError):
            fn(arg)
        with pytest.raises(np.exceptions.AxisError):
            npc.compile(fn, backend=backend)(arg)
    with pytest.raises(ValueError):
        np.sort(y, kind="bogus")
    with pytest.raises(ValueError):
        npc.compile(lambda a: np.sort(a, kind="bogus"), backend=backend)(y)


# ---------------------------------------------------------------- mixed programs
def _fused_counts(fn, args):
    f = npc.compile(fn, backend="fused")
    res = []
    for _ in range(2):
        s0 = npc._fusion.stats()
        out = f(*args)
        s1 = npc._fusion.stats()
        assert s1["fallbacks"] == s0["fallbacks"]
        res.append((out, s1["kernel_runs"] - s0["kernel_runs"], s1["library_calls"] - s0["library_calls"]))
    assert npc.explain(fn)(*args).graph_break_count == 0
    return res


def test_cumsum_between_elementwise_producer_and_consumer():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 33))
    n = 7.0

    def fn(x, n):
        return np.cumsum(x * 2, axis=1) / n

    want = fn(x, n)
    for got, kernels, calls in _fused_counts(fn, (x, n)):
        _bits_equal(got, want)
        assert (kernels, calls) == (2, 0)  # the scan (producer inlined), epilogue kernel


def test_sort_of_difference_then_slice():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((16, 40)).astype(np.float32)
    b = rng.standard_normal((16, 40)).astype(np.float32)
    k = 5

    def fn(a, b):
        return np.sort(a - b)[..., :k] * 3, np.argsort(a * b, axis=0)[:2]

    want = fn(a, b)
    for got, kernels, calls in _fused_counts(fn, (a, b)):
        for g, w in zip(got, want):
            _bits_equal(g, w)
        assert calls == 2 and kernels >= 1


def test_scan_and_sort_chain_eager_backend_equals_numpy():
    rng = np.random.default_rng(5)
    x = rng.integers(-100, 100, (8, 9)).astype(np.int32)

    def fn(x):
        s = np.sort(x, axis=0)
        c = np.cumsum(s, axis=0)
        return c[-1] - np.cumprod(np.argsort(x, axis=None) % 3 + 1)[-1]

    want = fn(x)
    for backend in ("eager", "fused"):
        _, outs = _run(fn, (x,), backend)
        for got in outs:
            _bits_equal(got, want)


@pytest.mark.parametrize("backend", ["eager", "fused"])
def test_symbolic_sizes(backend):
    """With dynamic shapes a scan/sort along an axis stays in the graph for every size; the
    flattening of axis=None over symbolic sizes is a graph break (reshape of symbolic dims),
    and the result still equals NumPy's."""
    for fn, breaks in [(lambda a: np.argsort(a, axis=0), 0), (lambda a: np.cumprod(a * 2, axis=1), 0),
                       (lambda a: np.sort(a - 1, axis=-1), 0), (lambda a: np.cumsum(a), None)]:
        compiler.reset()
        f = npc.compile(fn, dynamic=True, backend=backend)
        for n in (3, 5, 8):
            x = np.random.default_rng(n).standard_normal((n, 4))
            _bits_equal(f(x), fn(x))
        if breaks is not None:
            assert compiler.stats()["graph_breaks"] == breaks
