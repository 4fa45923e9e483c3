"""Fuzzer finding de50db8baa (tests/fuzz, docs/fuzzing.md).

modes: npc, compiled-fused, compiled-eager (each found)
call: 0 (index into CALLS)
kind: exception
NumPy raises ValueError: output array is read-only; npc raises TypeError: ufunc 'bitwise_and' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''

Program (parameters: a0), called once per input set below:

def f(a0):
    v3 = np.broadcast_to(a0, (2,) + a0.shape)
    v3 &= a0
    return ()
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzzexec import arr, assert_same_as_numpy  # noqa: E402

nan, inf = float("nan"), float("inf")

SOURCE = """\
def f(a0):
    v3 = np.broadcast_to(a0, (2,) + a0.shape)
    v3 &= a0
    return ()
"""

# One list of inputs per call of the compiled function (each made afresh for every mode).
CALLS = [
    [arr([1.0], 'float64', (), 'C')],  # input set of the 'new size +2' call
]

# ULP budgets of the returned values and of the array arguments (0: compared exactly).
ULPS = {'ret': [], 'args': [0], 'ret_prec': [], 'args_prec': [None], 'unspecified_cast': False, 'power': False}


def test_fuzz_de50db8baa():
    assert_same_as_numpy(SOURCE, CALLS, ULPS, modes=['npc', 'compiled-fused', 'compiled-eager'])
