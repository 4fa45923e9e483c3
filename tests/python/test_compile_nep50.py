"""NEP 50 in compiled code: a Python int outside the loop dtype's range raises NumPy's
OverflowError in arithmetic and answers comparisons exactly (NumPy 2), never wraps."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-nep50")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


U = np.array([5, 6, 255], np.uint8)
B = np.array([1, -2, 100], np.int8)

PROGRAMS = [
    (lambda u: u > -1, U),
    (lambda u: u == -1, U),
    (lambda u: u != -1, U),
    (lambda u: u < 256, U),
    (lambda u: -1 <= u, U),
    (lambda u: (u + 1) >= 300, U),
    (lambda b: b >= 200, B),
    (lambda b: b < -129, B),
    (lambda b: np.maximum(b, 200), B),
    (lambda b: b + 1000, B),
    (lambda u: u - 256, U),
    (lambda u: u * -1, U),
    (lambda b: np.equal(b, 1000, out=np.empty(3, bool)) | (b > 0), B),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(PROGRAMS)))
def test_out_of_range_python_int(k, backend):
    f, x = PROGRAMS[k]
    check(f, (x,), (x,), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_int_argument(backend):
    f = lambda s, x: s + x  # noqa: E731
    x = np.array([1, 2], np.uint32)
    check(f, (3, x), (-2, x), (3, x), (2 ** 32, x), backend=backend)
