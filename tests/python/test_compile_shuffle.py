"""Shuffles of traced arrays (Note [shuffles of traced arrays] in
python/npc/compiler/_capture.py): Generator.shuffle and numpy.random.shuffle inside compiled
functions give NumPy's order, NumPy's writes into the arguments, no warning, the generator's
state as NumPy leaves it, on the tracing call and on replays; NumPy's errors."""
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


def _rows(V):
    rng = np.random.default_rng(7)
    rng.shuffle(V)
    return V * 2


def _axes(V):
    rng = np.random.default_rng(3)
    rng.shuffle(V, axis=1)
    rng.shuffle(V, axis=-1)
    return V + rng.random()


def _vector(v):
    rng = np.random.default_rng(11)
    rng.shuffle(v)
    return v.sum() * v


def _global(V):
    np.random.seed(5)
    np.random.shuffle(V)
    return V - 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [_rows, _axes, _global])
def test_shuffle_matrix(f, backend):
    V = np.arange(24.0).reshape(6, 4)
    check(f, (V,), (V * 3,), (V[::-1].copy(),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_shuffle_vector(backend):
    v = np.arange(9, dtype=np.int64)
    check(_vector, (v,), (v * 2,), backend=backend)


def _passed(V, rng):
    rng.shuffle(V)
    return V * 1.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_generator_passed_in_moves_on(backend):
    compiler.reset()
    cf = npc.compile(_passed, backend=backend)
    mine, theirs = np.random.default_rng(1), np.random.default_rng(1)
    V = np.arange(20.0).reshape(10, 2)
    for _ in range(3):
        a, b = V.copy(), V.copy()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = cf(a, mine)
        np.testing.assert_array_equal(got, _passed(b, theirs))
        np.testing.assert_array_equal(a, b)
        assert not w
        assert mine.random() == theirs.random()


def _zero_d(x):
    np.random.default_rng(0).shuffle(x)
    return x


def _bad_axis(V):
    np.random.default_rng(0).shuffle(V, axis=2)
    return V


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors_as_numpy(backend):
    check(_zero_d, (np.array(1.0),), backend=backend)
    check(_bad_axis, (np.zeros((2, 3)),), backend=backend)


def test_no_npc_eager_mode_for_a_shuffling_function():
    # With the compiled-or-eager choice on, eager calls are probed; the "npc" eager mode
    # (npc views of the NumPy arguments) would hand NumPy's shuffle npc arrays.
    V = np.arange(12.0).reshape(6, 2)
    want = _rows(V.copy())
    with npc.config.patch(eager_if_faster=True):
        compiler.reset()
        cf = npc.compile(_rows)
        for _ in range(30):
            W = V.copy()
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                got = cf(W)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(W, want / 2)
            assert not w
        compiler.reset()
