"""Fuzzer finding 580646d8cf (tests/fuzz, docs/fuzzing.md).

mode: compiled-fused (npc.compile(f, backend='fused') on NumPy arrays)
call: 0 (index into CALLS)
kind: warnings
NumPy warns [('RuntimeWarning', 'divide by zero encountered in remainder')], npc [('RuntimeWarning', 'divide by zero encountered in floor_divide')]

Program (parameters: a1, a2), called once per input set below:

def f(a1, a2):
    a2 //= a1
    v1 = np.arange(np.size(a2))
    v4 = a1 % v1
    return (v4,)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzzexec import arr, assert_same_as_numpy  # noqa: E402

nan, inf = float("nan"), float("inf")

SOURCE = """\
def f(a1, a2):
    a2 //= a1
    v1 = np.arange(np.size(a2))
    v4 = a1 % v1
    return (v4,)
"""

# One list of inputs per call of the compiled function (each made afresh for every mode).
CALLS = [
    [arr([1], 'int8', (), 'C'), arr([1], 'int8', (), 'C')],  # input set of the 'new size +2' call
]

# ULP budgets of the returned values and of the array arguments (0: compared exactly).
ULPS = {'ret': [0], 'args': [0, 0], 'ret_prec': [None], 'args_prec': [None, None], 'unspecified_cast': False, 'power': False}


def test_fuzz_580646d8cf():
    assert_same_as_numpy(SOURCE, CALLS, ULPS, modes=['compiled-fused'])
