"""Fuzzer finding e73db56a91 (seed 1600376; tests/fuzz, docs/fuzzing.md): a NumPy scalar on the left of an operator whose right operand is a scalar result realized by a graph break warned "in floor_divide" where NumPy warns "in scalar floor_divide" (Note [reflected scalar operators] in python/npc/_interop.py).

mode: compiled-eager (npc.compile(f, backend='eager') on NumPy arrays)
call: 0 (index into CALLS)
kind: warnings
NumPy warns [('RuntimeWarning', 'invalid value encountered in scalar floor_divide')], npc [('RuntimeWarning', 'invalid value encountered in floor_divide')]

Program (parameters: a1), called once per input set below:

def f(a1):
    v2 = np.nanmin(a1)
    v3 = np.nansum(v2)
    v6 = v3 // v2
    return ()
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzzexec import arr, assert_same_as_numpy  # noqa: E402

nan, inf = float("nan"), float("inf")

SOURCE = """\
def f(a1):
    v2 = np.nanmin(a1)
    v3 = np.nansum(v2)
    v6 = v3 // v2
    return ()
"""

# One list of inputs per call of the compiled function (each made afresh for every mode).
CALLS = [
    [arr([3.0, 0.0, 1.0, 0.25], 'float64', (4,), 'C')],  # input set of the 'new size +2' call
]

# ULP budgets of the returned values and of the array arguments (0: compared exactly).
ULPS = {'ret': [], 'args': [0], 'ret_prec': [], 'args_prec': [None], 'unspecified_cast': False, 'power': False}


def test_reflected_scalar_floor_divide():
    assert_same_as_numpy(SOURCE, CALLS, ULPS, modes=["compiled-eager", "compiled-fused"])
