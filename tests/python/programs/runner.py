"""Runs the real-style NumPy programs of this folder once with NumPy and once with npc
bound to ``np``, and compares what they print, the warnings they raise and the final
values they leave in ``RESULT`` (dtype, shape and bytes: exact).

Each program is plain NumPy code (``import numpy as np``, ``from numpy.x import y``); the
npc run rewrites those imports to ``npc``. Usage: ``python runner.py [name ...]``.
"""
import contextlib
import io
import pathlib
import re
import sys
import warnings

import numpy

HERE = pathlib.Path(__file__).parent
PROGRAMS = sorted(p for p in HERE.glob("p[0-9][0-9]_*.py"))

_IMPORT = re.compile(r"^import numpy as np$", re.M)
_FROM = re.compile(r"^from numpy((?:\.\w+)*) import ", re.M)


def npc_source(src):
    """The program with NumPy's imports bound to npc."""
    src = _IMPORT.sub("import npc as np", src)
    return _FROM.sub(lambda m: f"from npc{m.group(1)} import ", src)


def run(path, use_npc):
    """(printed text, [(warning class, message)], RESULT) of one run of a program."""
    src = path.read_text()
    if use_npc:
        src = npc_source(src)
    ns = {"__name__": "__program__", "__file__": str(path)}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(src, str(path), "exec"), ns)
    return buf.getvalue(), [(w.category.__name__, str(w.message)) for w in caught], ns["RESULT"]


def compare(a, b, where="RESULT", rtol=None):
    """Differences between a NumPy-run value `a` and the npc-run value `b` (list of str).
    `rtol`: float and complex values may differ by that relative tolerance (programs whose
    values come from another BLAS/LAPACK build than NumPy's), else every bit is compared."""
    import npc
    diffs = []
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return [f"{where}: keys {list(a)} != {list(b) if isinstance(b, dict) else type(b)}"]
        for k in a:
            diffs += compare(a[k], b[k], f"{where}[{k!r}]", rtol)
        return diffs
    if isinstance(a, (list, tuple)):
        if type(a) is not type(b) or len(a) != len(b):
            return [f"{where}: {type(a).__name__}[{len(a)}] != {type(b).__name__}"]
        for i, (x, y) in enumerate(zip(a, b)):
            diffs += compare(x, y, f"{where}[{i}]", rtol)
        return diffs
    if isinstance(a, numpy.ndarray):
        if isinstance(a, numpy.ma.MaskedArray):
            if not isinstance(b, numpy.ma.MaskedArray):
                return [f"{where}: masked array became {type(b).__name__}"]
            diffs += compare(numpy.ma.getmaskarray(a), numpy.ma.getmaskarray(b), where + ".mask", rtol)
            a, b = a.data, b.data
        if type(a) is numpy.ndarray and not isinstance(b, (numpy.ndarray, npc.ndarray)):
            return [f"{where}: ndarray became {type(b).__name__}"]
        nb = numpy.asarray(b)
        if a.dtype != nb.dtype or a.shape != nb.shape:
            return diffs + [f"{where}: {a.dtype}{a.shape} != {nb.dtype}{nb.shape}"]
        if rtol is not None and a.dtype.kind in "fc":
            if not numpy.allclose(a, nb, rtol=rtol, atol=0.0, equal_nan=True):
                diffs.append(f"{where}: values differ beyond rtol={rtol}\n{a!r}\n{nb!r}")
        elif a.dtype.kind in "biufcmM":
            if numpy.ascontiguousarray(a).tobytes() != numpy.ascontiguousarray(nb).tobytes():
                diffs.append(f"{where}: values differ\n{a!r}\n{nb!r}")
        elif not numpy.array_equal(a, nb):
            diffs.append(f"{where}: values differ\n{a!r}\n{nb!r}")
        return diffs
    if isinstance(a, numpy.generic):
        if rtol is not None and type(a) is type(b) and a.dtype.kind in "fc":
            if not numpy.allclose(a, b, rtol=rtol, atol=0.0, equal_nan=True):
                diffs.append(f"{where}: {a!r} != {b!r} beyond rtol={rtol}")
        elif type(a) is not type(b) or a.tobytes() != b.tobytes():
            diffs.append(f"{where}: {a!r} != {b!r}")
        return diffs
    if rtol is not None and type(a) is type(b) is float:
        if not numpy.isclose(a, b, rtol=rtol, atol=0.0, equal_nan=True):
            diffs.append(f"{where}: {a!r} != {b!r} beyond rtol={rtol}")
    elif type(a) is not type(b) or (a != b and not (a != a and b != b)):
        diffs.append(f"{where}: {a!r} != {b!r}")
    return diffs


def count_npc_arrays(value):
    import npc
    if isinstance(value, npc.ndarray):
        return 1
    if isinstance(value, dict):
        return sum(count_npc_arrays(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(count_npc_arrays(v) for v in value)
    return 0


def check(path, rtol=None):
    """Runs a program both ways; returns the list of differences (empty: identical; `rtol`:
    float values within that relative tolerance, see compare)."""
    out_np, warn_np, res_np = run(path, False)
    out_npc, warn_npc, res_npc = run(path, True)
    diffs = []
    if out_np != out_npc:
        import difflib
        diffs.append("printed output differs:\n" + "\n".join(difflib.unified_diff(
            out_np.splitlines(), out_npc.splitlines(), "numpy", "npc", lineterm="")))
    if warn_np != warn_npc:
        diffs.append(f"warnings differ: {warn_np} != {warn_npc}")
    diffs += compare(res_np, res_npc, rtol=rtol)
    if count_npc_arrays(res_npc) == 0:
        diffs.append("the npc run produced no npc arrays in RESULT")
    return diffs


if __name__ == "__main__":
    names = sys.argv[1:]
    failed = 0
    for p in PROGRAMS:
        if names and not any(n in p.name for n in names):
            continue
        d = check(p)
        failed += bool(d)
        print(("FAIL " if d else "ok   ") + p.name)
        for line in d:
            print("    " + line.replace("\n", "\n    "))
    sys.exit(1 if failed else 0)
