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


def _legacy(x):
    np.random.shuffle(x)
    return x + 0


def _untraced(V, rng):
    idx = np.array([0, 1, 2, 3])
    rng.shuffle(idx)  # a NumPy array made inside: shuffled on every call (a graph break)
    return V[idx]


def _unused(V, rng):
    x = V * 1
    rng.shuffle(x)  # never read: the draw still moves the generator
    rng.permutation(5)
    return rng.integers(0, 100, 3)


def _empty(V):
    np.random.shuffle(V)
    return V


def _late_shuffle(V, rng):
    if float(V[0, 0]) > 100:
        rng.shuffle(V)
    return V * 2


@pytest.mark.parametrize("eager_if_faster", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_draws_on_every_call(backend, eager_if_faster):
    # Each call draws again from the state it finds: the global state (seeded before each
    # call) or a generator passed in; draws whose values nothing reads still move it.
    with npc.config.patch(eager_if_faster=eager_if_faster):
        for f, make in ((_legacy, lambda: (np.arange(8),)), (_empty, lambda: (np.zeros((4, 0)),)),
                        (_untraced, lambda: (np.arange(4.0) * 10, "rng")), (_unused, lambda: (np.arange(5.0), "rng")),
                        (_late_shuffle, None)):
            compiler.reset()
            cf = npc.compile(f, backend=backend)
            mine, theirs = np.random.default_rng(4), np.random.default_rng(4)
            for call in range(6):
                if make is None:
                    base = np.arange(8).reshape(4, 2) + (1000 if call >= 3 else 0)
                    args = [base, "rng"]
                else:
                    args = list(make())
                a = [mine if isinstance(x, str) else np.copy(x) for x in args]
                b = [theirs if isinstance(x, str) else np.copy(x) for x in args]
                np.random.seed(call)
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    got = cf(*a)
                after_got = np.random.random()
                np.random.seed(call)
                want = f(*b)
                after_want = np.random.random()
                np.testing.assert_array_equal(got, want)
                for x, y in zip(a, b):
                    if isinstance(y, np.ndarray):
                        np.testing.assert_array_equal(x, y)
                assert after_got == after_want and mine.random() == theirs.random()
                assert not w, [str(m.message) for m in w]
            compiler.reset()
