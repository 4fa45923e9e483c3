"""A module of the user's for tests/python/test_compile_globals.py: helpers that read their
own module's globals."""
import numpy as np

FACTOR = 2.0
OFFSETS = [1.0, 2.0]


class Scaler:
    def __init__(self, s):
        self.s = s

    def apply(self, x):
        return x * self.s + FACTOR


def scaled(x):
    return x * FACTOR + OFFSETS[0]


def total(x):
    return np.sum(x) * FACTOR


def scaled_or_plain(x):
    try:
        return x * MISSING_AT_TRACE  # noqa: F821 - defined later by the test
    except NameError:
        return x
