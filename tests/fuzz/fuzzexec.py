"""Running one fuzzer program in every mode and comparing the outcomes with NumPy's.

A *mode* is one row of `MODES`: the module the program text sees as ``np``, the module its
array arguments are made with, and how the function is called (eagerly, or through
`npc.compile` with a backend). New modes (gradients, GPU devices) are new rows with their
own `run` function; the comparison is shared.

An *outcome* of one call is what NumPy users observe: the result (type: ndarray, NumPy
scalar or Python scalar; dtype; shape; values), the exception type, the arguments' values
after the call (writes into them) and the warnings (category and message, as a multiset).
"""
import ast
import dataclasses
import warnings

import numpy

import fuzzgen


@dataclasses.dataclass(frozen=True)
class Mode:
    """One way of running a program. `namespace` is the module bound to ``np`` in the
    program text, `arrays` the module its array arguments are made with; `run(mode, fn,
    calls)` returns one outcome per call."""
    name: str
    namespace: str
    arrays: str
    backend: str | None
    run: object
    doc: str


def _module(name):
    if name == "numpy":
        return numpy
    import npc
    return npc


def _function(source, namespace):
    env = {"np": _module(namespace)}
    exec(compile(source, "<fuzz program>", "exec"), env)
    return env["f"]


def _run_eager(mode, source, calls):
    fn = _function(source, mode.namespace)
    return [_call(fn, inputs, mode.arrays) for inputs in calls]


def _run_compiled(mode, source, calls):
    """One compiled function called with every input set in order: trace, replay, new
    values, new sizes (fuzzgen.CALL_PLAN)."""
    import npc
    npc.compiler.reset()
    cf = npc.compile(_function(source, mode.namespace), backend=mode.backend)
    return [_call(cf, inputs, mode.arrays) for inputs in calls]


MODES = {m.name: m for m in [
    Mode("numpy", "numpy", "numpy", None, _run_eager, "the oracle"),
    Mode("npc", "npc", "npc", None, _run_eager, "`import npc as np`, npc arrays"),
    Mode("compiled-fused", "numpy", "numpy", "fused", _run_compiled, "npc.compile(f, backend='fused') on NumPy arrays"),
    Mode("compiled-eager", "numpy", "numpy", "eager", _run_compiled,
         "npc.compile(f, backend='eager') on NumPy arrays"),
    # Later rows: "grad" (gradcheck of the program's float outputs), "cuda" (device arrays).
]}
CHECKED = ["npc", "compiled-fused", "compiled-eager"]


# ---------------------------------------------------------------------------------------
# Outcomes


def _make_args(inputs, arrays):
    xp = _module(arrays)
    return [fuzzgen.layout_view(x[1], x[2], xp) if x[0] == "a" else x[1] for x in inputs]


def _describe(x):
    """(category, dtype, shape, values) of a result, in NumPy terms."""
    import npc
    if isinstance(x, (tuple, list)):
        return ("tuple" if isinstance(x, tuple) else "list", None, len(x), [_describe(e) for e in x])
    if isinstance(x, numpy.ndarray) or isinstance(x, npc.ndarray):
        a = numpy.array(numpy.asarray(x), copy=True)
        return ("ndarray", a.dtype.str, a.shape, a)
    if isinstance(x, numpy.generic):
        return ("numpy." + type(x).__name__, x.dtype.str, (), numpy.asarray(x))
    if isinstance(x, (bool, int, float, complex)):
        return (type(x).__name__, None, (), numpy.asarray(x) if not isinstance(x, int) or
                isinstance(x, bool) else x)
    return (type(x).__name__, None, None, repr(x))


def _call(fn, inputs, arrays):
    args = _make_args(inputs, arrays)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            ret, exc = fn(*args), None
        except Exception as e:  # compared by type
            ret, exc = None, e
    return {"exc": exc, "ret": None if exc is not None else _describe(ret),
            "args": [_describe(a) for a, x in zip(args, inputs) if x[0] == "a"],
            "warn": sorted((w.category.__name__, str(w.message)) for w in rec)}


# ---------------------------------------------------------------------------------------
# Comparison


def _bits_equal(e, g):
    """Exact float equality: equal values, NaN where NaN, the sign of zeros."""
    same = (e == g) | (numpy.isnan(e) & numpy.isnan(g))
    zero = (e == 0) & (g == 0)
    return bool(numpy.all(same) and numpy.all(numpy.signbit(e[zero]) == numpy.signbit(g[zero])))


def _close(e, g, ulps, scale=0.0):
    """Floats within `ulps` ULPs of the larger magnitude, or within ulps * eps of the
    largest magnitude of the expected value or of `scale` (Note [error bound of sums]); the
    same non-finite values."""
    fe, fg = numpy.isfinite(e), numpy.isfinite(g)
    if not numpy.array_equal(fe, fg) or not _bits_equal(numpy.where(fe, 0, e), numpy.where(fg, 0, g)):
        return False
    if not fe.any():
        return True
    e64, g64 = e[fe].astype(numpy.float64), g[fg].astype(numpy.float64)
    mag = numpy.maximum(abs(e[fe]), abs(g[fg]))
    spacing = numpy.spacing(mag).astype(numpy.float64)
    scale = max(float(abs(e64).max()), min(scale, float(numpy.finfo(e.dtype).max))) * float(numpy.finfo(e.dtype).eps)
    return bool(numpy.all(abs(e64 - g64) <= ulps * numpy.maximum(spacing, scale)))


# Note [error bound of sums]
# A float sum computed in another order than NumPy's (fused code sums in blocks and SIMD
# lanes: Note [summation] in src/fusion/lower_reduce.cpp) differs from NumPy's by at most about
# n * eps * sum(|x_i|), a bound set by the magnitudes of the terms, not of the result: with
# 1.8e308 and -1.8e308 among small terms, the small terms that each order loses to the large
# running sum differ, and two accurate results of -0.17 and -0.15 are both within the bound.
# The fuzzer does not know the terms of each sum, so a value with a ULP budget may also
# differ by its budget times eps times the largest finite magnitude among the call's float
# inputs (`input_scale`). Values with budget 0 (exact operations) are compared bit for bit.


def input_scale(inputs):
    """The largest finite magnitude among the float and complex inputs of a call (array
    elements and Python floats), 0.0 when there are none (Note [error bound of sums])."""
    m = 0.0
    for x in inputs:
        v = numpy.asarray(x[1])
        if v.dtype.kind not in "fc" or v.size == 0:
            continue
        with numpy.errstate(all="ignore"):
            parts = [v.real, v.imag] if v.dtype.kind == "c" else [v]
            for p in parts:
                p = numpy.abs(p[numpy.isfinite(p)].astype(numpy.float64))
                if p.size:
                    m = max(m, float(p.max()))
    return m


def _unsigned_zeros(x):
    return numpy.where(x == 0, numpy.zeros_like(x), x)


def _values_equal(e, g, ulps, scale=0.0, prec=None):
    if ulps >= fuzzgen.UNSPECIFIED:  # Note [unspecified casts] in fuzzgen.py
        return True
    zero_sign = ulps >= fuzzgen.ZERO_SIGN  # Note [signs of zero ties] in fuzzgen.py
    ulps %= fuzzgen.ZERO_SIGN
    e, g = numpy.asarray(e), numpy.asarray(g)
    kind = e.dtype.kind
    if kind in "fc":
        parts = [(e.real, g.real), (e.imag, g.imag)] if kind == "c" else [(e, g)]
        if prec is not None and ulps:  # Note [budgets in a narrower precision] in fuzzgen.py
            parts = [(a.astype(prec), b.astype(prec)) for a, b in parts]
            ulps += 1
        if zero_sign:
            parts = [(_unsigned_zeros(a), _unsigned_zeros(b)) for a, b in parts]
        if ulps == 0:
            return all(_bits_equal(a, b) for a, b in parts)
        return all(_close(a, b, ulps, scale) for a, b in parts)
    if ulps or zero_sign:  # integers and bools computed from inexact floats are not compared
        return True
    return numpy.array_equal(e, g)


def _compare_desc(exp, got, ulps, where, scale=0.0, prec=None):
    """The first difference between two described values, as (kind, text), or None."""
    if exp[0] != got[0]:
        return "type", f"{where}: NumPy gives {exp[0]}, npc {got[0]}"
    if exp[0] in ("tuple", "list"):
        if exp[2] != got[2]:
            return "shape", f"{where}: length {exp[2]} vs {got[2]}"
        for k, (a, b) in enumerate(zip(exp[3], got[3])):
            d = _compare_desc(a, b, ulps, f"{where}[{k}]", scale, prec)
            if d:
                return d
        return None
    if exp[1] != got[1]:
        return "dtype", f"{where}: NumPy dtype {exp[1]}, npc {got[1]}"
    if exp[2] != got[2]:
        return "shape", f"{where}: NumPy shape {exp[2]}, npc {got[2]}"
    if exp[1] is None and exp[2] is None:
        return None if exp[3] == got[3] else ("value", f"{where}: {exp[3]} vs {got[3]}")
    if isinstance(exp[3], int) and not isinstance(exp[3], bool):
        return None if exp[3] == got[3] else ("value", f"{where}: NumPy {exp[3]!r}, npc {got[3]!r}")
    with numpy.errstate(all="ignore"):
        if not _values_equal(exp[3], got[3], ulps, scale, prec):
            return "value", f"{where}: NumPy {_short(exp[3])}, npc {_short(got[3])}"
    return None


def _short(a):
    return numpy.array2string(numpy.asarray(a), threshold=12, edgeitems=3, floatmode="unique").replace("\n", " ")


def _extra_only(exp, got, texts):
    """`exp` is the multiset `got` plus RuntimeWarnings whose messages are in `texts`."""
    rest = list(exp)
    for w in got:
        if w not in rest:
            return False
        rest.remove(w)
    return all(w[0] == "RuntimeWarning" and w[1] in texts for w in rest)


def compare(exp, got, ulps, scale=0.0):
    """The first difference of two call outcomes, as (kind, text), or None. `ulps` holds
    the budgets: {"ret": [per returned value], "args": [per array argument]}; `scale` is the
    call's input_scale (Note [error bound of sums]); "ret_prec" and "args_prec" the precisions
    budgets count in (Note [budgets in a narrower precision] in fuzzgen.py)."""
    if (exp["exc"] is None) != (got["exc"] is None) or (
            exp["exc"] is not None and not isinstance(got["exc"], type(exp["exc"]))):
        e = "returns" if exp["exc"] is None else f"raises {type(exp['exc']).__name__}: {exp['exc']}"
        g = "returns" if got["exc"] is None else f"raises {type(got['exc']).__name__}: {got['exc']}"
        return "exception", f"NumPy {e[:300]}; npc {g[:300]}"
    if exp["exc"] is None:
        rets = exp["ret"][3]
        for k in range(len(rets)):
            ul = ulps["ret"][k] if k < len(ulps["ret"]) else 0
            if got["ret"][0] != "tuple" or len(got["ret"][3]) != len(rets):
                return "type", f"result: {got['ret'][0]}"
            pr = ulps.get("ret_prec", [])
            d = _compare_desc(rets[k], got["ret"][3][k], ul, f"return[{k}]", scale, pr[k] if k < len(pr) else None)
            if d:
                return d
    for k, (a, b) in enumerate(zip(exp["args"], got["args"])):
        ul = ulps["args"][k] if k < len(ulps["args"]) else 0
        pr = ulps.get("args_prec", [])
        d = _compare_desc(a, b, ul, f"argument {k} after the call", scale, pr[k] if k < len(pr) else None)
        if d:
            return "args", d[1]
    ew, gw = exp["warn"], got["warn"]
    if ulps.get("unspecified_cast"):  # Note [unspecified casts] in fuzzgen.py
        ew, gw = ([w for w in x if w[1] != "invalid value encountered in cast"] for x in (ew, gw))
    if ulps.get("power") and _extra_only(ew, gw, fuzzgen.POWER_ZERO_DIVIDE):  # Note [power of zero to -inf]
        ew = gw
    if ew != gw:
        return "warnings", f"NumPy warns {exp['warn']}, npc {got['warn']}"
    return None


# Note [dead-code warnings]
# A documented difference of compiled code (docs/compile.md): an operation whose result the
# program never uses is removed with the dead code, so its floating-point warning is not
# raised. What "unused" means for the tracer: after the last graph break (every array a
# Python variable still holds is computed at a break), an assignment whose name neither
# the return value nor any later statement reads, transitively. For compiled modes the
# oracle's warnings may also be those of the program without such assignments. The tracer
# drops more than that syntactic rule finds (a value overwritten whole by a later write, a
# value whose shape alone is read), so a compiled mode may also miss floating-point
# RuntimeWarnings ("... encountered in ...") outright: it never raises an extra or a
# different warning. This acceptance goes when dead operations keep their checks (the
# strict xfail test_dead_operation_warns in tests/python/test_compile_warnings.py).
_BREAKS = ("float", "int", "bool", "complex", "len", "print")


def _breaks(stmt):
    for n in ast.walk(stmt):
        if isinstance(n, (ast.If, ast.While, ast.For, ast.IfExp, ast.Assert)):
            return True
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id in _BREAKS:
                return True
            if isinstance(f, ast.Attribute) and f.attr in ("item", "tolist"):
                return True
    return False


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def without_dead_code(source):
    """`source` without the assignments that compiled code drops as dead after the last
    graph break (Note [dead-code warnings]), or None when there are none."""
    tree = ast.parse(source)
    fn = tree.body[0]
    body = fn.body
    last_break = max((i for i, st in enumerate(body) if _breaks(st)), default=-1)
    live, dead = set(), []
    for i in range(len(body) - 1, last_break, -1):
        st = body[i]
        pure = (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name))
        if pure and st.targets[0].id not in live:
            dead.append(i)
            continue
        if pure:
            live |= _names(st.value)
        else:
            live |= _names(st)
    if not dead:
        return None
    fn.body = [st for i, st in enumerate(body) if i not in dead] or [ast.Pass()]
    return ast.unparse(tree) + "\n"


def _only_fp_warnings_missing(exp, got):
    """`got` is `exp` less some floating-point RuntimeWarnings (Note [dead-code warnings])."""
    rest = list(exp)
    for w in got:
        if w not in rest:
            return False
        rest.remove(w)
    return all(w[0] == "RuntimeWarning" and " encountered in " in w[1] for w in rest)


def check(source, calls, ulps, modes=CHECKED):
    """Run the program in NumPy and in every mode of `modes`; the first difference of each
    mode as a dict {mode, call, kind, text}. `calls`: one list of inputs per call
    (fuzzgen.call_inputs)."""
    oracle = MODES["numpy"].run(MODES["numpy"], source, calls)
    if any(isinstance(o["exc"], NameError) for o in oracle):
        return []  # not a program (a shrinking step removed a definition)
    found = []
    live_oracle = None
    for name in modes:
        mode = MODES[name]
        outs = mode.run(mode, source, calls)
        for k, (exp, got) in enumerate(zip(oracle, outs)):
            scale = input_scale(calls[k])
            d = compare(exp, got, ulps, scale)
            if d and d[0] == "warnings" and mode.run is _run_compiled:
                if live_oracle is None:  # Note [dead-code warnings]
                    live = without_dead_code(source)
                    live_oracle = MODES["numpy"].run(MODES["numpy"], live, calls) if live else []
                if live_oracle and compare(live_oracle[k], got, ulps, scale) is None:
                    d = None
                elif _only_fp_warnings_missing(exp["warn"], got["warn"]) and \
                        compare(dict(exp, warn=got["warn"]), got, ulps, scale) is None:
                    d = None
            if d:
                found.append({"mode": name, "call": k, "kind": d[0], "text": d[1]})
                break
    return found


def program_case(prog):
    """(source, calls, ulps) of a generated program."""
    src = fuzzgen.source(prog)
    calls = [fuzzgen.call_inputs(prog, tuple(c)) for c in prog["calls"]]
    used = fuzzgen.used_params(prog)
    budget = prog.get("ulps", {})
    prec = prog.get("prec", {})
    ulps = {"ret": [budget.get(n, 0) for n in prog["ret"]],
            "args": [budget.get(n, 0) for n in used if n.startswith("a")],
            "ret_prec": [prec.get(n) for n in prog["ret"]],
            "args_prec": [prec.get(n) for n in used if n.startswith("a")],
            "unspecified_cast": bool(prog.get("unspecified_cast")),
            "power": bool(fuzzgen.POWER.search(src))}
    return src, calls, ulps


def check_program(prog, modes=CHECKED):
    src, calls, ulps = program_case(prog)
    return check(src, calls, ulps, modes)


def assert_same_as_numpy(source, calls, ulps, modes=CHECKED):
    """The regression-test form: fails with the first difference of each mode."""
    found = check(source, calls, ulps, modes)
    assert not found, "\n".join(f"{d['mode']}, call {d['call']}: {d['kind']}: {d['text']}" for d in found)


def arr(values, dtype, shape, layout):
    """An array input of a reproducer: its values (flat), dtype, shape and layout
    (fuzzgen.layout_view)."""
    return ("a", numpy.array(values, dtype=dtype).reshape(shape), layout)
