"""NumPy random generators inside compiled functions: every method of a Generator or
RandomState (made in the function, or passed in) draws as NumPy's on every call; numpy.random's
legacy functions too; a generator the function reads as a global or closure value makes the
function run eagerly (Note [random generators the function reads] in
python/npc/compiler/_api.py); numpy.random's own Cython code gets NumPy's functions while the
trace patches them (Note [numpy.random's own numpy] in python/npc/compiler/_capture.py)."""
import numpy as np
import pytest

import npc
from _compile_diff import BACKENDS, check


def _made_inside(x):
    rng = np.random.default_rng(3)
    return (rng.gumbel(size=3) + x[:3], rng.chisquare(3, size=2), rng.laplace(), rng.multinomial(5, [0.5, 0.5]),
            rng.permuted(x), rng.normal(x, 1.0), rng.dirichlet([1.0, 2.0]))


def _legacy(x):
    np.random.seed(4)
    return np.random.chisquare(3, size=3) + x[:3], np.random.gumbel(), np.random.logistic(size=2)


def _traced_parameters(x):
    # Note [draws of traced parameters]: after a plain draw, in the program's order.
    rng = np.random.default_rng(5)
    a = rng.random(2)
    b = rng.normal(x, 1.0)
    c = [rng.normal(x[i], 1.0, size=2) for i in range(2)]
    np.random.seed(6)
    d = np.random.rand(2)
    e = np.random.chisquare(x.sum() + 1, size=2)
    return a, b, c, d, e, rng.random(), np.random.rand()


def _raising_draw(x):
    rng = np.random.default_rng(7)
    a = rng.random(2)
    try:
        rng.exponential(x - 3)
    except ValueError:
        pass
    return a, rng.random(2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [_made_inside, _legacy, _traced_parameters, _raising_draw])
def test_methods_of_generators_made_inside(fn, backend):
    x = np.arange(5.0)
    check(fn, (x,), (x + 1,), (x * 2,), backend=backend)


def _draws(x, g):
    if isinstance(g, np.random.RandomState):
        return g.random_sample(3) + x, g.randint(0, 10, 4), g.randn(), g.chisquare(2.0)
    return g.gumbel(size=3) + x, g.integers(0, 10, 4), g.permuted(x), g.standard_t(3.0)


@pytest.mark.parametrize("make", [lambda: np.random.default_rng(5), lambda: np.random.RandomState(6)])
def test_generators_passed_in_move_on_every_call(make):
    cf = npc.compile(_draws)
    mine, theirs = make(), make()
    x = np.arange(3.0)
    for _ in range(4):
        for got, want in zip(cf(x, mine), _draws(x, theirs), strict=True):
            np.testing.assert_array_equal(got, want)


_G = np.random.default_rng(7)


def _reads_a_global(x):
    return _G.random(3) + x, _G.random()


def _helper_draws(x):
    return _G.standard_normal(3) * x


def _calls_a_helper(x):
    return _helper_draws(x) + 1


def _reads_a_closure():
    g = np.random.RandomState(8)

    def f(x):
        return g.random_sample(3) * x, g.randn()
    return f


@pytest.mark.parametrize("which", ["global", "closure", "helper"])
def test_generators_read_as_free_values_move_on_every_call(which):
    global _G
    x = np.arange(3.0)
    if which in ("global", "helper"):
        _G = np.random.default_rng(7)
        fn = _reads_a_global if which == "global" else _calls_a_helper
        want = [fn(x) for _ in range(3)]
        _G = np.random.default_rng(7)
    else:
        want = [(lambda f: [f(x) for _ in range(3)])(_reads_a_closure())][0]
        fn = _reads_a_closure()
    cf = npc.compile(fn)
    got = [cf(x) for _ in range(3)]
    as_tuple = lambda r: r if isinstance(r, tuple) else (r,)  # noqa: E731
    for g, w in zip(got, want, strict=True):
        for a, b in zip(as_tuple(g), as_tuple(w), strict=True):
            np.testing.assert_array_equal(a, b)
