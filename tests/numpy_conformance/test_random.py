"""npc.random against numpy.random: the same seeds give the very same streams (exact
equality), for Generator (every bit generator) and the legacy RandomState, with native
and NumPy-served calls interleaved on one generator."""
import pickle

import numpy as np
import pytest

import npc

# Generator/RandomState tests compare native streams with NumPy-run ones on purpose.
pytestmark = pytest.mark.allow_fallback

N = 10_000
SEEDS = [0, 12345, 2**63 + 11]
BITGENS = ["PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]


def pair(seed, bitgen="PCG64"):
    return (npc.random.Generator(getattr(npc.random, bitgen)(seed)),
            np.random.Generator(getattr(np.random, bitgen)(seed)))


def state_eq(a, b):
    """Bit generator states (dicts holding ints and arrays) are equal."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(state_eq(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def same(a, b):
    """Exact equality of values, dtype and shape; scalars of the same type."""
    if isinstance(b, np.ndarray):
        assert type(a) is npc.ndarray
        a = np.asarray(a)
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_array_equal(a, b, strict=True)
    else:
        assert type(a) is type(b), (type(a), type(b))
        assert a == b or (a != a and b != b)


GEN_CALLS = [
    ("random", (N,), {}), ("random", (N,), {"dtype": np.float32}), ("random", ((100, 100),), {}),
    ("standard_normal", (N,), {}), ("standard_normal", (N,), {"dtype": np.float32}),
    ("normal", (1.5, 3.0, N), {}), ("uniform", (-2.0, 5.0, N), {}), ("exponential", (2.5, N), {}),
    ("standard_exponential", (N,), {}), ("standard_exponential", (N,), {"dtype": "float32"}),
    ("standard_exponential", (N,), {"method": "inv"}),
    ("standard_exponential", (N,), {"method": "inv", "dtype": np.float32}),
    ("integers", (0, 10, N), {}), ("integers", (-5, 2**40, N), {}), ("integers", (7,), {"size": N}),
    ("integers", (0, 2**64 - 1), {"size": N, "dtype": np.uint64, "endpoint": True}),
    ("integers", (-2**63, 2**63 - 1), {"size": N, "endpoint": True}),
    ("choice", (1000, N), {}), ("permutation", (N,), {}), ("bytes", (N,), {}),
    ("random", (), {}), ("standard_normal", (), {}), ("normal", (), {}), ("uniform", (), {}),
    ("exponential", (), {}), ("integers", (5,), {}), ("choice", (5,), {}),
    ("integers", (0, 1), {"size": N}), ("integers", (3, 3), {"size": N, "endpoint": True}),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("meth,args,kw", GEN_CALLS, ids=[f"{c[0]}{i}" for i, c in enumerate(GEN_CALLS)])
def test_generator_streams(seed, meth, args, kw):
    g, n = pair(seed)
    # Twice: the second call checks that the states stayed in step.
    for _ in range(2):
        same(getattr(g, meth)(*args, **kw), getattr(n, meth)(*args, **kw))
    assert state_eq(g.bit_generator.state, n.bit_generator.state)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("endpoint", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_generator_integers_dtypes(dtype, endpoint, seed):
    g, n = pair(seed)
    info = np.iinfo(dtype) if dtype != "bool" else None
    bounds = [(0, 1 if endpoint else 2)] if dtype == "bool" else [(0, 3), (int(info.min), int(info.max)), (1, 100)]
    for lo, hi in bounds:
        same(g.integers(lo, hi, N, dtype=dtype, endpoint=endpoint), n.integers(lo, hi, N, dtype=dtype,
                                                                                 endpoint=endpoint))
        same(g.integers(lo, hi, dtype=dtype, endpoint=endpoint), n.integers(lo, hi, dtype=dtype,
                                                                             endpoint=endpoint))


@pytest.mark.parametrize("bitgen", BITGENS)
def test_every_bit_generator(bitgen):
    g, n = pair(2024, bitgen)
    for meth, args, kw in GEN_CALLS[:18]:
        same(getattr(g, meth)(*args, **kw), getattr(n, meth)(*args, **kw))
    assert state_eq(g.bit_generator.state, n.bit_generator.state)


@pytest.mark.parametrize("seed", SEEDS)
def test_interleaved_native_and_fallback(seed):
    g, n = pair(seed)
    steps = [
        lambda r: r.random(7), lambda r: r.gamma(2.0, size=11), lambda r: r.standard_normal(5),
        lambda r: r.poisson(3.0, 13), lambda r: r.integers(0, 100, 9), lambda r: r.beta(1.0, 2.0, 3),
        lambda r: r.normal(np.arange(4.0), 1.0), lambda r: r.uniform(0, [1.0, 2.0]), lambda r: r.binomial(10, 0.3, 6),
        lambda r: r.choice(10, 5, replace=False), lambda r: r.choice(5, 4, p=[0.1, 0.2, 0.3, 0.2, 0.2]),
        lambda r: r.exponential(1.0, N), lambda r: r.standard_gamma(0.5, N), lambda r: r.random(),
    ]
    for step in steps * 2:
        a, b = step(g), step(n)
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(np.asarray(a), b, strict=True)
        else:
            assert a == b
    assert state_eq(g.bit_generator.state, n.bit_generator.state)


def test_shuffle_and_permutation_arrays():
    g, n = pair(5)
    x = np.arange(60.0).reshape(12, 5)
    X = npc.asarray(x.copy())
    g.shuffle(X)
    n.shuffle(x)
    same(X, x)
    X2 = npc.asarray(x.copy())
    g.shuffle(X2, axis=1)
    n.shuffle(x, axis=1)
    same(X2, x)
    v = np.arange(N, dtype=np.int32)
    same(g.permutation(npc.asarray(v)), n.permutation(v))
    s = np.arange(20.0)[::-2]
    S = npc.asarray(np.arange(20.0))[::-2]
    g.shuffle(S)
    n.shuffle(s)
    same(S, s)
    same(g.choice(npc.asarray(v), 50), n.choice(v, 50))
    assert state_eq(g.bit_generator.state, n.bit_generator.state)


def test_state_get_set_and_spawn():
    g = npc.random.default_rng(7)
    st = g.bit_generator.state
    a = g.standard_normal(100)
    g.bit_generator.state = st
    same(g.standard_normal(100), np.asarray(a))
    n = np.random.default_rng(7)
    n.bit_generator.state = st
    same(npc.random.default_rng(np.random.PCG64(7)).random(10), np.random.default_rng(7).random(10))
    assert isinstance(g, np.random.Generator)
    same(g.random(5), n.standard_normal(100) is not None and n.random(5))
    h = pickle.loads(pickle.dumps(g))
    assert state_eq(h.bit_generator.state, g.bit_generator.state)


def test_generator_native_not_fallback():
    g = npc.random.default_rng(1)
    npc.reset_fallback_stats()
    g.random(10), g.integers(0, 5, 10), g.standard_normal(10), g.normal(0, 1, 10), g.uniform(0, 1, 10)
    g.exponential(1.0, 10), g.standard_exponential(10), g.choice(5, 3), g.permutation(5), g.bytes(3)
    assert npc.fallback_stats() == {}


# ---------------------------------------------------------------- legacy RandomState
RS_CALLS = [
    ("rand", (N,), {}), ("rand", (10, 20), {}), ("rand", (), {}), ("randn", (N,), {}), ("randn", (3,), {}),
    ("randn", (), {}), ("standard_normal", (N,), {}), ("normal", (2.0, 0.5, N), {}), ("normal", (), {}),
    ("uniform", (-1.0, 3.0, N), {}), ("uniform", (), {}), ("random_sample", (N,), {}), ("random", (N,), {}),
    ("random_sample", (), {}), ("randint", (0, 10, N), {}), ("randint", (5,), {}), ("randint", (-3, 2**40, N), {}),
    ("randint", (0, 256), {"size": N, "dtype": np.uint8}), ("randint", (0, 2), {"size": N, "dtype": bool}),
    ("randint", (-100, 100), {"size": N, "dtype": np.int16}),
    ("randint", (0, 2**32), {"size": N, "dtype": np.uint32}), ("choice", (100, N), {}),
    ("permutation", (N,), {}),
]


@pytest.mark.parametrize("seed", [0, 1, 2**32 - 1])
@pytest.mark.parametrize("meth,args,kw", RS_CALLS, ids=[f"{c[0]}{i}" for i, c in enumerate(RS_CALLS)])
def test_randomstate_streams(seed, meth, args, kw):
    r, s = npc.random.RandomState(seed), np.random.RandomState(seed)
    for _ in range(2):
        same(getattr(r, meth)(*args, **kw), getattr(s, meth)(*args, **kw))
    a, b = r.get_state(), s.get_state()
    assert a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]


@pytest.mark.parametrize("seed", [0, 99])
def test_randomstate_interleaved_gauss_cache(seed):
    """An odd number of normals leaves a cached value: fallback methods that draw normals
    (NumPy's code) and native ones must share it."""
    r, s = npc.random.RandomState(seed), np.random.RandomState(seed)
    steps = [
        lambda x: x.randn(3), lambda x: x.standard_t(5.0, 3), lambda x: x.randn(), lambda x: x.lognormal(0, 1, 5),
        lambda x: x.normal(1.0, 2.0, 7), lambda x: x.gamma(1.5, size=5), lambda x: x.rand(3),
        lambda x: x.randint(0, 7, 5), lambda x: x.poisson(4.0, 4), lambda x: x.standard_normal(1),
        lambda x: x.normal([0.0, 1.0], 1.0), lambda x: x.choice(7, 3, replace=False),
    ]
    for step in steps * 3:
        a, b = step(r), step(s)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), strict=True)
    st_a, st_b = r.get_state(), s.get_state()
    assert np.array_equal(st_a[1], st_b[1]) and st_a[2:] == st_b[2:]
    r.set_state(st_b)
    same(r.randn(5), s.randn(5))


def test_randomstate_shuffle():
    r, s = npc.random.RandomState(3), np.random.RandomState(3)
    x = np.arange(30.0).reshape(10, 3)
    X = npc.asarray(x.copy())
    r.shuffle(X)
    s.shuffle(x)
    same(X, x)
    v = np.arange(50)
    same(r.permutation(npc.asarray(v)), s.permutation(v))


def test_module_level_functions_share_numpy_global_state():
    npc.random.seed(123)
    a = npc.random.rand(N)
    b = npc.random.randn(5)
    c = npc.random.randint(0, 10, 20)
    np.random.seed(123)
    same(a, np.random.rand(N))
    same(b, np.random.randn(5))
    same(c, np.random.randint(0, 10, 20))
    npc.random.seed(9)
    x = npc.random.random_sample(3)
    y = np.random.random_sample(3)  # the same global stream continues
    np.random.seed(9)
    same(x, np.random.random_sample(3))
    same(npc.asarray(y), np.random.random_sample(3))


def test_errors_match_numpy():
    g, n = pair(0)
    for call in (lambda r: r.integers(5, 2), lambda r: r.integers(0, 300, dtype=np.uint8),
                 lambda r: r.normal(0, -1.0), lambda r: r.choice(0, 3), lambda r: r.integers(0, 3, size=-1)):
        with pytest.raises(Exception) as e_np:
            call(n)
        with pytest.raises(type(e_np.value)) as e_npc:
            call(g)
        assert str(e_npc.value) == str(e_np.value)
    assert state_eq(g.bit_generator.state, n.bit_generator.state)


@pytest.mark.parametrize("name, args", [("uniform", (5, 1, 3)), ("uniform", (1.0, -1.0)), ("normal", (0, -1.0, 3)),
                                        ("exponential", (-2.0,)), ("exponential", (-1.0, 4)),
                                        ("integers", (5, 5)), ("integers", (5, 2, 3))])
def test_generator_parameter_errors(name, args):
    """Invalid scalar parameters raise NumPy's exception and message, and draw nothing."""
    g, n = pair(3)
    with pytest.raises(Exception) as e_np:
        getattr(n, name)(*args)
    with pytest.raises(type(e_np.value)) as e_npc:
        getattr(g, name)(*args)
    assert str(e_npc.value) == str(e_np.value)
    assert state_eq(g.bit_generator.state, n.bit_generator.state)
    same(g.random(3), n.random(3))


@pytest.mark.parametrize("name, args", [("uniform", (5, 1, 3)), ("normal", (0, -1.0, 3)), ("randint", (5, 5))])
def test_randomstate_parameter_errors_and_reversed_uniform(name, args):
    """RandomState keeps its legacy rules: uniform accepts high < low; the others raise."""
    r, n = npc.random.RandomState(4), np.random.RandomState(4)
    try:
        want = getattr(n, name)(*args)
    except Exception as e_np:
        with pytest.raises(type(e_np)) as e_npc:
            getattr(r, name)(*args)
        assert str(e_npc.value) == str(e_np)
    else:
        same(getattr(r, name)(*args), want)
    same(r.random_sample(3), n.random_sample(3))


@pytest.mark.parametrize("make", [lambda: (npc.random.default_rng(1), np.random.default_rng(1)),
                                  lambda: (npc.random.RandomState(3), np.random.RandomState(3))])
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_pickle_and_deepcopy_keep_npc_classes(make, how):
    """Pickled and deep-copied generators are npc's classes on the same state: their draws
    are npc arrays equal to NumPy's (the RandomState Gaussian cache included)."""
    import copy
    g, n = make()
    g.standard_normal(), n.standard_normal()  # a cached Gaussian for RandomState
    h = pickle.loads(pickle.dumps(g)) if how == "pickle" else copy.deepcopy(g)
    assert type(h) is type(g)
    same(h.standard_normal(5), n.standard_normal(5))
    same(h.random(4), n.random(4))
    m = make()[1]  # the original is untouched by the copy: its stream goes on from the same point
    m.standard_normal()
    same(g.standard_normal(5), m.standard_normal(5))


@pytest.mark.parametrize("ctor", [lambda: npc.random.default_rng(1), lambda: npc.random.RandomState(1)])
@pytest.mark.parametrize("a", [lambda m: m.array(5), lambda m: m.array(5, dtype=m.uint8), lambda m: m.int64(5)])
def test_choice_zero_d_integer_population(ctor, a):
    """choice(0-d integer array) draws from arange(a) and returns a Python int, as NumPy."""
    nctor = {npc.random.Generator: lambda: np.random.default_rng(1)}.get(type(ctor()), lambda: np.random.RandomState(1))
    g, n = ctor(), nctor()
    same(g.choice(a(npc)), n.choice(a(np)))
    same(g.choice(a(npc), 3), n.choice(a(np), 3))
