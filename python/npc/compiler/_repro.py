"""Accuracy checking of compiled graphs (``NPC_REPRO=accuracy``, ``npc.config.repro``).

Every graph a compiled function runs on a non-eager backend is also run on the eager
interpreter with the same inputs, and the outputs are compared with the conformance
tolerances (docs/compile.md, "Accuracy checking"). On a mismatch: a RuntimeWarning names
the function, the graph and the first mismatching output; the graph is bisected to the
smallest failing subgraph (the cone of that output, in topological order, each candidate
compiled with the same backend); a standalone reproduction script is written to the debug
folder; and the eager result is returned.
"""
import csv
import os
import re
import warnings

import numpy as _np

from .. import _core
from .._config import config
from . import _logs

config.register("repro", os.environ.get("NPC_REPRO", "") or None,
                "\"accuracy\": run every compiled graph eagerly too and compare "
                "(default from the NPC_REPRO environment variable)")

_CSV = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))),
                    "tests", "numpy_conformance", "ulp_tolerances.csv")
# Ops whose float results accumulate rounding over a reduced axis: the rows of the op table
# that can raise a floating-point error (they round) and reduce or accumulate, named by the
# graph as reductions (sum, or ufunc.reduce of a binary ufunc such as add) or primitives
# (cumsum, cumprod, matmul).
_ACCUMULATING = {row.name for row in _core.op_table()
                 if row.fpe and (row.kind != 0 or (row.nin == 2 and row.nout == 1))}
_bounds = None
_reports = []  # (function, directory) of every mismatch, newest last (tests read it)


def enabled():
    mode = config.repro
    if not mode:
        return False
    if mode != "accuracy":
        raise ValueError(f"npc.config.repro: unknown mode {mode!r} (expected 'accuracy' or None)")
    return True


def _ulp_bounds():
    global _bounds
    if _bounds is None:
        _bounds = {}
        # Without the data file (an installed npc without its tests), a transcendental op
        # gets the largest bound the project declares for any op.
        if os.path.exists(_CSV):
            with open(_CSV) as f:
                rows = [line for line in f.read().splitlines() if line and not line.startswith("#")]
            for r in csv.DictReader(rows):
                _bounds[r["op"], r["kind"]] = int(r["ulp"])
    return _bounds


def _to_numpy(x):
    return _np.array(x, copy=True)


def _numpy_name(op):
    """NumPy's own name of ufunc `op` (acos: arccos, pow: power; the IR uses NumPy's)."""
    uf = getattr(_np, op, None)
    return uf.__name__ if isinstance(uf, _np.ufunc) else op


def _graph_of(g):
    # Python backends wrap the tracer's graph (npc.compiler.register_backend).
    return getattr(g, "_g", g)


def _cone(table, out_id):
    live = {out_id}
    for nid, _what, _dt, _sh, args in reversed(table):
        if nid in live:
            live.update(args)
    return sorted(live)


def _tolerance(table, cone):
    """(ulps, accumulation length) for a float output whose value depends on the nodes
    `cone`; ulps None means "exact"."""
    bounds = _ulp_bounds()
    ulps, n_acc, inexact = 0, 0, False
    for nid in cone:
        _id, what, _dt, shape, args = table[nid]
        op = what.split(":", 1)[1] if ":" in what else ""
        op = _numpy_name(op)
        if what.startswith("ufunc:"):
            b = bounds.get((op, "c"), 0) or bounds.get((op, "f"), 0)
            if b:
                inexact = True
                ulps += b
        elif (what.startswith("reduce:") or what.startswith("prim:")) and op in _ACCUMULATING:
            src = table[args[0]][3] if args else ()
            n = 1
            for d in src:
                n *= d if isinstance(d, int) else 1
            m = 1
            for d in shape:
                m *= d if isinstance(d, int) else 1
            n_acc = max(n_acc, n // max(m, 1) if op != "matmul" else (src[-1] if src and isinstance(src[-1], int) else n))
            inexact = True
    if not inexact:
        return None, 0
    # Both backends are within the bound of NumPy, so they are within twice it of each other.
    return 2 * ulps + 2, n_acc


def _mismatch(ref, got, ulps, n_acc):
    """A description of the first element where `got` differs from `ref` beyond the
    tolerance, or None."""
    if ref.shape != got.shape or ref.dtype != got.dtype:
        return f"shape/dtype {got.dtype}{got.shape} instead of {ref.dtype}{ref.shape}"
    if ref.dtype.kind not in "fc" or ulps is None:
        bad = ~((ref == got) | ((ref != ref) & (got != got))) if ref.dtype.kind in "fc" else ref != got
    else:
        pairs = [(ref.real, got.real), (ref.imag, got.imag)] if ref.dtype.kind == "c" else [(ref, got)]
        bad = _np.zeros(ref.shape, bool)
        for r, g in pairs:
            r64, g64 = r.astype(_np.float64), g.astype(_np.float64)
            fin = _np.isfinite(r64) & _np.isfinite(g64)
            same = (r64 == g64) | (_np.isnan(r64) & _np.isnan(g64))
            scale = _np.spacing(_np.maximum(_np.abs(r), _np.abs(g))).astype(_np.float64)
            tol = ulps * scale
            if n_acc:
                # Summation error bound: n * eps * magnitude of what is summed (the largest
                # magnitude of the reference result stands for it).
                eps = _np.finfo(r.dtype).eps
                mag = float(_np.max(_np.abs(r64[_np.isfinite(r64)]), initial=0.0))
                tol = tol + n_acc * eps * mag
            with _np.errstate(invalid="ignore", over="ignore"):
                ok = same | (fin & (_np.abs(r64 - g64) <= tol))
            bad |= ~ok
    if not bad.any():
        return None
    idx = tuple(int(i) for i in _np.argwhere(bad)[0]) if bad.ndim else ()
    return (f"{int(bad.sum())} of {bad.size} elements differ; first at index {idx}: "
            f"compiled {got[idx]!r}, eager {ref[idx]!r}")


def _compare(graph, outs, refs):
    """Index and description of the first output beyond tolerance, or (None, None)."""
    table = graph.nodes()
    ids = graph.output_ids
    for k, (o, r) in enumerate(zip(outs, refs)):
        got, ref = _to_numpy(o), _to_numpy(r)
        cone = _cone(table, ids[k])
        ulps, n_acc = _tolerance(table, cone)
        if ulps is not None and ref.dtype.kind not in "fc":
            # An integer or bool result of inexact float ops (a comparison of exp(x)) may
            # flip where the two float values straddle the threshold: not compared.
            continue
        why = _mismatch(ref, got, ulps, n_acc)
        if why is not None:
            return k, why
    return None, None


def run_checked(name, graph, backend, inputs, scalars, outs=None):
    """Runs `graph` (unless `outs` are its outputs already), runs it eagerly on the same
    inputs and returns the eager outputs where they differ beyond tolerance."""
    g = _graph_of(graph)
    writes = g.writes_inputs
    if outs is not None and writes:
        return outs  # the inputs were already written by the run: nothing to replay on
    eager_in = [x.copy() if isinstance(x, _core.ndarray) else x for x in inputs] if writes else inputs
    saved = [_to_numpy(x) for x in inputs]
    if outs is None:
        outs = graph(inputs, scalars)
    refs = g.run_eager(eager_in, scalars)
    k, why = _compare(g, outs, refs)
    if k is None:
        return outs
    d = _report(name, graph, g, backend, saved, list(scalars), k, why)
    _reports.append((name, d))
    if writes:
        for x, y in zip(inputs, eager_in):
            if isinstance(x, _core.ndarray) and x is not y:
                x[...] = y
    return refs


def _subgraph(graph, g, backend, ids):
    from ._api import _PyBackendGraph
    from ._state import _backends
    if backend in _backends:
        sub = g.subgraph(ids, "eager")
        return _PyBackendGraph(sub, _backends[backend](sub))
    return g.subgraph(ids, backend)


def _fails(graph, g, backend, ids, inputs, scalars):
    try:
        sub = _subgraph(graph, g, backend, ids)
        sg = _graph_of(sub)
        outs = sub([_from_numpy(x.copy()) for x in inputs], scalars)
        refs = sg.run_eager([_from_numpy(x.copy()) for x in inputs], scalars)
        return _compare(sg, outs, refs)[0] is not None
    except Exception as e:  # a candidate the backend cannot build is not a failing one
        _logs.log("output_code", "accuracy bisection: candidate %s failed to run: %s", ids, e)
        return False


def _from_numpy(x):
    from .._array import _from_numpy as f
    return f(x)


_SKIP = ("input", "scalar", "const", "symval")


def _bisect(graph, g, backend, out_id, inputs, scalars):
    """Node ids of the smallest failing subgraph for output `out_id`.

    Candidates are the nodes the output depends on, in topological order. The subgraph
    whose outputs are the first i candidates fails for every i past the first failing
    node (a prefix holds all earlier results), so a binary search over prefixes finds the
    first candidate whose result is wrong; its own subgraph is the report. When no prefix
    short of the whole cone fails alone, the whole graph is reported (None)."""
    table = g.nodes()
    cand = [n for n in _cone(table, out_id) if not table[n][1].startswith(_SKIP)]
    if not cand or not _fails(graph, g, backend, cand, inputs, scalars):
        return None  # fails only together with the rest of the graph: report it whole
    lo, hi = 0, len(cand) - 1  # the prefix cand[:hi + 1] fails
    while lo < hi:
        mid = (lo + hi) // 2
        if _fails(graph, g, backend, cand[:mid + 1], inputs, scalars):
            hi = mid
        else:
            lo = mid + 1
    if _fails(graph, g, backend, [cand[hi]], inputs, scalars):
        return [cand[hi]]
    return cand[:hi + 1]


def _debug_root():
    return os.environ.get("NPC_COMPILE_DEBUG_DIR", os.path.join(os.getcwd(), "npc_debug"))


def _report(name, graph, g, backend, inputs, scalars, k, why):
    out_id = g.output_ids[k]
    warnings.warn(f"npc.compile accuracy check (NPC_REPRO=accuracy): {name}: graph output {k} (%{out_id}) "
                  f"of the {backend!r} backend differs from the eager backend: {why}; bisecting and "
                  f"returning the eager result", RuntimeWarning, stacklevel=4)
    nid = _bisect(graph, g, backend, out_id, inputs, scalars)
    ids = nid if nid is not None else list(g.output_ids)
    sub = g.subgraph(ids, "eager")
    base = re.sub(r"[^A-Za-z0-9_.]", "", name) or "graph"
    root = _debug_root()
    i = 0
    while os.path.exists(os.path.join(root, f"{base}_repro_{i}")):
        i += 1
    d = os.path.join(root, f"{base}_repro_{i}")
    os.makedirs(d)
    used = sorted({int(m) for m in re.findall(r"input\[(\d+)\]", str(sub))})
    for j in used:
        _np.save(os.path.join(d, f"input{j}.npy"), inputs[j])
    with open(os.path.join(d, "graph.txt"), "w") as f:
        f.write(str(g))
    with open(os.path.join(d, "subgraph.txt"), "w") as f:
        f.write(str(sub))
    with open(os.path.join(d, "repro.py"), "w") as f:
        f.write(_script(name, backend, str(sub), used, scalars, why))
    warnings.warn(f"npc.compile accuracy check: {name}: smallest failing subgraph ends at "
                  f"{', '.join('%' + str(i) for i in ids) if nid is not None else 'the whole graph'} "
                  f"({len(sub.nodes())} nodes); reproduction script: {os.path.join(d, 'repro.py')}",
                  RuntimeWarning, stacklevel=4)
    return d


# ---------------------------------------------------------------- reproduction script
_LINE = re.compile(r"^%(\d+) = (\S+?)(?:\((.*?)\))?(?: \[(.*?)\])?(?: initial=(\S+))? : (\w+)\((.*)\)$")
# The NumPy function of each reduction: the op table's reduction rows, keyed by their ufunc.
_REDUCE_PY = {row.loops: row.name for row in _core.op_table() if row.kind == 1}


def _shape_expr(text, symbols):
    parts = [p.strip() for p in text.split(",") if p.strip()]
    return "(" + "".join(f"{symbols.get(p, p)}, " for p in parts) + ")"


def _program(sub_text):
    """Python source of `def program(xp, inputs, scalars)`: the subgraph written with
    NumPy's API (xp = numpy or npc)."""
    lines = ["def program(xp, inputs, scalars):"]
    symbols = {}
    ret = None
    for raw in sub_text.splitlines():
        m = re.match(r"# s(\d+) = input\[(\d+)\]\.shape\[(\d+)\]", raw)
        if m:
            symbols["s" + m.group(1)] = f"inputs[{m.group(2)}].shape[{m.group(3)}]"
            continue
        if raw.startswith("return"):
            ret = [r.strip().lstrip("%") for r in raw[len("return"):].split(",")]
            continue
        mc = re.match(r"^%(\d+) = const (.*) : (\w+)\(\)$", raw)
        if mc:
            lines.append(f"    v{mc.group(1)} = xp.asarray({mc.group(2)}, dtype=xp.{mc.group(3)})")
            continue
        m = _LINE.match(raw)
        if not m:
            raise NotImplementedError(raw)
        nid, what, args, params, initial, dtype, shape = m.groups()
        a = [f"v{x.strip().lstrip('%')}" for x in args.split(",")] if args else []
        p = [int(x) for x in params.split(",")] if params else []
        sh = _shape_expr(shape, symbols)
        dt = f"xp.{dtype}"
        if what.startswith("input["):
            e = f"xp.asarray(inputs[{what[6:-1]}])"
        elif what.startswith("scalar["):
            e = f"scalars[{what[7:-1]}]"
        elif what.startswith("symval[s"):
            e = f"xp.asarray({symbols[what[7:-1]]}, dtype=xp.int64)"
        elif what == "cast":
            e = f"xp.asarray({a[0]}).astype({dt})"
        elif what.startswith("reduce."):
            op = what[7:]
            axes = tuple(p[1:])
            extra = f", initial={initial}" if initial else ""
            fn = _REDUCE_PY.get(op)
            if fn is None:
                raise NotImplementedError(raw)
            e = f"xp.{fn}({a[0]}, axis={axes!r}, keepdims={bool(p[0])}{extra})"
            if fn in ("sum", "prod"):
                e = e[:-1] + f", dtype={dt})"
        elif what == "view.slice":
            sl = ", ".join(f"xp_slice({p[2 * i]}, {p[2 * i + 1]}, sh[{i}])" for i in range(len(p) // 2))
            lines.append(f"    sh = {sh}")
            e = f"{a[0]}[({sl}{',' if len(p) == 2 else ''})]"
        elif what == "view.permute":
            e = f"xp.transpose({a[0]}, {tuple(p)!r})"
        elif what == "view.broadcast":
            e = f"xp.broadcast_to({a[0]}, {sh})"
        elif what == "view.reshape":
            e = f"xp.reshape({a[0]}, {sh})"
        elif what == "view.strided":
            e = f"xp.take(xp.reshape({a[0]}, (-1,)), xp.asarray(strided_index({p[0]}, {tuple(p[1:])!r}, {sh})))"
        elif what == "view.component":
            e = f"{a[0]}.{'imag' if p and p[-1] else 'real'}"
        elif what == "gather":
            e = f"xp.take({a[0]}, {a[1]}, axis={p[0]})"
        elif what in ("where", "matmul"):
            e = f"xp.{what}({', '.join(a)})"
        elif what in ("argmax", "argmin", "cumsum", "cumprod") and len(p) == 1:
            e = f"xp.{what}({a[0]}, axis={p[0]})"
        elif re.fullmatch(r"[a-z_0-9]+(#\d+)?", what) and "." not in what:
            op, _, out = what.partition("#")
            e = f"xp.{op}({', '.join(a)})" + (f"[{out}]" if out else "")
        else:
            raise NotImplementedError(raw)
        lines.append(f"    v{nid} = {e}")
    lines.append("    return [" + ", ".join(f"v{r}" for r in ret) + "]")
    return "\n".join(lines) + "\n"


def _script(name, backend, sub_text, used, scalars, why):
    try:
        program = _program(sub_text)
    except NotImplementedError as e:
        # A node the script writer cannot express with NumPy's API: the script still runs
        # and says so (the subgraph is in subgraph.txt).
        program = (f"def program(xp, inputs, scalars):\n"
                   f"    raise NotImplementedError({('no NumPy spelling for IR node: ' + str(e))!r})\n")
    loads = "\n".join(f"inputs[{j}] = numpy.load(os.path.join(HERE, 'input{j}.npy'))" for j in used)
    n = max(used) + 1 if used else 0
    return f'''"""Reproduction of an npc accuracy-check mismatch (NPC_REPRO=accuracy).

Function: {name}; backend: {backend!r}.
Mismatch seen: {why}
The smallest failing subgraph (subgraph.txt) is rebuilt below with NumPy's API and run
through npc.compile (backend {backend!r}) and NumPy; the script prints the difference.
"""
import os
import sys

import numpy

import npc

HERE = os.path.dirname(os.path.abspath(__file__))
SUBGRAPH = """
{sub_text}"""


def xp_slice(start, step, n):
    stop = start + n * step
    return slice(start, None if stop < 0 else stop, step)


def strided_index(offset, strides, shape):
    """Flat source indices of an as_strided view (IR view kind "strided")."""
    idx = numpy.full(shape, offset, dtype=numpy.int64)
    for d, (st, n) in enumerate(zip(strides, shape)):
        idx += (numpy.arange(n, dtype=numpy.int64) * st).reshape((n,) + (1,) * (len(shape) - d - 1))
    return idx


{program}

inputs = [None] * {n}
{loads}
scalars = {list(scalars)!r}


def main():
    expected = program(numpy, inputs, scalars)
    # A backend registered only in the reporting process (npc.compiler.register_backend)
    # is not available here: the fused backend runs instead.
    backend = {backend!r} if {backend!r} in ("fused", "eager") else "fused"
    with npc.config.patch(repro=None):
        got = npc.compile(lambda *ins: program(npc, list(ins), scalars), backend=backend)(*inputs)
    print("subgraph:", SUBGRAPH)
    for k, (e, g) in enumerate(zip(expected, got)):
        e, g = numpy.asarray(e), numpy.asarray(g)
        print(f"output {{k}}: numpy", e.dtype, e.shape, "npc", g.dtype, g.shape)
        if e.shape != g.shape:
            print("  shapes differ")
            continue
        with numpy.errstate(all="ignore"):
            diff = numpy.abs(e.astype(numpy.complex128) - g.astype(numpy.complex128))
        print("  max abs difference:", numpy.nanmax(diff) if diff.size else 0.0)
        bad = ~((e == g) | ((e != e) & (g != g)))
        print("  elements that differ:", int(bad.sum()), "of", bad.size)
        if e.dtype.kind == "f" and bad.any():
            with numpy.errstate(all="ignore"):
                ulps = diff.real / numpy.spacing(numpy.abs(e).astype(e.dtype))
            print("  max difference in ULPs of NumPy's result:", numpy.nanmax(ulps[bad]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''
