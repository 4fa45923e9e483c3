"""Every float function of the op table computes the same bits in fused kernels as in eager npc
(Note [one rule per float loop] in src/fusion/emit_cpp.cpp).

The rows come from the op table (one-input ufunc rows with a float loop that the C++ emitter
renders), not from a hand list: a row added later is checked too. Each is compiled alone on
contiguous, strided and reversed inputs, inside an expression, and as the input of a
reduction (where the vector-math blocks do not apply), for float32 and float64; the fused
result must equal eager npc's bit for bit (NaN payloads aside: NaN is compared as NaN).
"""
import warnings

import numpy as np
import pytest

import npc
from npc import _core

KIND_OF = {"?": "b", "e": "f", "f": "f", "d": "f", "F": "c", "D": "c"}


def _rows():
    out = []
    for r in _core.op_table():
        if r.kind != 0 or r.nin != 1 or r.nout != 1 or not hasattr(np, r.name):
            continue
        status, _, kinds, _ = r.emit["cpp"]
        sigs = r.loops.split()
        if status != "pattern" or "f" not in kinds or not any(s.startswith("f->f") or s.startswith("d->d") for s in sigs):
            continue
        out.append(r.name)
    return out


OPS = _rows()


def test_the_table_has_the_transcendentals():
    assert {"exp", "log", "sin", "tanh", "arccos", "sqrt", "log1p", "cbrt"} <= set(OPS)


def inputs(dtype, n=2500, seed=0):
    """Values across every op's domain (tiny to large, both signs, the unit interval) and the
    special values."""
    rng = np.random.default_rng(seed)
    hi = 30 if dtype == np.float32 else 300
    big = 10.0 ** rng.uniform(-hi, 3, n) * rng.choice([-1.0, 1.0], n)
    x = np.where(rng.random(n) < 0.4, big, np.where(rng.random(n) < 0.5, rng.uniform(-5, 5, n), rng.uniform(-1, 1, n)))
    x[:12] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 88.5, -103.5, 700.0, 1e-40, -2.0]
    with np.errstate(over="ignore"):
        return x.astype(dtype)


SHAPES = {
    "contiguous": lambda f: (lambda a: f(a)),
    "strided": lambda f: (lambda a: f(a[::3])),
    "reversed": lambda f: (lambda a: f(a[::-1])),
    "in_expression": lambda f: (lambda a: f(a * 0.5) + 1),
    "reduced": lambda f: (lambda a: np.nanmax(f(a.reshape(50, -1)), axis=1)),
}


def same_bits(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    nan = np.isnan(x)
    return bool(np.array_equal(nan, np.isnan(y)) and x[~nan].tobytes() == y[~nan].tobytes())


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f4", "f8"])
def test_fused_equals_eager_bits(dtype, shape, tmp_path):
    x = inputs(dtype)
    bad = []
    # Each case compiles one function per op: past config.accumulated_recompile_limit a new
    # function would run its Python (NumPy) instead of a kernel, so the count starts afresh.
    npc.compiler.reset()
    with np.errstate(all="ignore"), warnings.catch_warnings(), npc.config.patch(cache_dir=str(tmp_path)):
        warnings.simplefilter("ignore")
        for op in OPS:
            fn = SHAPES[shape](getattr(np, op))
            before = npc.compiler.stats()["eager_runs"]
            fused = npc.compile(fn, backend="fused")(x)
            assert npc.compiler.stats()["eager_runs"] == before, f"{op} ran eagerly, not compiled"
            eager = fn(npc.asarray(x))
            if not same_bits(fused, eager):
                f, e = np.asarray(fused), np.asarray(eager)
                diff = np.flatnonzero(~((f == e) | (np.isnan(f) & np.isnan(e))))
                bad.append(f"{op}: {diff.size} elements, first {f.ravel()[diff[:1]]} vs {e.ravel()[diff[:1]]}")
    assert not bad, bad
