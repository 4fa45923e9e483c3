"""Complex constants with a NaN part in compiled code raise NumPy's "invalid" flag: NumPy's
complex loops compare the parts with C's ordered operators (Smith's division, the complex
order), and the compiled kernels compare a NaN part at run time as they do.
"""
import os
import warnings

import numpy as np
import pytest

import npc

nan, inf = float("nan"), float("inf")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-cnan")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


CONSTS = [complex(nan, 1), complex(1, nan), complex(nan, nan), complex(inf, 1), complex(0, 0), complex(2, -3)]
OPS = [
    ("divide", lambda x, c: x / c),
    ("divide-left", lambda x, c: c / x),
    ("divide-then-add", lambda x, c: x / c + x),
    ("less", lambda x, c: x < c),
    ("greater-equal", lambda x, c: x >= c),
]
X = np.array([1 + 2j, 0j, 3 - 1j, complex(nan, 0), -2j, 4 + 0j])


def record(fn, *args):
    with warnings.catch_warnings(record=True) as w, np.errstate(all="warn"):
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [(type(m.message).__name__, str(m.message)) for m in w]


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("c", CONSTS, ids=repr)
@pytest.mark.parametrize("name,op", OPS, ids=[o[0] for o in OPS])
def test_complex_constant_flags_equal_numpys(name, op, c, dtype, backend):
    x = X.astype(dtype)

    def f(x):
        return op(x, c)

    want, want_w = record(f, x)
    g = npc.compile(f, backend=backend)
    for _ in range(2):
        got, got_w = record(g, x)
        assert got_w == want_w
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
