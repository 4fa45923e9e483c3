"""The real-programs suite: ordinary NumPy programs (the standard kernels of numerical
computing, written for this project) that npc must run eagerly and compiled.

Each program is a plain NumPy function (``import numpy as np``), registered with its
initialiser and sizes by :func:`program`. ``bench/bench_programs.py`` times them (NumPy,
npc eager on the same source, ``npc.compile`` of the NumPy function) and
``tests/python/test_real_programs.py`` runs them at their tiny size differentially.
"""
import dataclasses
import importlib
from typing import Callable

PROGRAMS = {}

# The modules that register programs, by topic.
MODULES = ("linalg_loops", "stencils", "masked", "products", "learning", "misc")


@dataclasses.dataclass(frozen=True)
class Program:
    """One program: ``fn(*init(size, rng))`` is its run; ``sizes`` maps "tiny" (tests), "S"
    (NumPy about 10 ms) and "M" (about 100 ms) to the initialiser's size argument."""
    name: str
    fn: Callable
    init: Callable
    sizes: dict
    topic: str


def program(init, tiny, S, M):
    """Registers the decorated NumPy function with its initialiser ``init(size, rng)``."""
    def deco(fn):
        topic = fn.__module__.rsplit(".", 1)[-1]
        PROGRAMS[fn.__name__] = Program(fn.__name__, fn, init, {"tiny": tiny, "S": S, "M": M}, topic)
        return fn
    return deco


def load():
    """Imports every program module; returns the registry (name -> Program)."""
    for m in MODULES:
        importlib.import_module(f"{__name__}.{m}")
    return PROGRAMS
