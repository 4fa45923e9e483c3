"""Fuzzer finding 3658433ab3 (tests/fuzz, docs/fuzzing.md).

mode: compiled-eager (npc.compile(f, backend='eager') on NumPy arrays)
call: 0 (index into CALLS)
kind: exception
NumPy raises ValueError: Integers to negative integer powers are not allowed.; npc returns

Program (parameters: a1), called once per input set below:

def f(a1):
    v3 = a1 ** -300
    return ()
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzzexec import arr, assert_same_as_numpy  # noqa: E402

nan, inf = float("nan"), float("inf")

SOURCE = """\
def f(a1):
    v3 = a1 ** -300
    return ()
"""

# One list of inputs per call of the compiled function (each made afresh for every mode).
CALLS = [
    [arr([1], 'int64', (), 'C')],  # input set of the 'new size +2' call
]

# ULP budgets of the returned values and of the array arguments (0: compared exactly).
ULPS = {'ret': [], 'args': [0], 'ret_prec': [], 'args_prec': [None], 'unspecified_cast': False, 'power': True}


def test_fuzz_3658433ab3():
    assert_same_as_numpy(SOURCE, CALLS, ULPS, modes=['compiled-fused', 'compiled-eager'])
