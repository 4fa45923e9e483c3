"""npc.fft: the namespace of numpy.fft.

Functions defined natively in this package replace NumPy's name by name (the protocol
routing of npc._interop finds them by name, with no registration); every other name of
numpy.fft resolves to a fallback that runs NumPy on zero-copy views (see npc._fallback).
"""
from .._fallback import install as _install

__getattr__, __dir__ = _install(globals())
