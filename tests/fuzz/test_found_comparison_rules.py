"""Fuzzer findings that were rules of the comparison, not defects of npc (docs/fuzzing.md):
each program runs through the fuzzer's own comparison (fuzzexec.assert_same_as_numpy), so
these tests fail when the rule they keep goes."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzzgen  # noqa: E402
from fuzzexec import arr, assert_same_as_numpy, program_case  # noqa: E402

nan, inf = float("nan"), float("inf")


def test_budget_of_a_float32_operation_in_a_float64_value():
    # Seed 60173: a float32 cbrt one float32 ULP off (fused code calls the C library's cbrtf,
    # NumPy SVML's) divides a float64 value: compared in float32 (Note [budgets in a
    # narrower precision] in fuzzgen.py).
    source = """\
def f(a1, a2):
    v5 = np.cbrt(a2)
    v6 = np.true_divide(a1, v5)
    v7 = v6 + a1
    return (v7,)
"""
    calls = [[arr([1, -2147483648, 1, 2147483646, -3, -2, 1, -1, -4], 'int32', (3, 3), 'C'),
              arr([-4, -6, -5], 'int16', (3,), 'C')]] * 2
    ulps = {'ret': [8], 'args': [0, 0], 'ret_prec': ['float32'], 'args_prec': [None, None],
            'unspecified_cast': False}
    assert_same_as_numpy(source, calls, ulps, modes=['npc', 'compiled-fused', 'compiled-eager'])


def test_generator_records_the_narrower_precision():
    # The generator records, for a returned value computed from a float32 or float16 result,
    # that narrower precision, and program_case passes it on to the comparison. Seeds
    # 60000-60399 hold two such programs with the op table's ufuncs of today.
    found = 0
    for seed in range(60000, 60400):
        prog = fuzzgen.generate(seed)
        prec = prog.get("prec", {})
        if not any(r in prec for r in prog["ret"]):
            continue
        found += 1
        _, _, ulps = program_case(prog)
        assert ulps["ret_prec"] == [prec.get(r) for r in prog["ret"]]
        assert set(prec.values()) <= {"float16", "float32"}
    assert found >= 1


def test_power_of_zero_to_minus_inf_warning():
    # Seed 60252: NumPy's SVML pow (AVX-512) warns "divide by zero" for 0 ** -inf, the C
    # library's pow (npc, NumPy on other CPUs) does not (Note [power of zero to -inf]).
    source = """\
def f(a0):
    v3 = -0.0 ** a0
    return (v3,)
"""
    calls = [[arr([-inf, 2.0, 0.75, 2.75, -inf, -inf], 'float32', (2, 3), 'C')]]
    ulps = {'ret': [8], 'args': [0], 'unspecified_cast': False, 'power': True}
    assert_same_as_numpy(source, calls, ulps, modes=['npc', 'compiled-fused', 'compiled-eager'])
