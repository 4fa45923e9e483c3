"""np.outer and np.kron are NumPy's `multiply` of reshaped operands: npc computes them the
same way, so their values, dtypes and floating-point errors ("overflow encountered in
multiply", FloatingPointError under errstate(all="raise")) are NumPy's, eagerly and
compiled (a differential finding: the dedicated outer loop reported no errors)."""
import warnings

import numpy as np
import pytest

import npc


def run(fn, mod, errstate=None):
    """(value, dtype, warnings) of fn(mod), or the exception's type and message."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            if errstate:
                with mod.errstate(**errstate):
                    r = fn(mod)
            else:
                r = fn(mod)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
    return np.asarray(r), type(r).__name__, [(m.category, str(m.message)) for m in w]


def same(a, b):
    """Equal outcomes: the same exception, or equal values (NaN == NaN, bit-equal for
    finite values), dtypes, result types and warnings."""
    if isinstance(a[0], str):
        assert a == b
        return
    assert not isinstance(b[0], str), b
    assert a[0].dtype == b[0].dtype and a[0].shape == b[0].shape
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1:] == b[1:]


def arr(mod, v, dt):
    return mod.asarray(np.array(v, dt))


CASES = {
    "outer f8": lambda M: M.outer(arr(M, [1e200, 1.0], "f8"), arr(M, [1e200, 2.0], "f8")),
    "outer f4": lambda M: M.outer(arr(M, [1e30, 1.0], "f4"), arr(M, [1e30, 2.0], "f4")),
    "outer f2": lambda M: M.outer(arr(M, [300, 1.0], "f2"), arr(M, [300, 2.0], "f2")),
    "outer c16": lambda M: M.outer(arr(M, [1e200 + 1j], "c16"), arr(M, [1e200 + 0j], "c16")),
    "outer c16 inf": lambda M: M.outer(arr(M, [np.inf + 1j, 1j], "c16"), arr(M, [np.nan + 0j, np.inf * 1j], "c16")),
    "outer inf*0": lambda M: M.outer(arr(M, [np.inf], "f8"), arr(M, [0.0], "f8")),
    "outer 2d": lambda M: M.outer(arr(M, [[1e200, 1.0], [3.0, -1e200]], "f8"), arr(M, [1e200, 2.0], "f8")),
    "outer out": lambda M: M.outer(arr(M, [1e200], "f8"), arr(M, [1e200], "f8"), out=M.zeros((1, 1))),
    "outer out f4": lambda M: M.outer(arr(M, [1e200, 1], "f8"), arr(M, [1.0], "f8"),
                                      out=M.zeros((2, 1), np.float32)),
    "outer mixed": lambda M: M.outer(arr(M, [1e30, 2], "f4"), arr(M, [1e30, 3], "f8")),
    "outer bool": lambda M: M.outer(arr(M, [True, False], "?"), arr(M, [True, True, False], "?")),
    "outer int wrap": lambda M: M.outer(arr(M, [100, -3], "i1"), arr(M, [3, 127], "i1")),
    "kron f8": lambda M: M.kron(arr(M, [1e200, 1.0], "f8"), arr(M, [1e200, 2.0], "f8")),
    "kron f4 2d": lambda M: M.kron(arr(M, [[1e30, 1.0], [2.0, 3.0]], "f4"), arr(M, [[1e30], [2.0]], "f4")),
    "kron f2": lambda M: M.kron(arr(M, [300, 1], "f2"), arr(M, [[300, 2]], "f2")),
    "kron c16": lambda M: M.kron(arr(M, [1e200 + 1j], "c16"), arr(M, [1e200 + 0j, 1j], "c16")),
    "kron inf*0": lambda M: M.kron(arr(M, [[np.inf]], "f8"), arr(M, [0.0, 1.0], "f8")),
    "kron 0-d": lambda M: M.kron(arr(M, 1e200, "f8"), arr(M, [1e200, 2.0], "f8")),
    "kron 0-d both": lambda M: M.kron(arr(M, 1e200, "f8"), arr(M, 1e200, "f8")),
    "kron b 0-d": lambda M: M.kron(arr(M, [[1e200, 2.0]], "f8"), arr(M, 3.0, "f8")),
    "kron 3d": lambda M: M.kron(arr(M, np.arange(8.0).reshape(2, 2, 2), "f8"), arr(M, [[1.0, -2.0]], "f8")),
    "kron strided": lambda M: M.kron(arr(M, np.arange(12.0).reshape(3, 4), "f8")[:, ::2].T,
                                     arr(M, [[1.0, 2.0], [3.0, 4.0]], "f8")[::-1]),
    "kron bool": lambda M: M.kron(arr(M, [[True, False]], "?"), arr(M, [True, True], "?")),
    "kron int": lambda M: M.kron(arr(M, [100, 3], "i1"), arr(M, [[3], [2]], "i2")),
    "kron empty": lambda M: M.kron(arr(M, np.zeros((0, 2)), "f8"), arr(M, [[1.0, 2.0]], "f8")),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("errstate", [None, {"all": "raise"}], ids=["warn", "raise"])
def test_outer_kron_eager_match_numpy(name, errstate):
    fn = CASES[name]
    same(run(fn, npc, errstate), run(fn, np, errstate))


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("op", ["outer", "kron"])
def test_outer_kron_compiled_warn_as_numpy(backend, op):
    def f(a, b):
        return getattr(np, op)(a, b)
    a = np.array([1e200, 1.0, np.inf])
    b = np.array([1e200, 0.0])
    want = run(lambda M: f(a, b), np)
    got = run(lambda M: npc.compile(f, backend=backend)(a, b), np)
    same(got, want)
