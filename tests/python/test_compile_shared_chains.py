"""Values read by several kernels (Note [shared chains] in src/fusion/lower_group.cpp): a Python
float carried across loop iterations compiles the same kernels at every trip count, and a
costly array read by several reductions is computed once; values, dtypes and warnings stay
NumPy's."""
import warnings

import numpy as np
import pytest

import npc
from npc import _fusion


@pytest.fixture(autouse=True)
def _compiled_always():
    old = npc.config.eager_if_faster
    npc.config.eager_if_faster = False
    yield
    npc.config.eager_if_faster = old


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def test_a_scalar_recurrence_compiles_the_same_kernels_at_every_trip_count():
    # Before, iteration k's kernels inlined all k iterations of alpha and beta: 300 iterations
    # gave a translation unit the C++ compiler did not finish in 60 s.
    counts = []
    for n in (30, 90, 91):
        r = np.random.default_rng(n).random(n) * 0.1
        _fusion.reset_stats()
        got = npc.compile(durbin, backend="fused")(r)
        want = durbin(r)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
        counts.append(_fusion.stats()["kernels"])
    assert counts[0] == counts[1] == counts[2] <= 16


def _float_chain(x, n):
    s = 0.5
    out = np.empty(n)
    for i in range(n):
        s = s * 0.75 + x[i] / (1.0 + s * s)
        out[i] = s - x[i]
    return out, s


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_python_float_state_across_iterations(backend):
    for n in (20, 60):
        x = np.random.default_rng(n).random(n)
        want_out, want_s = _float_chain(x, n)
        got_out, got_s = npc.compile(_float_chain, backend=backend)(x, n)
        np.testing.assert_array_equal(got_out, want_out)
        assert type(got_s) is type(want_s) and got_s == want_s


def _costly(a):
    b = np.clip(a, 0.2, 0.8) * 3 + a ** 2
    return np.where(b > 1.5, np.sqrt(b), np.log1p(b))


def _stats(a):
    c = _costly(a)
    return c.sum(axis=1), c.mean(), c.std(axis=0), (c > 1).sum(), c[::2, 1:] * 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 48), (1, 7), (0, 3)])
def test_a_costly_value_read_by_several_reductions(dtype, shape):
    a = np.random.default_rng(0).random(shape).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the empty case's mean
        want = _stats(a)
        cf = npc.compile(_stats, backend="fused")
        for _ in range(2):
            got = cf(a)
            for g, w in zip(got, want):
                assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
                np.testing.assert_allclose(g, w, rtol=2e-6 if dtype == np.float32 else 1e-12)


def test_warnings_of_a_shared_value_are_numpys():
    a = np.array([[-2.0, 0.5], [0.25, -3.0]])

    def f(a):
        c = np.log1p(a) * 2 + np.sqrt(a)
        return np.nansum(c), np.isnan(c).sum(axis=0), c.max()

    with warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        want = f(a)
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got = npc.compile(f, backend="fused")(a)
    assert sorted(str(w.message) for w in got_w) == sorted(str(w.message) for w in want_w)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_with_the_bound_first_keeps_numpys_nan_and_zero_rules(dtype):
    a = np.array([np.nan, -0.0, 0.0, 0.1, 0.9, -np.inf, np.inf, 0.5] * 9, dtype=dtype)

    def f(a):
        return (np.clip(a, 0.2, 0.8), np.minimum(0.0, np.maximum(-0.0, a)), np.maximum(np.nan, a),
                np.minimum(a, np.float32(0.3)), np.fmax(0.25, a), np.fmin(a, 0.75))

    want = f(a)
    got = npc.compile(f, backend="fused")(a)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))  # -0.0 and NaN bits too
