"""Shrinking a failing program to a minimal one, and writing it as a regression test.

Delta debugging (ddmin) over the statements, then one-at-a-time simplifications: fewer
returned values, unused parameters dropped, fewer calls, smaller dimensions, plain
layouts, simpler argument values and scalars; repeated while anything shrinks. A
candidate is kept when it still shows the same signature (fuzzrun.signature: mode, kind
of difference, exception types). Every candidate runs in a worker process, so a crash
while shrinking is a result, never the end of the fuzzer."""
import copy
import hashlib
import os
import re
import time

import numpy

import fuzzexec
import fuzzgen
import fuzzrun

FOUND_DIR = os.path.join(fuzzrun.HERE, "found")


class Shrinker:
    def __init__(self, worker, finding, deadline):
        self.worker = worker
        self.sig = fuzzrun.signature(finding)
        self.mode = finding["mode"] if finding["mode"] in fuzzexec.MODES else None
        self.deadline = deadline
        self.tries = 0
        self.last = finding

    def fails(self, prog):
        if time.time() > self.deadline:
            return False
        self.tries += 1
        modes = [self.mode] if self.mode else None
        found, _, err = fuzzrun.run_job(self.worker, {"prog": prog, "modes": modes}, confirm=False)
        for f in found:
            if fuzzrun.signature(f) == self.sig:
                self.last = f
                return True
        return False

    def ddmin(self, prog, key):
        items = prog[key]
        n = 2
        while len(items) >= 2 and time.time() < self.deadline:
            chunk = max(1, len(items) // n)
            reduced = False
            for start in range(0, len(items), chunk):
                cand_items = items[:start] + items[start + chunk:]
                cand = dict(prog, **{key: cand_items})
                if cand_items != items and self.fails(cand):
                    items, prog, reduced = cand_items, cand, True
                    n = max(n - 1, 2)
                    break
            if not reduced:
                if chunk == 1:
                    break
                n = min(len(items), n * 2)
        if len(items) == 1:
            cand = dict(prog, **{key: []})
            if self.fails(cand):
                prog = cand
        return prog

    def candidates(self, prog):
        """Simpler variants of `prog`, one change each."""
        for k, st in enumerate(prog["stmts"]):
            m = re.match(r"^(\w+) = ([avst]\d+)$", st)
            if m:  # an alias: inline it
                sub = re.compile(rf"\b{m.group(1)}\b")
                later = [sub.sub(m.group(2), t) for t in prog["stmts"][k + 1:]]
                yield dict(prog, stmts=prog["stmts"][:k] + later, ret=[sub.sub(m.group(2), r) for r in prog["ret"]])
            for simpler in _simpler_statements(st):
                yield dict(prog, stmts=prog["stmts"][:k] + [simpler] + prog["stmts"][k + 1:])
        if len(prog["ret"]) > 1:
            for name in prog["ret"]:
                yield dict(prog, ret=[name])
        if prog["ret"]:
            yield dict(prog, ret=[])
        names = [f"a{k}" for k in range(len(prog["args"]))] + [f"s{k}" for k in range(len(prog["scalars"]))]
        if sorted(prog.get("dropped", [])) != sorted(names):
            yield dict(prog, dropped=names)
        for k in range(len(prog["calls"])):
            if len(prog["calls"]) > 1:
                yield dict(prog, calls=prog["calls"][:k] + prog["calls"][k + 1:])
        for i, n in enumerate(prog["dims"]):
            for smaller in (1, 2, 3):
                if smaller < n:
                    dims = list(prog["dims"])
                    dims[i] = smaller
                    yield dict(prog, dims=dims)
        for k, a in enumerate(prog["args"]):
            for field, simpler in (("layout", "C"), ("fill", "plain"), ("fill", "small"), ("fill", "ones")):
                if a[field] != simpler and not (field == "fill" and FILL_ORDER[a["fill"]] >= FILL_ORDER[simpler]):
                    args = copy.deepcopy(prog["args"])
                    args[k][field] = simpler
                    yield dict(prog, args=args)
            for j, d in enumerate(a["shape"]):
                if d != 1:
                    args = copy.deepcopy(prog["args"])
                    args[k]["shape"][j] = 1
                    yield dict(prog, args=args)
            if len(a["shape"]):
                args = copy.deepcopy(prog["args"])
                args[k]["shape"] = a["shape"][1:]
                yield dict(prog, args=args)
        for k, s in enumerate(prog["scalars"]):
            simple = {"int": 1, "float": 0.5, "bool": True}[s["kind"]]
            if len(set(map(repr, s["values"]))) > 1 or repr(s["values"][0]) != repr(simple):
                scalars = copy.deepcopy(prog["scalars"])
                scalars[k]["values"] = [s["values"][0]] * len(s["values"])
                if scalars != prog["scalars"]:
                    yield dict(prog, scalars=scalars)
                scalars = copy.deepcopy(prog["scalars"])
                scalars[k]["values"] = [simple] * len(s["values"])
                yield dict(prog, scalars=scalars)

    def shrink(self, prog):
        prog = copy.deepcopy(prog)
        for _ in range(4):
            before = repr(prog)
            prog = self.ddmin(prog, "stmts")
            changed = True
            while changed and time.time() < self.deadline:
                changed = False
                seen = repr(prog)
                for cand in self.candidates(prog):
                    if repr(cand) != seen and self.fails(cand):
                        prog, changed = cand, True
                        break
            if repr(prog) == before or time.time() > self.deadline:
                break
        return prog


_NAME = re.compile(r"\b[avst]\d+\b")


def _simpler_statements(st):
    """`if c:` statements as their branches or as the bare condition; `v = expr` as `v`
    bound to one of the names `expr` reads."""
    lines = st.split("\n")
    if lines[0].startswith("if "):
        body = [ln.strip() for ln in lines[1:] if ln.startswith("    ")]
        yield from body
        yield f"bool({lines[0][3:-1]})"
        return
    m = re.match(r"^(\w+) = (.+)$", st)
    if m and len(lines) == 1:
        for name in dict.fromkeys(_NAME.findall(m.group(2))):
            if name != m.group(1) and name != m.group(2):
                yield f"{m.group(1)} = {name}"


FILL_ORDER = {"special": 0, "plain": 1, "small": 2, "ones": 3}


def shrink(worker, prog, finding, seconds=120.0):
    """(shrunk program, its finding, candidates tried)."""
    s = Shrinker(worker, finding, time.time() + seconds)
    small = s.shrink(prog)
    return small, s.last, s.tries


# ---------------------------------------------------------------------------------------
# Reproducers


def _lit(v):
    if isinstance(v, (bool, numpy.bool_)):
        return repr(bool(v))
    if isinstance(v, (int, numpy.integer)):
        return repr(int(v))
    if isinstance(v, (float, numpy.floating)):
        return repr(float(v))
    if isinstance(v, (complex, numpy.complexfloating)):
        return f"complex({float(v.real)!r}, {float(v.imag)!r})"
    raise TypeError(type(v))


def _input_literal(x):
    if x[0] == "s":
        return f"('s', {_lit(x[1])})"  # a Python scalar input, as fuzzgen.call_inputs makes it
    a = numpy.asarray(x[1])
    vals = ", ".join(_lit(v) for v in a.ravel().tolist()) if a.size else ""
    return f"arr([{vals}], {a.dtype.name!r}, {tuple(a.shape)!r}, {x[2]!r})"


def reproducer(prog, finding):
    """(file name, text) of the standalone regression test of a shrunk program."""
    src, calls, ulps = fuzzexec.program_case(prog)
    params = fuzzgen.used_params(prog)
    call_lines = []
    for k, c in enumerate(calls):
        name = fuzzgen.CALL_NAMES[fuzzgen.CALL_PLAN.index(tuple(prog["calls"][k]))]
        call_lines.append(f"    [{', '.join(_input_literal(x) for x in c)}],  # input set of the '{name}' call")
    body = "\n".join(call_lines)
    digest = hashlib.sha1((src + body + finding["mode"]).encode()).hexdigest()[:10]
    mode = finding["mode"]
    modes = [mode] if mode in fuzzexec.MODES else list(fuzzexec.CHECKED)
    where = f"{finding['call']} (index into CALLS)" if finding["call"] >= 0 else "- (the process died)"
    text = f'''"""Fuzzer finding {digest} (tests/fuzz, docs/fuzzing.md).

mode: {mode} ({fuzzexec.MODES[mode].doc if mode in fuzzexec.MODES else "unknown"})
call: {where}
kind: {finding["kind"]}
{finding["text"][:1500]}

Program (parameters: {", ".join(params) or "none"}), called once per input set below:

{src}"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fuzzexec import arr, assert_same_as_numpy  # noqa: E402

nan, inf = float("nan"), float("inf")

SOURCE = """\\
{src}"""

# One list of inputs per call of the compiled function (each made afresh for every mode).
CALLS = [
{body}
]

# ULP budgets of the returned values and of the array arguments (0: compared exactly).
ULPS = {ulps!r}


def test_fuzz_{digest}():
    assert_same_as_numpy(SOURCE, CALLS, ULPS, modes={modes!r})
'''
    return f"repro_{digest}.py", text


def write_reproducer(prog, finding, directory=FOUND_DIR):
    name, text = reproducer(prog, finding)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(text)
    return path
