"""float16 reductions round where NumPy's loops round (Note [float16 reductions] in
src/fusion/lower_reduce.cpp): an outer-axis sum or product rounds to float16 after every
row (2048 + 1 + 1 stays 2048; 4e4 + 4e4 - 4e4 overflows to inf with "overflow encountered
in reduce"), a reduction over the last axis accumulates in float and rounds once. Checked
for every reduction kind of float16, along each axis, at widths around the lane blocks
(Note [lane blocks]), on both backends, against NumPy's values and warnings."""
import warnings

import numpy as np
import pytest

import npc

WIDTHS = [2, 63, 64, 65, 130]


@pytest.fixture(autouse=True)
def _fresh_compiler():
    """Each test compiles a few new functions: counters start anew per test, so this module's
    ~540 cases never reach config.accumulated_recompile_limit together."""
    npc.compiler.reset()
    yield


def outcome(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(*args)
    return np.asarray(r), [(m.category, str(m.message)) for m in w]


def check(fn, x, backend):
    want, want_w = outcome(fn, x)
    got, got_w = outcome(npc.compile(fn, backend=backend), x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert got_w == want_w


def data(rows, width, seed=0):
    """float16 values whose running sums lose bits at float16 precision: a large first row,
    then values of mixed magnitude."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, width)) * 3).astype(np.float16)
    x[0] = 2048
    return x


REDUCTIONS = {
    "sum": lambda x, ax: x.sum(axis=ax),
    "prod": lambda x, ax: (x / 8 + 1).prod(axis=ax),
    "mean": lambda x, ax: x.mean(axis=ax),
    "var": lambda x, ax: x.var(axis=ax),
    "std": lambda x, ax: x.std(axis=ax),
    "std ddof": lambda x, ax: np.std(x, axis=ax, ddof=1),
    "nansum": lambda x, ax: np.nansum(x, axis=ax),
    "nanmean": lambda x, ax: np.nanmean(x, axis=ax),
    "cumsum": lambda x, ax: np.cumsum(x, axis=ax),
    "cumprod": lambda x, ax: np.cumprod(x / 64 + 1, axis=ax),
    "softmax": lambda x, ax: np.exp(x / 512 - (x / 512).max(axis=ax, keepdims=True)) /
                             np.exp(x / 512 - (x / 512).max(axis=ax, keepdims=True)).sum(axis=ax, keepdims=True),
    "sum keepdims": lambda x, ax: x.sum(axis=ax, keepdims=True),
    "sum of product": lambda x, ax: (x * x / 64).sum(axis=ax),
}


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
def test_float16_reduction_matches_numpy(kind, width, axis, backend):
    red = REDUCTIONS[kind]
    x = data(40, width)
    if axis == 1:
        x = np.ascontiguousarray(x.T)
    check(lambda a: red(a, axis), x, backend)


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("width", WIDTHS)
def test_float16_outer_sum_rounds_every_row(width, backend):
    x = np.ones((3, width), np.float16)
    x[0] = 2048
    check(lambda a: a.sum(axis=0), x, backend)
    assert npc.compile(lambda a: a.sum(axis=0), backend=backend)(x)[0] == 2048


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("width", WIDTHS)
def test_float16_outer_sum_overflows_as_numpy(width, backend):
    x = np.array([[4e4] * width, [4e4] * width, [-4e4] * width], np.float16)
    check(lambda a: a.sum(axis=0), x, backend)
    check(lambda a: a.prod(axis=0), x / 100, backend)


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_float16_std_of_a_constant_column(backend):
    x = np.full((200, 3), 0.1, np.float16)
    check(lambda a: a.std(axis=0), x, backend)
    check(lambda a: a.var(axis=0), x, backend)
    check(lambda a: np.nanmean(a, axis=0), x, backend)


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("axes", [0, 1, 2, (0, 1), (0, 2), (1, 2), None, (0, 1, 2)])
def test_float16_sums_of_3d_arrays(axes, backend):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((30, 7, 9)) * 100).astype(np.float16)
    check(lambda a: a.sum(axis=axes), x, backend)
    check(lambda a: (a / 128).prod(axis=axes), x[:6], backend)
    check(lambda a: (a * 2).sum(axis=axes), x, backend)


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("shape,axis", [((40, 1, 65), 0), ((40, 65, 1), 1), ((1, 40, 65), 1), ((40, 65, 1), 0)])
def test_float16_sums_with_size_one_axes(shape, axis, backend):
    # NumPy's iteration drops axes of size 1: their place decides nothing.
    x = data(40, 65).reshape(shape)
    check(lambda a: a.sum(axis=axis), x, backend)
