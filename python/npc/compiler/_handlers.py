"""Whether an exception raised at the current point of a traced function could be caught by
the function's own code (Note [linear solves in traces] in python/npc/csrc/bind_linalg.cpp)."""
import sys

from ._state import _tls

_ranges = {}  # code object -> ((start, end) byte offsets covered by a handler, ...)


def _covered_ranges(code):
    """The instruction ranges of `code` that an exception handler covers, from its exception
    table (CPython 3.11+: entries of varints, 6 bits a byte, 0x40 continuing a number, 0x80
    starting an entry; start, length, target, depth-and-lasti, in code units of 2 bytes)."""
    r = _ranges.get(code)
    if r is not None:
        return r
    data = getattr(code, "co_exceptiontable", b"")
    out = []
    i, n = 0, len(data)

    def varint():
        nonlocal i
        b = data[i]
        i += 1
        v = b & 63
        while b & 64:
            b = data[i]
            i += 1
            v = (v << 6) | (b & 63)
        return v

    while i < n:
        start = varint()
        length = varint()
        varint()  # target
        varint()  # depth and lasti
        out.append((2 * start, 2 * (start + length)))
    r = _ranges[code] = tuple(out)
    return r


def errors_caught_here(pass_through=()):
    """True when some frame from the caller up to the function being compiled is inside a
    `try` or `with` block at its current instruction (npc's own frames too: `cond` catches
    inv's LinAlgError), or when that function is unknown: an error reported only when the
    graph runs would bypass a handler that NumPy's error meets. Frames of the code objects
    in `pass_through` are known to catch nothing of the kind."""
    root = getattr(_tls, "root_code", None)
    if root is None:
        return True
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if code not in pass_through:
            lasti = f.f_lasti
            for lo, hi in _covered_ranges(code):
                if lo <= lasti < hi:
                    return True
        if code is root:
            return False
        f = f.f_back
    return True
