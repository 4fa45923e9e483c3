"""Writes into empty regions inside compiled functions change nothing (NumPy writes no
element): the result and the caller's array are NumPy's on both backends."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-empty-writes")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def sub_rows(a):
    a[1:] -= 2
    return a * 1


def set_corner(a, s):
    a[1:, :1] = s
    return a * 1


def self_assign(a):
    a[:-1] = a
    return a * 1


def floordiv_columns(v):
    v[..., 1:] //= v
    return v * 1


def empty_middle(a):
    a[:, 2:2] = 7
    b = a + 1
    b[5:] = 0
    return b


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", [
    (sub_rows, (np.ones((1, 3)),)),
    (set_corner, (np.ones((1, 3)), 2.0)),
    (self_assign, (np.ones((1, 3)),)),
    (floordiv_columns, (np.ones((3, 1)),)),
    (empty_middle, (np.arange(12.0).reshape(3, 4),)),
])
def test_write_into_empty_region_changes_nothing(f, args, backend):
    check(f, args, args, backend=backend)
