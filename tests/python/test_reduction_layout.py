"""The layout of reduction and scan results of non-C-ordered arrays (F-ordered, transposed,
reversed, strided), eager and compiled: NumPy allocates them in its iterator's axis order
over the input (Note [reduction layout] in src/ops/reduce_plan.cpp), so a sum over axis 1 of an
F-ordered array is F-ordered. Values, dtypes, shapes and strides are NumPy's."""
import numpy as np
import pytest

import npc
from npc import compiler

BACKENDS = ("eager", "fused")


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-reduction-layout")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def layouts():
    """(name, array) pairs of several memory orders of 3-d and 4-d float64 arrays."""
    a = np.arange(24.0).reshape(2, 3, 4) % 7 - 2.5
    b = np.arange(120.0).reshape(2, 3, 4, 5) % 11 - 4.25
    big = np.arange(2 * 6 * 8.0).reshape(2, 6, 8)
    return [
        ("F", np.asfortranarray(a)),
        ("T102", a.transpose(1, 0, 2)),
        ("T210", np.ascontiguousarray(a.transpose(2, 1, 0)).transpose(2, 1, 0)),
        ("reversed", a[:, ::-1, ::-1]),
        ("strided", big[:, ::2, ::2]),
        ("F4", np.asfortranarray(b)),
        ("T3120", np.ascontiguousarray(b.transpose(3, 1, 2, 0)).transpose(3, 1, 2, 0)),
        ("size1", np.asfortranarray(np.arange(8.0).reshape(2, 1, 4))),
    ]


LAYOUTS = layouts()
IDS = [n for n, _ in LAYOUTS]

REDUCTIONS = [
    ("sum1", lambda m, x: m.sum(x, axis=1)),
    ("sum1k", lambda m, x: m.sum(x, axis=1, keepdims=True)),
    ("sum02k", lambda m, x: m.sum(x, axis=(0, 2), keepdims=True)),
    ("sum0", lambda m, x: m.sum(x, axis=0)),
    ("sum_last", lambda m, x: m.sum(x, axis=-1)),
    ("prod0", lambda m, x: m.prod(x, axis=0)),
    ("max1", lambda m, x: m.max(x, axis=1)),
    ("min2k", lambda m, x: m.min(x, axis=2, keepdims=True)),
    ("mean1", lambda m, x: m.mean(x, axis=1)),
    ("mean1k", lambda m, x: m.mean(x, axis=1, keepdims=True)),
    ("std2", lambda m, x: m.std(x, axis=2)),
    ("var1k", lambda m, x: m.var(x, axis=1, keepdims=True)),
    ("any1", lambda m, x: m.any(x > 0, axis=1)),
    ("all0", lambda m, x: m.all(x > -2, axis=0)),
    ("sum_f32", lambda m, x: m.sum(x, axis=1, dtype=m.float32)),
    ("add_reduce", lambda m, x: m.add.reduce(x, axis=1)),
    ("cumsum1", lambda m, x: m.cumsum(x, axis=1)),
    ("cumsum0", lambda m, x: m.cumsum(x, axis=0)),
    ("cumprod2", lambda m, x: m.cumprod(x, axis=2)),
    ("max_accumulate", lambda m, x: m.maximum.accumulate(x, axis=1)),
    ("add_accumulate", lambda m, x: m.add.accumulate(x, axis=-1)),
    ("sum1_plus", lambda m, x: m.sum(x, axis=1) + 1),
]
RIDS = [n for n, _ in REDUCTIONS]


def assert_same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    assert got.strides == want.strides, (got.strides, want.strides)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)


@pytest.mark.parametrize("red", [r for _, r in REDUCTIONS], ids=RIDS)
@pytest.mark.parametrize("x", [x for _, x in LAYOUTS], ids=IDS)
def test_eager_layout(x, red):
    assert_same(red(npc, npc.asarray(x)), red(np, x))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("red", [r for _, r in REDUCTIONS], ids=RIDS)
@pytest.mark.parametrize("x", [x for _, x in LAYOUTS[:3] + LAYOUTS[5:6]], ids=IDS[:3] + IDS[5:6])
def test_compiled_layout(x, red, backend):
    def f(a):
        return red(np, a)
    cf = npc.compile(f, backend=backend)
    want = f(x)
    assert_same(cf(x), want)
    assert_same(cf(x), want)  # the replay


def test_where_mask_takes_part_in_the_order():
    a = np.asfortranarray(np.arange(24.0).reshape(2, 3, 4))
    for m in (np.ones((2, 3, 4), bool), np.asfortranarray(np.ones((2, 3, 4), bool)), np.ones((3, 4), bool)):
        want = np.add.reduce(a, axis=1, where=m)
        assert_same(npc.add.reduce(npc.asarray(a), axis=1, where=npc.asarray(m)), want)


def test_random_views_match_numpy():
    rng = np.random.default_rng(5)
    for _ in range(300):
        nd = int(rng.integers(2, 5))
        shape = [int(s) for s in rng.integers(1, 4, nd)]
        base = np.arange(float(np.prod([2 * s for s in shape]))).reshape([2 * s for s in shape]) % 13
        steps = [int(rng.choice([1, 2, -1, -2])) for _ in shape]
        x = base[tuple(slice(None, None, s) for s in steps)][tuple(slice(0, s) for s in shape)]
        x = x.transpose(rng.permutation(nd))
        if rng.random() < 0.3:
            x = np.asfortranarray(x)
        k = int(rng.integers(1, nd + 1))
        axis = tuple(sorted(int(v) for v in rng.choice(nd, k, replace=False)))
        kd = bool(rng.random() < 0.5)
        assert_same(npc.asarray(x).sum(axis=axis, keepdims=kd), x.sum(axis=axis, keepdims=kd))
        ax = int(rng.integers(0, nd))
        assert_same(npc.cumsum(npc.asarray(x), axis=ax), np.cumsum(x, axis=ax))
