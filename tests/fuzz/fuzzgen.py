"""Random well-typed NumPy programs for the differential fuzzer (docs/fuzzing.md).

A program is plain data (a dict that survives JSON, so it can be sent to a worker process
and shrunk):

``dims``
    base sizes of the symbolic dimensions ``n0, n1, ...`` that argument shapes refer to;
``args``
    array arguments ``a0, a1, ...``: dtype, shape (``"n<k>"`` or a literal 0/1), layout
    (``C``, ``F``, ``rev``, ``step``, ``perm``), fill (``special``, ``plain``, ``small``,
    ``ones``) and a value seed;
``scalars``
    Python scalar arguments ``s0, s1, ...``: one value per input set;
``stmts``
    the statements of the body, one string each (a statement may span lines);
``ret``
    the names returned (as a tuple);
``calls``
    the input sets of the calls made to one compiled function: ``(grow, vseed)`` where
    ``grow`` is added to every symbolic dimension of size >= 2 and ``vseed`` picks the
    values.

The generator is statement-at-a-time: each candidate statement is executed with NumPy on
the first input set to learn the dtypes and shapes of the new values (so later
statements are well typed), and kept or drawn again. Every value carries a *ULP budget*:
0 for values that NumPy specifies exactly (integers, bools, correctly rounded float
operations), else the sum of the bounds of the inexact operations it depends on
(tests/numpy_conformance/ulp_tolerances.csv). Masks, conditions and branches are only
built from exact values, so that data-dependent shapes and control flow are defined by
NumPy's semantics and not by the last bit of a transcendental function.
"""
import csv
import pathlib
import random
import re
import warnings

import numpy as np

from npc import _core

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
LAYOUTS = ["C", "F", "rev", "step", "perm"]
FILLS = ["special", "plain", "small", "ones"]
# The calls made to each compiled function: trace, replay, new values, two new sizes.
CALL_PLAN = [(0, 0), (0, 0), (0, 1), (1, 2), (2, 3)]
CALL_NAMES = ["trace", "replay", "new values", "new size +1", "new size +2"]

_CSV = pathlib.Path(__file__).resolve().parents[1] / "numpy_conformance" / "ulp_tolerances.csv"


def _ulp_table():
    rows = [line for line in _CSV.read_text().splitlines() if line and not line.startswith("#")]
    table = {}
    for r in csv.DictReader(rows):
        table[r["op"]] = max(table.get(r["op"], 0), int(r["ulp"]))
    return table


ULP = _ulp_table()
# Accumulating operations not in the table: their float results depend on the order of
# the sums (bounded like `sum`).
ULP_ACCUMULATING = {"cumsum": ULP.get("sum", 4), "cumprod": ULP.get("prod", 4), "matmul": ULP.get("sum", 4),
                    "dot": ULP.get("sum", 4), "average": ULP.get("mean", 4), "nanmax": 0, "nanmin": 0}


# Note [unspecified casts]: NaN, infinities and out-of-range floats cast to an integer type
# are undefined behaviour in C; NumPy's values (and its "invalid value encountered in cast"
# warning) then depend on the CPU and the loop it picks. A value made by such a cast gets
# the budget UNSPECIFIED (its values are not compared, nor the values computed from it), and
# a program with such casts does not compare that warning.
UNSPECIFIED = 10 ** 9

# Note [power of zero to -inf]: NumPy's float power loop is SVML's pow on CPUs with AVX-512
# (it raises "divide by zero" for 0 ** -inf) and the C library's elsewhere (glibc raises
# nothing for it, nor do npc's loops): that warning is NumPy's only on some CPUs. In a program
# with a power (`**`, np.power, np.float_power), NumPy's warnings may hold "divide by zero
# encountered in power" entries that npc's lack (fuzzexec.compare); nothing else is excused.
POWER = re.compile(r"\*\*|\bnp\.(float_)?power\(")
POWER_ZERO_DIVIDE = {"divide by zero encountered in power", "divide by zero encountered in scalar power"}

# Note [signs of zero ties]: which zero fmax, fmin, maximum and minimum return for a tie of
# +0.0 and -0.0 (and the max/min reductions) depends on NumPy's loop: its SIMD and scalar
# loops pick different operands, so the sign of such a zero is left to the platform. A
# float value made by one of them, and every value computed from it (the generator tracks
# the operands a statement names: `_Var.zs`), has its zeros compared without their signs:
# its budget in prog["ulps"] carries the flag ZERO_SIGN on top of its ULP budget. A
# statement that turns the sign of a zero into another value (a division, copysign,
# signbit, arctan2, a power) makes its result UNSPECIFIED when an operand has the flag.
ZERO_SIGN = 2 ** 20
_TIE_OPS = re.compile(r"\b(fmax|fmin|maximum|minimum|amax|amin|nanmax|nanmin|ptp)\(|\.(max|min)\(")
_SIGN_SENSITIVE = re.compile(r"/|%|\*\*|\b(reciprocal|arctan2|copysign|signbit|power|float_power|divide|true_divide|"
                             r"floor_divide|remainder|fmod|angle|heaviside|sign)\b")


def zero_sign_state(text, value, inherited):
    """The zero-sign state of a statement's result (Note [signs of zero ties]): 0 none, 1
    its zeros' signs are unspecified, 2 its values are (`inherited`: the operands' state)."""
    if inherited and _SIGN_SENSITIVE.search(text):
        return 2
    if _TIE_OPS.search(text) and np.asarray(value).dtype.kind in "fc":
        return max(inherited, 1)
    return inherited


# Note [budgets in a narrower precision]: a budget counts ULPs of the precision its inexact
# operations ran in. A float32 cbrt off by one float32 ULP makes a float64 quotient computed
# from it differ by about 2**29 float64 ULPs: such a value (its own precision wider than the
# narrowest one among the budgeted values it is computed from) is compared in that narrower
# precision (prog["prec"]: its name -> "float16" or "float32"), both sides rounded to it, with
# one ULP more for that rounding.
_PRECISIONS = ["float16", "float32", "float64"]


def precision(value):
    """0, 1, 2 for float16, float32, float64 values (complex by their parts), else None."""
    dt = np.asarray(value).dtype
    if dt.kind == "c":
        return 1 if dt == np.complex64 else 2
    if dt.kind == "f":
        return {2: 0, 4: 1, 8: 2}.get(dt.itemsize)
    return None


def op_ulps(name):
    return ULP.get(name, ULP_ACCUMULATING.get(name, 0))


# Note [ill-conditioned functions]
# Budgets add up: a value computed from operands with budgets gets their sum plus the op's own
# bound, which holds for operations whose relative condition number is about 1 or less
# (multiply, divide, sqrt, tanh...). Elsewhere an ULP of the operand becomes many ULPs of the
# result: sin(x) near a multiple of pi or for large x (sin(expm1(4)) differs by 250 float32
# ULPs when expm1 differs by one, and NumPy's own float32 expm1 is SVML's or the C library's
# depending on the CPU), exp(x) by |x| ULPs, log near 1, arcsin near 1, powers; and functions
# that jump (floor, remainder, floor division) can turn an ULP into a whole unit. A value that
# such a function computes from an operand with a budget has no meaningful bound: its budget
# is UNSPECIFIED (not compared, nor what is computed from it). Its exact operands keep exact
# comparisons.
ILL_CONDITIONED = {
    "sin", "cos", "tan", "exp", "exp2", "expm1", "power", "float_power", "**", "sinh", "cosh",
    "log", "log2", "log10", "log1p", "arcsin", "arccos", "arctanh", "arccosh", "arctan2",
    "floor", "ceil", "trunc", "rint", "fix", "round", "around", "floor_divide", "//", "remainder",
    "mod", "%", "fmod", "divmod", "modf", "frexp", "spacing", "nextafter", "logaddexp", "logaddexp2",
}


def chained_ulps(operand_ulps, name):
    """The budget of `name` applied to operands whose budgets sum to `operand_ulps` (Note
    [ill-conditioned functions])."""
    if operand_ulps and name in ILL_CONDITIONED:
        return UNSPECIFIED
    return operand_ulps + op_ulps(name)


# ---------------------------------------------------------------------------------------
# Values of the arguments


def special_values(dtype):
    """The edge values of a dtype: extremes, signed zeros, non-finite, subnormal."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return [True, False]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [info.min, info.max, 0, 1, info.max - 1]
        if dt.kind == "i":
            vals += [-1, info.min + 1]
        return vals
    real = np.finfo(dt if dt.kind == "f" else np.dtype(dt.char.lower()))
    fl = [np.nan, np.inf, -np.inf, -0.0, 0.0, float(real.max), -float(real.max), float(real.tiny),
          float(real.smallest_subnormal), -float(real.smallest_subnormal), 1.0, -1.5]
    if dt.kind == "f":
        return fl
    return [complex(a, b) for a in fl for b in (0.0, -0.0, 1.0, np.nan, np.inf)]


def fill_values(dtype, n, fill, rng):
    """n values of `dtype` (a flat NumPy array)."""
    dt = np.dtype(dtype)
    if fill == "ones":
        return np.ones(n, dt)
    if fill == "small":
        return rng.integers(0, 3, size=n).astype(dt)
    if dt.kind == "b":
        x = rng.integers(0, 2, size=n).astype(bool)
    elif dt.kind == "u":
        x = rng.integers(0, 7, size=n).astype(dt)
    elif dt.kind == "i":
        x = rng.integers(-6, 7, size=n).astype(dt)
    elif dt.kind == "f":
        x = (rng.integers(-12, 13, size=n) / 4).astype(dt)
    else:
        x = ((rng.integers(-8, 9, size=n) + 1j * rng.integers(-8, 9, size=n)) / 2).astype(dt)
    if fill == "special" and n:
        sp = special_values(dt)
        pick = rng.random(n) < 0.35
        for i in np.flatnonzero(pick):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                x[i] = sp[rng.integers(0, len(sp))]
    return x


def concrete_shape(shape, dims, grow):
    out = []
    for d in shape:
        if isinstance(d, str):
            n = dims[int(d[1:])]
            out.append(n + grow if n >= 2 else n)
        else:
            out.append(d)
    return tuple(out)


def arg_values(prog, k, call):
    """The values of array argument `k` for input set `call` = (grow, vseed): a C-ordered
    NumPy array (its layout is applied by `layout_view`)."""
    spec = prog["args"][k]
    grow, vseed = call
    shape = concrete_shape(spec["shape"], prog["dims"], grow)
    rng = np.random.default_rng([spec["seed"], vseed, grow])
    n = int(np.prod(shape, dtype=np.int64))
    return fill_values(spec["dtype"], n, spec["fill"], rng).reshape(shape)


def layout_view(values, layout, xp):
    """An array of module `xp` (numpy or npc) holding `values` in the given memory layout:
    ``C`` contiguous, ``F`` Fortran order, ``rev`` reversed along axis 0 (negative
    stride), ``step`` every other element of a buffer along the last axis, ``perm`` a
    permutation of the axes of a contiguous buffer."""
    v = np.asarray(values)
    if v.ndim == 0 or layout == "C":
        return xp.array(v.copy())
    if layout == "F":
        return xp.array(np.ascontiguousarray(v.T)).T
    if layout == "rev":
        return xp.array(np.ascontiguousarray(v[::-1]))[::-1]
    if layout == "step":
        buf = np.repeat(v, 2, axis=-1)
        if buf.size:
            buf[..., 1::2] = v[..., :1] if v.shape[-1] else buf[..., 1::2]
        return xp.array(buf)[..., ::2]
    if layout == "perm":
        axes = list(range(v.ndim))
        axes = axes[1:] + axes[:1]
        inv = np.argsort(axes)
        return xp.transpose(xp.array(np.ascontiguousarray(np.transpose(v, axes))), tuple(int(i) for i in inv))
    raise ValueError(layout)


def call_inputs(prog, call):
    """The concrete inputs of one call, as data: ("a", values, layout) or ("s", value), one
    per parameter of `source(prog)`."""
    used = set(used_params(prog))
    out = []
    for k, spec in enumerate(prog["args"]):
        if f"a{k}" in used:
            out.append(("a", arg_values(prog, k, call), spec["layout"]))
    ci = CALL_PLAN.index(tuple(call)) if tuple(call) in CALL_PLAN else 0
    for k, sc in enumerate(prog["scalars"]):
        if f"s{k}" in used:
            vals = sc["values"]
            out.append(("s", vals[min(ci, len(vals) - 1)]))
    return out


# ---------------------------------------------------------------------------------------
# Statements

# The elementwise ufuncs come from the op table (include/npc/ops.def): every one-output ufunc row
# of one or two inputs; `real` and `imag` are NumPy functions, not ufuncs. Order is the table's,
# so a seed names the same program on every machine.
_UFUNCS = [r for r in _core.op_table() if r.kind == 0 and r.nout == 1]
UNARY = [r.name for r in _UFUNCS if r.nin == 1] + ["real", "imag"]
BINARY_OPS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>", "<", "<=", "==", "!=", ">", ">="]
BINARY_FUNCS = [r.name for r in _UFUNCS if r.nin == 2]
_OP_NAME = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "floor_divide", "%": "remainder",
            "**": "power"}
REDUCTIONS = ["sum", "prod", "min", "max", "mean", "any", "all", "std", "var", "argmax", "argmin"]
NP_REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "nansum", "nanmax", "nanmin", "count_nonzero", "ptp",
                 "average", "cumsum", "cumprod", "median"]
INT_LITERALS = [-1, 0, 1, 2, 3, 7, 127, 128, 255, 256, -129, 1000, 2 ** 31, 2 ** 32, 2 ** 63 - 1, -2 ** 63,
                2 ** 64 - 1, 300, -300]
FLOAT_LITERALS = ["0.5", "-0.0", "2.5", "1e-300", "1e300", "float('nan')", "float('inf')", "-3.0", "0.1", "1e-40"]


class _Var:
    __slots__ = ("name", "value", "ulps", "kind", "zs", "prec")

    def __init__(self, name, value, ulps, kind, zs=0, prec=None):
        self.name, self.value, self.ulps, self.kind, self.zs = name, value, ulps, kind, zs
        self.prec = prec  # Note [budgets in a narrower precision]


def _is_array(v):
    return isinstance(v, np.ndarray)


def _arrayish(v):
    return isinstance(v, (np.ndarray, np.generic))


class Generator:
    """Builds one program from a seed (deterministic: the same program on every machine)."""

    def __init__(self, seed, max_stmts=None):
        self.seed = seed
        self.r = random.Random(seed)
        self.max_stmts = max_stmts if max_stmts is not None else self.r.randint(2, 9)
        self.stmts = []
        self.vars = {}
        self.counter = 0
        self.unspecified_cast = False

    # -- arguments ------------------------------------------------------------------------
    def _make_args(self):
        r = self.r
        dims = [r.choice([1, 2, 2, 3, 3, 4, 5]) for _ in range(3)]
        nargs = r.choice([1, 1, 2, 2, 3])
        ndim0 = r.choice([0, 1, 1, 2, 2, 2, 3])
        base = [f"n{i}" for i in range(ndim0)]
        if ndim0 and r.random() < 0.1:
            base[r.randrange(ndim0)] = 0  # empty
        args = []
        for k in range(nargs):
            if k == 0 or r.random() < 0.5:
                shape = list(base)
            else:  # broadcast-compatible with a0: a suffix, with some dims set to 1
                start = r.randint(0, len(base))
                shape = [d if r.random() < 0.75 else 1 for d in base[start:]]
            dtype = r.choice(DTYPES) if (k == 0 or r.random() < 0.5) else args[0]["dtype"]
            layout = r.choice(LAYOUTS) if r.random() < 0.6 else "C"
            fill = "special" if r.random() < 0.35 else "plain"
            args.append({"dtype": dtype, "shape": shape, "layout": layout, "fill": fill, "seed": r.randrange(2 ** 31)})
        scalars = []
        for _ in range(r.choice([0, 0, 1, 1, 2])):
            kind = r.choice(["int", "float", "float", "bool"])
            if kind == "int":
                vals = [r.choice([-2, -1, 0, 1, 3, 5, 200, 300, -129, 2 ** 40])]
                vals += [vals[0], r.choice([1, 2, -3]), vals[0], vals[0]]
            elif kind == "float":
                vals = [r.choice([0.25, 1.5, -2.0, 0.0, -0.0, 1e-320, 3e38, float("nan"), float("inf"), 0.1])]
                vals += [vals[0], r.choice([0.75, -1.25, 2.0]), vals[0], vals[0]]
            else:
                vals = [r.choice([True, False])] * 3 + [True, False]
            scalars.append({"kind": kind, "values": vals})
        return dims, args, scalars

    # -- helpers --------------------------------------------------------------------------
    def _new(self):
        self.counter += 1
        return f"v{self.counter}"

    def _arrays(self, pred=None, exact=False):
        out = [v for v in self.vars.values() if _arrayish(v.value) and (pred is None or pred(v.value))
               and (not exact or v.ulps == 0)]
        return out

    def _pick(self, pred=None, exact=False, ndarray=False):
        cands = self._arrays(lambda x: (not ndarray or _is_array(x)) and (pred is None or pred(x)), exact)
        if not cands:
            return None
        # Prefer recent values, so that statements build on each other.
        return cands[-1] if self.r.random() < 0.4 else self.r.choice(cands)

    def _scalar_expr(self, like=None):
        """A Python scalar operand: a scalar argument, or a literal (NEP 50 weak scalars,
        out-of-range ints included)."""
        r = self.r
        svars = [v for v in self.vars.values() if v.kind == "scalar"]
        if svars and r.random() < 0.5:
            v = r.choice(svars)
            return v.name, v.ulps
        kind = r.choice(["int", "int", "float", "bool", "complex"]) if like is None else like
        if kind == "int":
            return str(r.choice(INT_LITERALS)), 0
        if kind == "float":
            return r.choice(FLOAT_LITERALS), 0
        if kind == "bool":
            return r.choice(["True", "False"]), 0
        return r.choice(["1j", "(2-1j)", "complex(0.5, float('nan'))"]), 0

    def _operand(self, like):
        """A second operand broadcast-compatible with array `like`."""
        r = self.r
        p = r.random()
        if p < 0.35:
            return self._scalar_expr()
        shape = np.shape(like.value)
        cands = self._arrays(lambda x: _broadcastable(np.shape(x), shape))
        if not cands:
            return self._scalar_expr()
        v = r.choice(cands)
        return v.name, v.ulps

    def _axis(self, x):
        nd = np.ndim(x)
        r = self.r
        if nd == 0 or r.random() < 0.3:
            return None
        if nd >= 2 and r.random() < 0.2:
            return tuple(sorted(r.sample(range(-nd, 0), 2)))
        return r.randrange(-nd, nd)

    def _slice(self, x):
        r = self.r
        nd = np.ndim(x)
        parts = []
        for _ in range(nd if nd <= 1 or r.random() < 0.7 else r.randint(1, nd)):
            c = r.random()
            if c < 0.25:
                parts.append(":")
            elif c < 0.45:
                parts.append("::-1")
            elif c < 0.6:
                parts.append(r.choice(["1:", ":-1", "::2", "1::2", "::-2", "-2:", ":1", "1:1"]))
            elif c < 0.75:
                parts.append(r.choice(["0", "-1"]))
            elif c < 0.85:
                parts.append("...")
            elif c < 0.92:
                parts.append("None")
            else:
                parts.append(r.choice(["2:0:-1", "-1::-2", ":0"]))
        if parts.count("...") > 1:
            parts = [p for i, p in enumerate(parts) if p != "..." or i == parts.index("...")]
        return ", ".join(parts) if parts else "..."

    # -- statement kinds (each returns (text, defined name or None, ulps) or None) -------------
    def st_unary(self):
        x = self._pick()
        if x is None:
            return None
        r = self.r
        u = r.choice(UNARY)
        name = self._new()
        if r.random() < 0.15:
            form = r.choice([f"-{x.name}", f"abs({x.name})", f"~{x.name}", f"{x.name}.conj()", f"+{x.name}"])
            return f"{name} = {form}", name, x.ulps
        if r.random() < 0.1 and any(v.kind == "scalar" for v in self.vars.values()):
            s = r.choice([v for v in self.vars.values() if v.kind == "scalar"])
            return f"{name} = np.{u}({s.name})", name, chained_ulps(s.ulps, u)
        return f"{name} = np.{u}({x.name})", name, chained_ulps(x.ulps, u)

    def st_binary(self):
        x = self._pick()
        if x is None:
            return None
        r = self.r
        y, yu = self._operand(x)
        name = self._new()
        if r.random() < 0.5:
            op = r.choice(BINARY_OPS)
            a, b = (x.name, y) if r.random() < 0.75 else (y, x.name)
            return f"{name} = {a} {op} {b}", name, chained_ulps(x.ulps + yu, _OP_NAME.get(op, op))
        fn = r.choice(BINARY_FUNCS)
        return f"{name} = np.{fn}({x.name}, {y})", name, chained_ulps(x.ulps + yu, fn)

    def st_reduce(self):
        x = self._pick()
        if x is None:
            return None
        r = self.r
        name = self._new()
        axis = self._axis(x.value)
        kd = r.random() < 0.3
        if r.random() < 0.5:
            red = r.choice(REDUCTIONS)
            if red in ("argmax", "argmin") and isinstance(axis, tuple):
                axis = axis[0]
            args = [] if axis is None and not kd else [f"axis={axis!r}"]
            if kd:
                args.append("keepdims=True")
            if red in ("std", "var") and r.random() < 0.3:
                args.append("ddof=1")
            return f"{name} = {x.name}.{red}({', '.join(args)})", name, x.ulps + op_ulps(red)
        red = r.choice(NP_REDUCTIONS)
        if red in ("cumsum", "cumprod"):
            axis = axis if not isinstance(axis, tuple) else axis[0]
            return f"{name} = np.{red}({x.name}, axis={axis!r})", name, x.ulps + op_ulps(red)
        args = [x.name]
        if axis is not None or kd:
            args.append(f"axis={axis!r}")
        if kd and red not in ("average",):
            args.append("keepdims=True")
        return f"{name} = np.{red}({', '.join(args)})", name, x.ulps + op_ulps(red) + (4 if red == "median" else 0)

    def st_view(self):
        x = self._pick(ndarray=True)
        if x is None:
            return None
        r = self.r
        name = self._new()
        nd = x.value.ndim
        c = r.random()
        if c < 0.45:
            form = f"{x.name}[{self._slice(x.value)}]"
        else:
            forms = [f"{x.name}.T", f"{x.name}.reshape(-1)", f"{x.name}.ravel()", f"np.expand_dims({x.name}, 0)",
                     f"np.expand_dims({x.name}, -1)", f"{x.name}.squeeze()", f"np.flip({x.name})",
                     f"{x.name}.flatten()", f"np.broadcast_to({x.name}, (2,) + {x.name}.shape)",
                     f"{x.name}.reshape({x.name}.shape + (1,))", f"{x.name}.copy()",
                     f"np.ascontiguousarray({x.name})"]
            if nd >= 2:
                forms += [f"{x.name}.reshape({x.name}.shape[0], -1)", f"np.swapaxes({x.name}, 0, -1)",
                          f"np.moveaxis({x.name}, 0, -1)", f"{x.name}.transpose()", f"{x.name}[:, ::-1]"]
            form = r.choice(forms)
        return f"{name} = {form}", name, x.ulps

    def st_astype(self):
        x = self._pick()
        if x is None:
            return None
        name = self._new()
        dt = self.r.choice(DTYPES)
        # A float -> int cast of an inexact value is exact only away from the rounding
        # edges; its budget is kept, so its values are not compared. NaN, infinities and
        # out-of-range values cast to an integer type give values NumPy leaves to the
        # platform: see Note [unspecified casts].
        if np.asarray(x.value).dtype.kind in "fc" and np.dtype(dt).kind in "iu":
            self.unspecified_cast = True
            return f"{name} = {x.name}.astype(np.{dt})", name, UNSPECIFIED
        return f"{name} = {x.name}.astype(np.{dt})", name, x.ulps

    def st_inplace(self):
        x = self._pick(ndarray=True)
        if x is None:
            return None
        r = self.r
        c = r.random()
        if c < 0.35:
            op = r.choice(["+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=", "<<="])
            y, yu = self._operand(x)
            return f"{x.name} {op} {y}", x.name, chained_ulps(x.ulps + yu, _OP_NAME.get(op[:-1], ""))
        if c < 0.6:
            y, yu = self._scalar_expr() if r.random() < 0.6 else self._operand(x)
            return f"{x.name}[{self._slice(x.value)}] = {y}", x.name, max(x.ulps, yu)
        if c < 0.7:
            y, yu = self._scalar_expr()
            op = r.choice(["+=", "*=", "-="])
            return f"{x.name}[{self._slice(x.value)}] {op} {y}", x.name, x.ulps + yu
        if c < 0.8:
            y, yu = self._operand(x)
            fn = r.choice(["add", "multiply", "subtract", "maximum"])
            return f"np.{fn}({x.name}, {y}, out={x.name})", x.name, x.ulps + yu
        if c < 0.88:
            y, yu = self._scalar_expr()
            return f"{x.name}.fill({y})", x.name, max(x.ulps, yu)
        y, yu = self._scalar_expr()
        return f"{x.name}[...] = {y}", x.name, yu

    def st_mask(self):
        r = self.r
        x = self._pick(ndarray=True, exact=True)
        if x is None:
            return None
        cmp = r.choice(["> 0", "< 0", "!= 0", "== 1", ">= -1"])
        c = r.random()
        if c < 0.4:
            y, yu = self._scalar_expr()
            op = r.choice(["=", "=", "*=", "+="])
            return f"{x.name}[{x.name} {cmp}] {op} {y}", x.name, x.ulps + yu
        if c < 0.7:
            name = self._new()
            return f"{name} = {x.name}[{x.name} {cmp}]", name, x.ulps
        m = self._pick(lambda v: v.dtype == np.bool_, exact=True, ndarray=True)
        if m is not None and r.random() < 0.5:
            name = self._new()
            return f"{name} = {x.name}[{m.name}]", name, x.ulps
        y, yu = self._operand(x)
        z, zu = self._operand(x)
        name = self._new()
        return f"{name} = np.where({x.name} {cmp}, {y}, {z})", name, yu + zu

    def st_join(self):
        x = self._pick(ndarray=True)
        if x is None:
            return None
        r = self.r
        same = [v for v in self._arrays(lambda a: _is_array(a) and a.shape == x.value.shape)]
        y = r.choice(same)
        name = self._new()
        fn = r.choice(["concatenate", "stack", "concatenate", "hstack", "vstack"])
        axis = ""
        if fn in ("concatenate", "stack") and x.value.ndim and r.random() < 0.5:
            axis = f", axis={-1 if r.random() < 0.5 else 0}"
        return f"{name} = np.{fn}([{x.name}, {y.name}]{axis})", name, max(x.ulps, y.ulps)

    def st_break(self):
        r = self.r
        c = r.random()
        if c < 0.35:
            x = self._pick(lambda a: np.size(a) > 0)
            if x is None:
                return None
            name = self._new().replace("v", "t")
            conv = r.choice(["float", "float", "int", "bool"])
            red = r.choice(["sum()", "max()", "min()", "ravel()[0]", "mean()"])
            return f"{name} = {conv}({x.name}.{red})", name, x.ulps + op_ulps(red[:-2])
        if c < 0.55:
            x = self._pick(lambda a: np.size(a) > 0)
            if x is None:
                return None
            name = self._new().replace("v", "t")
            return f"{name} = {x.name}.ravel()[-1].item()", name, x.ulps
        x = self._pick(exact=True)
        y = self._pick()
        if x is None or y is None:
            return None
        name = self._new()
        cond = r.choice([f"{x.name}.max() > 0", f"np.any({x.name})", f"{x.name}.sum() != 0",
                         f"int({x.name}.argmax()) == 0"])
        a, au = self._operand(y)
        return (f"if {cond}:\n    {name} = {y.name} + {a}\nelse:\n    {name} = {y.name} - {a}",
                name, y.ulps + au)

    def st_create(self):
        x = self._pick()
        if x is None:
            return None
        r = self.r
        name = self._new()
        dt = r.choice(DTYPES)
        s, su = self._scalar_expr()
        form = r.choice([f"np.zeros_like({x.name})", f"np.ones_like({x.name})", f"np.full_like({x.name}, {s})",
                         f"np.zeros(np.shape({x.name}), np.{dt})", f"np.ones_like({x.name}, dtype=np.{dt})",
                         f"np.empty_like({x.name})", f"np.arange(np.size({x.name}))"])
        if "empty_like" in form:  # the values of empty arrays are unspecified: fill them
            return f"{name} = {form}\n{name}[...] = {s}", name, su
        return f"{name} = {form}", name, su

    def st_matmul(self):
        x = self._pick(lambda a: np.ndim(a) >= 1 and a.dtype != np.bool_, ndarray=True)
        if x is None:
            return None
        name = self._new()
        form = self.r.choice([f"{x.name} @ {x.name}.T" if x.value.ndim >= 2 else f"np.dot({x.name}, {x.name})",
                              f"np.tensordot({x.name}, {x.name}, axes={x.value.ndim})",
                              f"np.inner({x.name}, {x.name})"])
        return f"{name} = {form}", name, x.ulps * 2 + op_ulps("matmul")

    KINDS = [("unary", 5), ("binary", 6), ("reduce", 4), ("view", 4), ("astype", 2), ("inplace", 4), ("mask", 3),
             ("join", 1), ("break", 2), ("create", 1), ("matmul", 1)]

    # -- driver ---------------------------------------------------------------------------
    def generate(self):
        dims, args, scalars = self._make_args()
        prog = {"seed": self.seed, "dims": dims, "args": args, "scalars": scalars, "stmts": [], "ret": [],
                "calls": [list(c) for c in CALL_PLAN]}
        env = {"np": np}
        for name, inp in zip(used_params(prog), call_inputs(prog, CALL_PLAN[0])):
            if inp[0] == "a":
                env[name] = layout_view(inp[1], inp[2], np)
                self.vars[name] = _Var(name, env[name], 0, "array")
            else:
                env[name] = inp[1]
                self.vars[name] = _Var(name, inp[1], 0, "scalar")
        kinds = [k for k, w in self.KINDS for _ in range(w)]
        tries = 0
        while len(prog["stmts"]) < self.max_stmts and tries < 60:
            tries += 1
            st = getattr(self, "st_" + self.r.choice(kinds))()
            if st is None:
                continue
            text, name, ulps = st
            trial = dict(env)
            try:
                with warnings.catch_warnings(record=True) as rec:
                    warnings.simplefilter("always")
                    exec(compile(text, "<gen>", "exec"), trial)
            except Exception:
                if self.r.random() < 0.04 and len(prog["stmts"]) >= 1:
                    prog["stmts"].append(text)  # a statement NumPy raises on ends the program
                    break
                continue
            if any("encountered in cast" in str(w.message) for w in rec) or self._casts_inexact(text, name, trial):
                self.unspecified_cast = True  # Note [unspecified casts]
                ulps = UNSPECIFIED
            # Keep the state of the program consistent (in-place statements changed the
            # arrays `env` holds, so re-run everything on fresh arguments).
            prog["stmts"].append(text)
            env = self._replay(prog)
            if env is None:  # not reproducible from fresh arguments (should not happen)
                prog["stmts"].pop()
                env = self._replay(prog)
                continue
            if name is not None:
                # Note [signs of zero ties]: the state of the operands the statement names.
                named = [self.vars[t] for t in re.findall(r"\b[avst]\d+\b", text) if t in self.vars]
                inherited = max([v.zs for v in named], default=0)
                zs = zero_sign_state(text, env.get(name), inherited)
                # Note [budgets in a narrower precision]: the narrowest precision among the
                # budgeted values the statement reads, and its own.
                own = precision(env.get(name))
                precs = [v.prec if v.prec is not None else precision(v.value) for v in named if v.ulps]
                prec = min([p for p in precs + [own] if p is not None], default=None)
                kind = "scalar" if isinstance(env.get(name), (bool, int, float, complex)) else "array"
                old = self.vars.get(name)
                if old is not None and old.kind == "array":
                    # In place: values sharing memory with the target take its budget.
                    for v in self.vars.values():
                        if _is_array(v.value) and _is_array(old.value) and np.may_share_memory(v.value, old.value):
                            v.ulps = max(v.ulps, ulps)
                            v.zs = max(v.zs, zs)
                            if prec is not None:
                                v.prec = prec if v.prec is None else min(v.prec, prec)
                self.vars[name] = _Var(name, env[name], ulps, kind, zs, prec)
            for v in self.vars.values():
                v.value = env.get(v.name, v.value)
        live = [v.name for v in self.vars.values() if v.name[0] in "vt"]
        if not live:
            live = ["a0"]
        k = self.r.randint(1, min(3, len(live)))
        prog["ret"] = sorted(set(live[-1:] + self.r.sample(live, k - 1)), key=live.index)
        prog["ulps"] = {v.name: UNSPECIFIED if v.zs == 2 else min(v.ulps + (ZERO_SIGN if v.zs else 0), UNSPECIFIED)
                        for v in self.vars.values()}
        prog["prec"] = {v.name: _PRECISIONS[v.prec] for v in self.vars.values()
                        if v.ulps and v.prec is not None and precision(v.value) is not None and v.prec < precision(v.value)}
        prog["unspecified_cast"] = self.unspecified_cast
        return prog

    def _casts_inexact(self, text, name, env):
        """Whether a statement writes float or complex values into an integer array (a
        cast whose values NumPy leaves to the platform outside the integer's range:
        Note [unspecified casts])."""
        import re
        if name is None or not re.search(r"astype|\.fill\(|full_like|\] [-+*]?=|out=", text):
            return False
        if np.asarray(env.get(name)).dtype.kind not in "iu":
            return False
        for tok in re.findall(r"\b[avst]\d+\b|[0-9.]+e[-+]?\d+|\d\.\d*|nan|inf|\dj|complex", text):
            if tok[0] in "avst" and tok[1:].isdigit():
                v = env.get(tok)
                if v is not None and np.asarray(v).dtype.kind in "fc":
                    return True
            elif tok[0] not in "avst":
                return True
        return False

    def _replay(self, prog):
        env = {"np": np}
        for name, inp in zip(used_params(prog), call_inputs(prog, CALL_PLAN[0])):
            env[name] = layout_view(inp[1], inp[2], np) if inp[0] == "a" else inp[1]
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                exec(compile("\n".join(prog["stmts"]), "<gen>", "exec"), env)
        except Exception:
            return None
        return env


def _broadcastable(s, t):
    """s broadcasts to t without changing t's shape."""
    if len(s) > len(t):
        return False
    return all(a == b or a == 1 for a, b in zip(s[::-1], t[::-1]))


def generate(seed):
    """The program of `seed` (a dict, see the module docstring)."""
    return Generator(seed).generate()


def source(prog):
    """The Python text of the program's function `f`."""
    names = used_params(prog)
    lines = [f"def f({', '.join(names)}):"]
    for st in prog["stmts"]:
        lines += ["    " + ln for ln in st.split("\n")]
    lines.append(f"    return ({', '.join(prog['ret'])},)" if prog["ret"] else "    return ()")
    return "\n".join(lines) + "\n"


def used_params(prog):
    """The parameters the program mentions (all of them until the shrinker drops some)."""
    import re
    text = "\n".join(prog["stmts"]) + " " + " ".join(prog["ret"])
    drop = set(prog.get("dropped", []))
    names = [f"a{k}" for k in range(len(prog["args"]))] + [f"s{k}" for k in range(len(prog["scalars"]))]
    return [n for n in names if n not in drop or re.search(rf"\b{n}\b", text)]
