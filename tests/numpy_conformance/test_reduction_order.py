"""Float reductions accumulate in NumPy's order (Note [NumPy reduction order] in
src/ops/reduce_plan.cpp): on order-sensitive data the results are identical to
NumPy's (0 ULP) for C, Fortran, transposed, strided and reversed views and every axis
combination. npc's NumPy fallback is an error here."""
import itertools
import warnings

import numpy as np
import pytest

import npc
from npc import _fallback

from _ufunc_helpers import assert_same



VIEWS = {
    "c": lambda b: b,
    "fortran": np.asfortranarray,
    "transposed": lambda b: b.transpose(2, 0, 1),
    "strided": lambda b: b[:, ::2, :],
    "rev-all": lambda b: b[::-1, ::-1, ::-1],
    "rev0": lambda b: b[::-1],
    "rev1": lambda b: b[:, ::-1, :],
    "rev2": lambda b: b[:, :, ::-1],
    "rev-transposed": lambda b: b[::-1].transpose(1, 2, 0),
}
CASES = [pytest.param(n, v, id=f"{n}-{v}") for n in ("sum", "prod", "mean", "nansum") for v in VIEWS]
AXES = [None, 0, 1, 2, (0, 1), (0, 2), (1, 2), (2, 0)]


@pytest.mark.parametrize("name,view", CASES)
def test_reduction_order_bits(name, view):
    old = npc.get_num_threads()
    npc.set_num_threads(1)
    bad = []
    try:
        for shape in ((4, 6, 5), (3, 40, 7), (5, 3, 300), (2, 3, 9000)):
            for dtype in ("float32", "float64", "complex64", "complex128"):
                rng = np.random.default_rng(11)
                v = rng.standard_normal(shape) * 1e3
                w = v[..., ::-1]
                if name == "prod":  # products of numbers near 1: order-sensitive, no overflow
                    v, w = 1 + v / 1e5, w / 1e5
                base = v.astype(dtype) if dtype.startswith("f") else (v + 1j * w).astype(dtype)
                a = VIEWS[view](base)
                for axis in AXES:
                    e = getattr(np, name)(a, axis=axis)
                    g = getattr(npc, name)(npc.asarray(a), axis=axis)
                    try:
                        assert_same(g, e, name, 0, f"{name} {dtype} {shape} {view} axis={axis}")
                    except AssertionError as exc:
                        bad.append(str(exc)[:200])
    finally:
        npc.set_num_threads(old)
    assert not bad, f"{len(bad)} mismatches: " + "\n".join(bad[:5])


def _random_view(rng, dtype):
    """A random view: 1-4 dims (some of size 1), reversed/strided axes, C or Fortran base,
    a random transpose, sometimes a broadcast axis; sizes reach past NumPy's 8192-element
    buffer."""
    nd = int(rng.integers(1, 5))
    sizes = [1, 2, 3, 5, 8, 9, 17, 64, 130, 300, 1000, 9000]
    while True:
        shape = [int(rng.choice(sizes)) for _ in range(nd)]
        if np.prod(shape) <= 40000:
            break
    steps = [int(rng.choice([1, 1, -1, 2, -2, 3])) for _ in range(nd)]
    full = [s * abs(st) for s, st in zip(shape, steps)]
    v = rng.standard_normal(full) * 1e3
    if dtype.startswith("complex"):
        v = v + 1j * rng.standard_normal(full) * 1e3
    base = v.astype(dtype)
    if rng.random() < 0.3:
        base = np.asfortranarray(base)
    a = base[tuple(slice(None, None, st) for st in steps)].transpose(rng.permutation(nd))
    if rng.random() < 0.1:
        a = np.broadcast_to(a[:1], (3,) + a.shape[1:])
    k = int(rng.integers(0, nd + 1))
    axis = None if rng.random() < 0.25 else tuple(int(x) for x in rng.choice(nd, size=k, replace=False))
    return a, axis


@pytest.mark.parametrize("seed", range(4))
def test_reduction_order_random_views(seed):
    """Bit-exact against NumPy on random views x axes x dtypes (Note [NumPy reduction order]),
    including casts through NumPy's buffer (sum with dtype=, mean of float16) and where=."""
    old = npc.get_num_threads()
    npc.set_num_threads(1 + seed % 2)
    rng = np.random.default_rng(1000 + seed)
    bad = []
    try:
        for _ in range(60):
            dtype = str(rng.choice(["float16", "float32", "float64", "complex64", "complex128"]))
            a, axis = _random_view(rng, dtype)
            name = str(rng.choice(["sum", "sum", "mean", "prod", "nansum"]))
            kw = {}
            if name == "prod":  # near 1: order-sensitive without overflow
                a = (1 + a.astype("complex128" if dtype.startswith("complex") else "float64") / 1e5).astype(dtype)
            if name == "sum" and dtype in ("float16", "float32") and rng.random() < 0.4:
                kw["dtype"] = "float64" if dtype == "float32" else "float32"
            if name in ("sum", "mean") and rng.random() < 0.2:  # integers reduced in float (cast pieces)
                with np.errstate(all="ignore"):
                    a = (a.real.astype("float64") * 100).astype(str(rng.choice(["int64", "int32", "uint8", "bool"])))
                if name == "sum":
                    kw["dtype"] = str(rng.choice(["float32", "float64"]))
            if rng.random() < 0.3:  # where=: NumPy sums each run of true mask values on its own
                m = rng.random(a.shape) < 0.8
                if a.ndim > 1 and rng.random() < 0.3:
                    m = np.broadcast_to(m[..., :1], a.shape)  # a broadcast mask
                kw["where"] = m
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # "Mean of empty slice" (both warn)
                e = getattr(np, name)(a, axis=axis, **kw)
                g = getattr(npc, name)(npc.asarray(a), axis=axis,
                                       **{k: npc.asarray(v) if k == "where" else v for k, v in kw.items()})
            try:
                what = {k: (v if k != "where" else "mask") for k, v in kw.items()}
                assert_same(g, e, name, 0, f"{name} {dtype} {what} {a.shape} {a.strides} axis={axis}")
            except AssertionError as exc:
                bad.append(str(exc)[:300])
    finally:
        npc.set_num_threads(old)
    assert not bad, f"{len(bad)} mismatches: " + "\n".join(bad[:5])


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("dtype", ["float64", "int64", "complex128"])
def test_where_with_initial_every_axis(name, dtype):
    """Masked-out elements do not count for any axis, also when `initial` is not the identity
    (an outer-axis reduction once added `initial` for each masked element)."""
    if dtype == "complex128" and name in ("max", "min"):
        pytest.skip("NumPy's complex max/min order is tested elsewhere")
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((4, 6, 5)) * 10).astype(dtype)
    m = rng.random((4, 6, 5)) < 0.6
    for view in (lambda b: b, lambda b: b[::-1, :, ::-1], lambda b: b.transpose(2, 0, 1)):
        av, mv = view(a), view(m)
        for axis in (None, 0, 1, 2, (0, 2)):
            e = getattr(np, name)(av, axis=axis, where=mv, initial=5)
            g = getattr(npc, name)(npc.asarray(av), axis=axis, where=npc.asarray(mv), initial=5)
            assert_same(g, e, name, 0, f"{name} {dtype} axis={axis}")


@pytest.mark.parametrize("dtype", ["float16", "complex64", "complex128", "float32", "float64"])
def test_long_run_sum_threads(dtype):
    """A full sum of one long run with several threads keeps NumPy's association: float16
    accumulates the whole run in float32 (no rounding of partial sums to float16, which
    overflowed to inf here), complex sums are not split into chunks."""
    old = npc.get_num_threads()
    npc.set_num_threads(2)
    try:
        rng = np.random.default_rng(7)
        v = rng.standard_normal(300_000) * 1e3 - 150.0
        if dtype == "float16":  # halves that cancel: the total fits in float16, half sums do not
            v = rng.standard_normal(300_000) * 10 + np.where(np.arange(300_000) < 150_000, 50.0, -50.0)
        if dtype.startswith("complex"):
            v = v + 1j * rng.standard_normal(300_000) * 1e3
        a = v.astype(dtype)
        for view in (a, a[::-1], a.reshape(3, 100_000).T):
            with np.errstate(all="ignore"):
                assert_same(npc.sum(npc.asarray(view)), np.sum(view), "sum", 0, f"{dtype} {view.strides}")
    finally:
        npc.set_num_threads(old)


@pytest.mark.parametrize("src,od", [("float32", "float64"), ("float16", "float32"), ("float16", "float64"),
                                    ("int8", "float16"), ("int64", "float32"), ("complex64", "complex128")])
@pytest.mark.parametrize("name", ["sum", "prod", "mean"])
def test_out_wider_dtype_sets_the_loop(src, od, name):
    """With out= and no dtype=, NumPy reduces in out's dtype when it is the promotion of the
    input's and out's (Note [reduce dtype from out])."""
    rng = np.random.default_rng(5)
    v = rng.standard_normal((7, 3000)) * 100
    if src.startswith("complex"):
        v = v + 1j * rng.standard_normal((7, 3000))
    if name == "prod":
        v = 1 + v / 1e4
    a = v.astype(src)
    for view in (a, a[::-1, ::2]):
        for axis in (None, 0, 1):
            shape = np.sum(view, axis=axis).shape
            o, on = np.empty(shape, od), npc.empty(shape, dtype=od)
            with np.errstate(all="ignore"):
                e = getattr(np, name)(view, axis=axis, out=o)
                g = getattr(npc, name)(npc.asarray(view), axis=axis, out=on)
            assert_same(g, e, name, 0, f"{name} {src}->{od} axis={axis}")
