"""Complex ordering comparisons (less, less_equal, greater, greater_equal) warn as NumPy's
loops do: "invalid value encountered in ..." when a real part is NaN, or when the real
parts are equal and an imaginary part is NaN (Note [complex order flags] in
include/npc/scalar_rules.hpp). Eager npc and both compiled backends against NumPy."""
import itertools
import warnings

import numpy as np
import pytest

import npc
from npc import _core

VALUES = [complex(np.nan, 0), 1, complex(0, np.nan), 1 + 1j, 1 - 1j, complex(1, np.nan), complex(np.nan, np.nan),
          0j, complex(np.inf, 1), -1]
# The ordering comparisons of the op table (those whose answer depends on the operands' order).
OPS = [r.name for r in _core.op_table()
       if r.resolver == "Comparison" and getattr(np, r.name)(0, 1) != getattr(np, r.name)(1, 0)]


def _outcome(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(*args)
    return np.asarray(r).tolist(), [str(m.message) for m in w]


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("op", OPS)
def test_eager_complex_order_warnings(op, dt):
    for p, q in itertools.product(VALUES, VALUES):
        for n in (1, 5):
            a, b = np.full(2 * n, p, dt)[::2], np.full(n, q, dt)
            want = _outcome(getattr(np, op), a, b)
            assert _outcome(getattr(npc, op), npc.asarray(a), npc.asarray(b)) == want, (p, q, n)


@pytest.mark.parametrize("backend", ["eager", "fused"])
@pytest.mark.parametrize("op", OPS)
def test_compiled_complex_order_warnings(op, backend):
    f = lambda a, b: getattr(np, op)(a, b)  # noqa: E731
    cf = npc.compile(f, backend=backend)
    for p, q in [(complex(np.nan, np.nan), 0j), (1, complex(1, np.nan)), (complex(np.nan, 0), 1), (2, 1 + 1j)]:
        for n in (1, 4):
            a, b = np.full(n, p, np.complex64), np.full(n, q, np.complex64)
            assert _outcome(cf, a, b) == _outcome(f, a, b), (p, q, n)
