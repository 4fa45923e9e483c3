"""Guard keys of npc.compile: what a call's arguments and the function's captured globals
and closure cells must match for a cached graph to replay, and the traced stand-ins of the
captured arrays (Note [captured arrays]).
"""
import functools
import threading
import types

import numpy as _np

from .. import _core
from . import _api  # CompiledFunction, read while tracing (_api imports this module first)
from ._state import _is_npc, _tls
from ._reads import plain


# ---------------------------------------------------------------- guard keys
def _contig(flags_c, flags_f):
    return 2 if flags_c else (1 if flags_f else 0)


def _valid_bytes(x):
    """(bytes before the lowest element, bytes past the highest element) of array `x` that are
    valid memory, for the covering view of a strided argument (Note [strided inputs] in
    src/tracer/trace_inputs.cpp): (-1, -1), the bytes of the storage the bound npc array views. That
    storage spans the memory of a NumPy argument's owner (Note [storages of NumPy arrays] in
    python/npc/csrc/bind_interop.cpp), or is the copy of an argument npc cannot view."""
    return (-1, -1)


# Note [arguments that stay NumPy]
# A NumPy array that npc cannot trace faithfully is left to NumPy: a call with such an
# argument runs the function eagerly (counted in eager_runs, logged under `fallback`), and
# such a captured global/closure array is read as the NumPy array it is (its operations are
# NumPy's; those that meet traced arrays break the graph). Two kinds:
# - subclasses of numpy.ndarray (np.matrix, np.ma.MaskedArray, ...): their operators and
#   methods have their own semantics (matrix products, masks) that a traced npc array would
#   silently drop;
# - unaligned arrays (np.frombuffer at an odd offset): npc binds a copy of them, so a write
#   through the traced argument would not reach the caller's memory.
def _numpy_only(x):
    """True for a NumPy array that npc.compile leaves to NumPy (Note [arguments that stay NumPy])."""
    return type(x) is not _np.ndarray or not x.flags.aligned

def _contig_label(c):
    if isinstance(c, tuple):
        return f"strides {c[:-1]}"
    return ['strided', 'F-contiguous', 'C-contiguous'][c]


# Note [runtime ints]
# Python int arguments follow torch.compile's "automatic dynamic": an int is guarded by value
# on its first trace; when a later call brings another value at the same path (argument
# position, then indices and keys inside lists, tuples and dicts), the path becomes a runtime
# int (CompiledFunction._dyn_ints) and the function is traced again with a `_RuntimeInt`
# standing for it (Note [runtime ints] in src/tracer/trace_nodes.cpp): its uses as an operand of
# array arithmetic and comparisons become a Scalar node whose value each replay passes (with
# the floats, in argument order), and any other use (range(k), a[:k], np.zeros(k), int(k),
# `if k > 0`, hashing, formatting...) makes the path static again for good
# (CompiledFunction._static_ints), so a graph never depends on a value it did not take at run
# time (an int that never became a Scalar node is static too: nothing gains from it being
# runtime, and code that chose a path by `type(k) is int`, which the proxy fails, did not
# read the value). The key holds the value's range class (_int_class): where it lies among the bounds of
# the loop dtypes it met while tracing (an integer dtype's range, float16's overflow; before
# its first runtime trace, those of every dtype), its sign (an integer power's exponent) and
# 2**63 (an Int64 or a UInt64 Scalar node), so that a replay's value takes the same NEP 50 path as the traced one (the same
# OverflowError, exact comparison answer or cast warning; the loop dtype of a weak int does
# not depend on its value). Values outside int64 and uint64 stay guarded by value. Bools (a subclass of int) are never runtime;
# nor are ints with dynamic=False; with dynamic=True every int is runtime from the first trace.
_INT_BOUNDS = tuple(sorted([-(1 << 63), -(1 << 31), -65519, -(1 << 15), -(1 << 7), 0, 1 << 7, 1 << 8, 1 << 15, 65520,
                      1 << 16, 1 << 31, 1 << 32, 1 << 63, 1 << 64]))


_INT_ALWAYS = (-(1 << 63), 0, 1 << 63, 1 << 64)


def _int_bounds(codes):
    """The sorted class bounds of a runtime int that met the loop dtypes `codes` (npc dtype
    codes; Note [runtime ints])."""
    from .._dtypes import DTYPES
    out = set(_INT_ALWAYS)
    for c in codes:
        dt = _np.dtype(DTYPES[c])
        if dt.kind in "iu":
            info = _np.iinfo(dt)
            out.update((int(info.min), int(info.max) + 1))
        elif dt == _np.float16:
            out.update((-65519, 65520))
    return tuple(sorted(out))


def _int_class(v, bounds=_INT_BOUNDS):
    """The range class of runtime int `v` (Note [runtime ints]): the index of the interval of
    `bounds` that holds it; None outside int64 and uint64 (guarded by value)."""
    import bisect
    if v < bounds[0] or v >= bounds[-1]:
        return None
    return bisect.bisect_right(bounds, v)


def _int_class_text(c, bounds):
    return f"int in [{bounds[c - 1]}, {bounds[c] - 1}] (runtime scalar)"



def _short_repr(x, limit=200):
    """repr(x) for a guard's description, shortened: an int beyond Python's digit limit for
    strings (repr raises ValueError) or a long string is described, not printed."""
    try:
        r = repr(x)
    except ValueError:
        return f"<int of {x.bit_length()} bits>" if isinstance(x, int) else f"<{type(x).__name__}>"
    return r if len(r) <= limit else r[:limit] + "..."

class _KeyBuilder:
    """Flattens arguments into a guard key (a hashable tuple), the arrays bound as graph
    inputs, the float and runtime int arguments (runtime scalars, in argument order), the int
    arguments seen (`ints`: path -> value) and, with `labels`, a description."""
    __slots__ = ("key", "arrays", "locs", "floats", "labels", "want_labels", "dyn", "static_floats", "numpy_in",
                 "npc_in", "unsupported", "containers", "ints", "dyn_ints", "int_bounds")

    def __init__(self, dyn, static_floats, want_labels=False, dyn_ints=(), int_bounds=None):
        self.key = []
        self.arrays = []
        self.locs = []  # where each of `arrays` is among the arguments (_locate)
        self.containers = {}  # id of a list or dict seen -> its number (Note [aliased containers])
        self.floats = []
        self.labels = [] if want_labels else None
        self.dyn = dyn
        self.static_floats = static_floats
        self.dyn_ints = dyn_ints  # the paths of runtime ints (CompiledFunction._runtime_int_paths)
        self.int_bounds = int_bounds if int_bounds is not None else {}  # path -> its class bounds, once traced runtime
        self.ints = {}
        self.numpy_in = False
        self.npc_in = False
        self.unsupported = False

    def add(self, x, path, loc=None):
        t = type(x)
        if loc is None:
            loc = (path,)
        if t is float:
            if path in self.static_floats:
                self._part(("f", x), path, f"== {_short_repr(x)}")
            else:
                self.floats.append(x)
                self._part("F", path, "float (runtime scalar)")
            return
        if isinstance(x, _core.ndarray) or isinstance(x, _np.ndarray):
            self._array(x, path)
            self.locs.append(loc)
            return
        if t is list or t is dict:
            # Note [aliased containers]: a list or dict met again (passed twice, or nested
            # twice) is one object in the trace; the key says which earlier one it is.
            seen = self.containers.get(id(x))
            if seen is not None:
                self._part(("same", seen), path, f"the same {t.__name__} as container {seen}")
                return
            self.containers[id(x)] = len(self.containers)
        if t is tuple or t is list:
            self._part((t.__name__, len(x)), path, f"{t.__name__} of length {len(x)}")
            for i, v in enumerate(x):
                self.add(v, f"{path}[{i}]", loc + (i,))
            return
        if t is dict:
            keys = tuple(x.keys())
            self._part(("dict", keys), path, f"dict with keys {keys}")
            for k, v in x.items():
                self.add(v, f"{path}[{k!r}]", loc + (k,))
            return
        if t is int:
            self.ints[path] = x
            bounds = self.int_bounds.get(path, _INT_BOUNDS)
            c = _int_class(x, bounds) if path in self.dyn_ints else None
            if c is not None:
                self.floats.append(x)
                self._part(("I", c, bounds), path, _int_class_text(c, bounds))
                return
        if t in (int, bool, str, bytes, type(None), complex) or isinstance(x, _np.generic):
            self._part((t, x), path, f"== {_short_repr(x)}")
            return
        if isinstance(x, _np.random.Generator):
            self._part(("gen", id(x)), path, "the same numpy Generator")
            return
        try:
            hash(x)
            self._part((t, id(x)), path, f"is the same {t.__name__} object")
        except TypeError:
            self._part((t, id(x)), path, f"is the same {t.__name__} object")

    def _array(self, x, path):
        if _is_npc(x):
            if _core._is_traced(x):
                self.unsupported = True
            fl = x._flags
            c = _contig(fl[0], fl[1])
            code = x._code
            self.npc_in = True
        else:
            from .._dtypes import code_of
            code = code_of(x.dtype) if x.dtype.isnative else None
            if code is None or _numpy_only(x):
                # Note [arguments that stay NumPy]
                self.unsupported = True
                code = -1
            c = _contig(x.flags.c_contiguous, x.flags.f_contiguous)
            self.numpy_in = True
        shape = x.shape
        dyn = self.dyn.get(path)
        if c == 0 and code >= 0:
            # Note [strided inputs] in src/tracer/trace_inputs.cpp: traced with its own strides, so
            # the key holds them and the shape stays static.
            xs = x if _is_npc(x) else _from_numpy(x)
            if _core._strided_input(xs):
                c = tuple(x.strides) + (_core._cover_layout(xs, _valid_bytes(x)),)
                dyn = None
        if dyn:
            shape = tuple(-1 if (i in dyn and s >= 2) else s for i, s in enumerate(shape))
        # The same array passed twice is one graph input (aliasing is part of the key).
        alias = -1
        for k, (y, _) in enumerate(self.arrays):
            if y is x:
                alias = k
                break
        # Device and requires_grad (all npc arrays are on "cpu" without gradients today) are
        # part of the key so that device arrays and autodiff get their own entries.
        dev = str(getattr(x, "device", "cpu"))
        rg = bool(getattr(x, "requires_grad", False))
        self.key.append((code, shape, c, alias, dev, rg))
        self.arrays.append((x, path))
        if self.labels is not None:
            self.labels.append((path, f"dtype {x.dtype}, shape {shape}, "
                                      f"{_contig_label(c)}, "
                                      f"device {dev}, requires_grad {rg}"))

    def _part(self, value, path, text):
        self.key.append(value)
        if self.labels is not None:
            self.labels.append((path, text))


def _locate(args, kwargs, loc):
    """The argument at `loc` (a _KeyBuilder location: the position or keyword of an argument,
    then the indices and keys inside its lists, tuples and dicts)."""
    x = args[loc[0]] if type(loc[0]) is int else kwargs[loc[0]]
    for k in loc[1:]:
        x = x[k]
    return x


def _code_names(code):
    """The names a code object and the code objects nested in it use (globals and attributes)."""
    names = set(code.co_names)
    for k in code.co_consts:
        if isinstance(k, types.CodeType):
            names |= _code_names(k)
    return names


def _read_names(code):
    """The global names a code object reads (LOAD_GLOBAL; LOAD_NAME in class bodies),
    recursively into nested code objects."""
    from ._reads import _global_names
    names = _global_names(code)
    for k in code.co_consts:
        if isinstance(k, types.CodeType):
            names |= _read_names(k)
    return names


def _free_values(fn):
    """(name, getter) for the globals and closure cells fn's code reads (recursively into
    nested code objects); their numbers and arrays are guarded."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    names = _read_names(code)
    g = getattr(fn, "__globals__", {})
    out = [(f"global {n}", (lambda n=n: g.get(n, _MISSING))) for n in sorted(names)]
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            def get(cell=cell):
                try:
                    return cell.cell_contents
                except ValueError:
                    return _MISSING
            out.append((f"closure {name}", get))
    if fn.__defaults__ or fn.__kwdefaults__:
        # Defaults are constants of the trace: `f.__defaults__ = ...`, `f.__kwdefaults__["k"] = 2`.
        out.append(("defaults", lambda: (fn.__defaults__, fn.__kwdefaults__)))
    if isinstance(fn, types.MethodType):
        # A compiled bound method (`npc.compile(model.forward)`): its object's attributes are
        # read like a captured object's (Note [attribute reads]).
        out.append(("self", lambda: fn.__self__))
    # Default values that are containers: the function may change them (`def f(x, seen={})`).
    defaults = fn.__defaults__ or ()
    params = code.co_varnames[:code.co_argcount][len(code.co_varnames[:code.co_argcount]) - len(defaults):]
    for i, (name, v) in enumerate(zip(params, defaults)):
        if type(v) in (list, dict, set):
            out.append((f"default {name}", (lambda i=i: (fn.__defaults__ or ())[i] if i < len(fn.__defaults__ or ())
                                            else _MISSING)))
    for name, v in sorted((fn.__kwdefaults__ or {}).items()):
        if type(v) in (list, dict, set):
            out.append((f"default {name}", (lambda name=name: (fn.__kwdefaults__ or {}).get(name, _MISSING))))
    return out


# Note [captured arrays]
# Arrays the function reads from its globals and closure cells are graph inputs bound by
# reference (guarded by identity, dtype and shape), so changes between calls are seen. While
# tracing, the function runs as a copy of itself (same code) whose globals are a _TraceGlobals
# over its module's dict and whose closure cells holding arrays are new cells: each captured
# array reads as a traced stand-in there, exactly like an array argument, so every read, every
# NumPy call on it and every write into it (`BUF[:] = x`, `out=BUF`) is recorded, writes are
# functionalized and written back into the caller's array, and expressions of captured arrays
# alone are never frozen into constants. Functions of the same module that it calls read their
# globals through the same _TraceGlobals (they are called as copies too), so a global array
# read by a helper is the same stand-in. The module's dict and the original cells are never
# rebound: other threads see the real arrays while a trace runs. Globals the traced code
# assigns are copied into the module's dict when the trace ends.
class _TraceGlobals(dict):
    """The globals of traced copies: a copy of the module's dict taken when the trace starts,
    into which the traced code stores. Reading a name through it (CPython reads globals that
    are not an exact dict through __getitem__) gives the traced stand-in of a module array and
    a traced copy of a module function, until the trace ends (`alive` False). Class bodies,
    which read globals as a dict, see the module's values."""
    __slots__ = ("real", "snapshot", "standins", "copies", "ctx", "by_id", "alive")

    def __getitem__(self, name):
        v = dict.__getitem__(self, name)
        if not self.alive or self.snapshot.get(name, _MISSING) is not v:
            return v  # after the trace, or assigned while tracing
        t = self.standins.get(name)
        if t is not None:
            return t
        if isinstance(v, (_core.ndarray, _np.ndarray)):
            t = _standin(self.ctx, v, self.by_id)
            if t is not None:
                self.standins[name] = t
                return t
        elif type(v) is types.FunctionType and v.__globals__ is self.real:
            return self._copy_of(v)
        elif type(v) is _api.CompiledFunction and getattr(v._fn, "__globals__", None) is self.real and \
                type(v._fn) is types.FunctionType:
            # A compiled function called while tracing is inlined: as a copy, like a helper,
            # with the attributes set on the compiled function (`double.gain = 2`).
            return self._copy_of(v._fn, v, {k: a for k, a in vars(v).items() if k not in v._own_attrs})
        return v

    def _copy_of(self, fn, owner=None, attrs=None):
        # One copy per function object, whatever name reads it: `h = g` at module level keeps
        # `h is g` true in traced code (copies keyed by name made them two objects). `owner`:
        # the object whose attributes the copy has (the compiled function of `fn`).
        entry = self.copies.get(id(fn))
        if entry is None:
            entry = self.copies[id(fn)] = (fn, _function_copy(fn, self, fn.__closure__), owner or fn)
            if attrs:
                entry[1].__dict__.update(attrs)
        return entry[1]

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def finish(self):
        """Ends the trace: the globals the traced code assigned or deleted are assigned or
        deleted in the module's dict (a traced value cannot outlive its trace: such an
        assignment keeps the module's value)."""
        self.alive = False
        for name, v in list(dict.items(self)):
            if self.snapshot.get(name, _MISSING) is v:
                continue
            if isinstance(v, _core.ndarray) and _core._is_traced(v):
                continue
            self.real[name] = v
        for name in self.snapshot:
            if not dict.__contains__(self, name) and self.real.get(name, _MISSING) is self.snapshot[name]:
                del self.real[name]
        self.standins.clear()
        # Attributes the traced code set on the copies (`f.calls = ...`) are the functions'.
        for fn, copy, owner in self.copies.values():
            d = copy.__dict__
            if d:
                mine = vars(owner)
                for k, v in list(d.items()):
                    if mine.get(k, _MISSING) is not v and fn.__dict__.get(k, _MISSING) is not v and not (
                            isinstance(v, _core.ndarray) and _core._is_traced(v)):
                        setattr(owner, k, v)
        self.copies.clear()


def _function_copy(fn, glob, closure):
    copy = types.FunctionType(fn.__code__, glob, fn.__name__, fn.__defaults__, closure)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    if fn.__dict__:
        copy.__dict__.update(fn.__dict__)
    return copy


class _StandIns(dict):
    """id of an argument or captured array -> its traced stand-in; `objects`: id -> the captured
    array itself (Note [results that view inputs] in _results.py)."""
    __slots__ = ("objects",)

    def __init__(self, items=()):
        super().__init__(items)
        self.objects = {}


def _standin(ctx, v, by_id):
    """The traced stand-in of captured array `v`, or None when it cannot be traced."""
    if _is_npc(v):
        if _core._is_traced(v):
            return None
        npcx = v
    else:
        from .._dtypes import code_of
        if not v.dtype.isnative or code_of(v.dtype) is None or _numpy_only(v):
            return None
        npcx = _from_numpy(v)
    t = by_id.get(id(v))
    if t is None:
        t = by_id[id(v)] = ctx.add_input(npcx, [], True)
        objects = getattr(by_id, "objects", None)
        if objects is not None:
            objects[id(v)] = v
    return t


def _traced_copy(fn, ctx, by_id):
    """(function to trace, its _TraceGlobals or None): a copy of `fn` reading traced stand-ins
    of its captured arrays (Note [captured arrays]); `fn` itself when it is not a function."""
    code = getattr(fn, "__code__", None)
    if code is None or not isinstance(fn, types.FunctionType):
        return fn, None
    g = fn.__globals__
    # The names fn's own code reads are bound first (in name order, as the guards list them).
    proxy = _TraceGlobals(g)
    proxy.real, proxy.snapshot, proxy.standins, proxy.copies = g, dict(g), {}, {}
    proxy.ctx, proxy.by_id, proxy.alive = ctx, by_id, True
    for name in sorted(_code_names(code)):
        if isinstance(g.get(name, None), (_core.ndarray, _np.ndarray)):
            proxy.__getitem__(name)  # binds the stand-in now
    closure = fn.__closure__
    if closure:
        cells = []
        for cell in closure:
            try:
                v = cell.cell_contents
            except ValueError:
                v = _MISSING
            t = _standin(ctx, v, by_id) if isinstance(v, (_core.ndarray, _np.ndarray)) else None
            cells.append(cell if t is None else types.CellType(t))
        if any(c is not o for c, o in zip(cells, closure)):
            closure = tuple(cells)
    return _function_copy(fn, proxy, closure), proxy


_MISSING = object()
_GUARDED = (int, float, complex, bool, _np.generic)


_PLAIN = frozenset({int, float, bool, complex, str, bytes, type(None)})


class _Ident:
    """Compares and hashes as the identity of the object it holds (and keeps it alive): for
    objects with their own __eq__ or without a hash."""
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return type(other) is _Ident and other.v is self.v

    def __hash__(self):
        return id(self.v)


def _value_part(v):
    """What guard keys compare of value `v` (Note [globals read while tracing] in _reach.py):
    (type, value) for numbers, strings, bytes and None (the bits of a float zero or NaN),
    (type, contents) for lists, tuples (and their subclasses), dicts and sets, (id, dtype,
    shape) for arrays, ("is", the object) for the rest (a function with its code, a generator
    with its position, a functools.partial with its arguments)."""
    t = type(v)
    if t in _PLAIN or isinstance(v, _GUARDED):
        if isinstance(v, float) and (v == 0 or v != v):
            return (t, v.hex())  # -0.0 is not 0.0 (copysign)
        return (t, v)
    if isinstance(v, (_core.ndarray, _np.ndarray)):
        return (id(v), getattr(v, "dtype", None), v.shape)
    if t is list or isinstance(v, tuple):
        return (t, _contents_key(v, 0))
    if t is dict:
        return (t, (_contents_key(list(v), 0), _contents_key(list(v.values()), 0)))
    if t is set or t is frozenset:
        return (t, _contents_key(list(v), 0))
    if t is types.FunctionType:
        return ("is", (v, _Ident(v.__code__)))  # (a code object's own hash reads all of it)
    if t is types.GeneratorType:
        f = v.gi_frame
        return ("is", (v, f.f_lasti if f is not None else -1))
    if t is functools.partial:
        return ("is", (_Ident(v), _contents_key(v.args, 0), _value_part(v.keywords)))
    if t.__eq__ is object.__eq__ and t.__hash__ is object.__hash__:
        return ("is", v)
    return ("is", _Ident(v))


def _free_key(free, unguarded=(), arrays=None):
    """The guard key's part of `free` ((label, getter) pairs): (label,) + _value_part; the
    captured arrays are appended to list `arrays` when one is given. Captured arrays are graph
    inputs bound by reference: in-place changes between calls are seen; rebinding the name is
    a guard failure. A list or tuple (an index `x[IDX]`, sizes, a list of arrays) is read while
    tracing and frozen into the graph: guarded by its contents, so mutating it between calls
    traces again."""
    key = []
    for name, get in free:
        if name in unguarded:
            continue  # changed by the function itself: a side effect (Note [globals read while tracing])
        v = get()
        if v is _MISSING:
            key.append((name, "missing", None))  # (a builtin: shadowing it later traces again)
            continue
        t = type(v)
        if t in _PLAIN and not (t is float and (v == 0 or v != v)):
            key.append((name, t, v))
            continue
        if t is types.ModuleType or t is type:
            key.append((name, "is", v))
            continue
        part = _value_part(v)
        key.append((name,) + part)
        if arrays is not None and len(part) == 3:
            arrays.append(v)
    return tuple(key)


def _free_state(free):
    """name -> its part of _free_key, for the names whose value a trace could change (arrays
    are written back in place)."""
    return {item[0]: item for item in _free_key(free) if len(item) == 3}


def portable_part(key):
    """Guard key `key` less the values compared by identity (functions, modules, classes):
    what names a kept trace (Note [persisted traces] in _persist.py, whose checks compare
    those values across processes)."""
    args, free, kwnames, ov = key
    return (args, tuple(item for item in free if not (len(item) == 3 and item[1] == "is")), kwnames, ov)


def portable_key(key):
    """Whether guard key `key` (CompiledFunction.__call__'s: arguments, free values, keyword
    names, overlaps) means the same in another process: no part of it is an object's identity
    (Note [persisted traces] in _persist.py). Reads the formats of _KeyBuilder, _free_key and
    _contents_key."""
    args, free, kwnames, ov = key
    for item in args:
        if type(item) is tuple and item and item[0] == "gen":
            return False  # a Generator, by identity
    if not plain(args) or not plain(kwnames) or not plain(ov):
        return False
    for item in free:
        if len(item) == 4:
            return False  # a captured array, by identity
        name, t, v = item
        if t == "is":
            continue  # not in portable_part
        if t is list or t is tuple or t is set or t is frozenset:
            if not _portable_contents(v):
                return False
        elif t is dict:
            if not _portable_contents(v[0]) or not _portable_contents(v[1]):
                return False
        elif not plain(v):
            return False
    return True


def _portable_contents(ck):
    if ck and ck[0] == "id":
        return False  # too long or too deep: by identity
    for item in ck:
        if item[0] == "A" or item[0] == "id":
            return False
        t, x = item
        if (t is list or t is tuple) and not _portable_contents(x):
            return False
        if t is not list and t is not tuple and not plain(x):
            return False
    return True


_CONTENTS_MAX = 256


def _contents_key(v, depth):
    """A hashable snapshot of list/tuple `v`: numbers and strings by value, arrays by
    identity, dtype and shape, nested lists and tuples recursively, other objects by identity.
    Longer than _CONTENTS_MAX elements (or nested too deep): identity and length only."""
    if len(v) > _CONTENTS_MAX or depth > 3:
        return ("id", id(v), len(v))
    out = []
    for x in v:
        t = type(x)
        if t in (int, float, bool, str, complex) or x is None or isinstance(x, _np.generic):
            out.append((t, x.hex() if isinstance(x, float) and (x == 0 or x != x) else x))  # -0.0 is not 0.0
        elif t is list or t is tuple:
            out.append((t, _contents_key(x, depth + 1)))
        elif t is dict:
            out.append((t, (_contents_key(list(x), depth + 1), _contents_key(list(x.values()), depth + 1))))
        elif t is set or t is frozenset:
            out.append((t, _contents_key(list(x), depth + 1)))
        elif isinstance(x, (_core.ndarray, _np.ndarray)):
            out.append(("A", id(x), x.dtype, x.shape))
        else:
            out.append(("id", id(x)))
    return tuple(out)



def _from_numpy(x):
    from .._array import _from_numpy as f
    globals()["_from_numpy"] = f  # resolved once (npc._array imports after this module loads)
    return f(x)


# Note [attribute reads]
# An array the function reads through an attribute of an object it captures (`m.w` with `m` a
# global or closure object, `self.w` with `self` an argument, `m.sub.w`, `ps[0].w` with `ps` a
# list, tuple or dict argument, `h.__self__.w` with `h` a bound method in a global) would be a
# constant of the graph: bound as the array seen while tracing, so after `m.w = other` a
# replay would read the old array. So, while tracing, the classes of those objects read
# attributes through a recorder (_AttrReads, installed on the class's __getattribute__ for
# the trace only; other threads read through it unchanged): an attribute of the instance's
# own __dict__ read from a watched object is a guard of the function, evaluated on every call
# (from the global or closure, or the argument, along the path: _attr_value): an array by
# identity, dtype and shape, and it reads as a traced stand-in bound by reference, like a
# captured global (Note [captured arrays]), so writes into it are written back and
# expressions of it are never frozen; other values as _value_part compares them, and objects
# of the user's classes are watched in turn. An attribute found on the class instead (a
# constant, a method: `self.k`, `self.apply`) is guarded as the class holds it, so replacing
# it on the class traces again. An attribute whose value the trace changes after reading it
# (`self.n += 1`, `self.history.append(...)`) is a side effect (Note [globals read while
# tracing] in _reach.py: the function runs its Python on every call). An attribute the traced
# code assigns a stand-in to (`m.w += 1`) gets its array back when the trace ends (the
# write went into it). Properties, __getattr__ and slots are not seen.
_ATTR_LOCK = threading.Lock()
_ATTR_PATCHED = {}  # class -> [number of traces using it, its own __getattribute__ or _MISSING]


def _watchable(v):
    """Whether attribute reads of `v` are recorded: an instance of a Python class (not npc's or
    NumPy's, not a function, module, class or array) with an instance dict."""
    t = type(v)
    if not t.__flags__ & (1 << 9) or isinstance(v, (_core.ndarray, _np.ndarray, type, types.ModuleType,
                                                    types.FunctionType, types.MethodType, _api.CompiledFunction)):
        return False
    mod = getattr(t, "__module__", "") or ""
    if mod.split(".")[0] in ("npc", "numpy"):
        return False
    try:
        return isinstance(object.__getattribute__(v, "__dict__"), dict)
    except AttributeError:
        return False


def _reading(orig):
    def __getattribute__(self, name):
        v = orig(self, name)
        r = _tls.attr_reads
        if r is not None and name[:2] != "__":
            return r.read(self, name, v)
        return v
    return __getattribute__


class _AttrReads:
    """The attribute reads of one trace (Note [attribute reads])."""

    def __init__(self, ctx, by_id):
        self.ctx, self.by_id = ctx, by_id
        self.watched = {}  # id -> (object, root, names)
        self.guards = {}   # (root, names) -> None, in the order read
        self.first = {}    # (root, names) -> _value_part as first read (a change by the trace is a side effect)
        self.arrays = []   # (object, name, array read) whose stand-in the traced code may assign back
        self.classes = []

    def watch(self, obj, root, names=()):
        if id(obj) in self.watched or not _watchable(obj):
            return
        self.watched[id(obj)] = (obj, root, names)
        cls = type(obj)
        if cls in self.classes:
            return
        with _ATTR_LOCK:
            entry = _ATTR_PATCHED.get(cls)
            if entry is None:
                own = cls.__dict__.get("__getattribute__", _MISSING)
                try:
                    cls.__getattribute__ = _reading(cls.__getattribute__)
                except (TypeError, AttributeError):
                    return
                entry = _ATTR_PATCHED[cls] = [0, own]
            entry[0] += 1
        self.classes.append(cls)

    def read(self, obj, name, v):
        w = self.watched.get(id(obj))
        if w is None or w[0] is not obj:
            return v
        try:
            own = name in object.__getattribute__(obj, "__dict__")
        except AttributeError:
            own = False
        if not own:
            # A class attribute (a constant, a method, a staticmethod): the class's own value
            # (a method replaced on the class, `A.k = 2` read as `self.k`).
            cv = _class_attr(type(obj), name)
            if cv is not _MISSING and not isinstance(v, (_core.ndarray, _np.ndarray)):
                where = (w[1], w[2] + (("cls", name),))
                if where not in self.guards:
                    self.guards[where] = None
                    self.first[where] = _value_part(cv)
            return v
        where = (w[1], w[2] + (name,))
        if where not in self.first and not isinstance(v, (_core.ndarray, _np.ndarray)):
            self.first[where] = _value_part(v)
        if isinstance(v, (_core.ndarray, _np.ndarray)):
            if _is_npc(v) and _core._is_traced(v):
                return v
            t = _standin(self.ctx, v, self.by_id)
            if t is None:
                return v
            self.guards.setdefault(where)
            self.arrays.append((obj, name, v, t))
            return t
        self.guards.setdefault(where)
        if _watchable(v):
            self.watch(v, *where)
        return v

    def watch_items(self, c, root):
        """Watches the objects in list, tuple or dict argument `c` (one level)."""
        items = c.items() if type(c) is dict else enumerate(c)
        for k, v in items:
            if _watchable(v):
                self.watch(v, root, (("item", k),))

    def changed(self, free, args, kwargs):
        """The attribute paths whose values the trace changed since it first read them."""
        out = []
        for where, part in self.first.items():
            try:
                now = _value_part(_attr_value(free, args, kwargs, where))
            except (LookupError, AttributeError, TypeError):
                now = None
            if now != part:
                out.append(where)
        return out

    def finish(self):
        for obj, name, v, t in self.arrays:
            try:
                if object.__getattribute__(obj, "__dict__").get(name) is t:
                    setattr(obj, name, v)  # Note [attribute reads]: the write went into v
            except AttributeError:
                pass
        with _ATTR_LOCK:
            for cls in self.classes:
                entry = _ATTR_PATCHED[cls]
                entry[0] -= 1
                if entry[0] == 0:
                    del _ATTR_PATCHED[cls]
                    if entry[1] is _MISSING:
                        del cls.__getattribute__
                    else:
                        cls.__getattribute__ = entry[1]
        self.classes = []


def _attr_value(free, args, kwargs, where):
    """The value at attribute path `where`: names of the instance dict, ("cls", name) of the
    class (its MRO's dicts), ("item", k) of a list, tuple or dict."""
    root, names = where
    v = free[root[1]]() if root[0] == "free" else _locate(args, kwargs, root[1])
    for n in names:
        if type(n) is str:
            v = object.__getattribute__(v, "__dict__")[n]
        elif n[0] == "cls":
            d = getattr(v, "__dict__", None)  # (an instance attribute set later shadows it)
            v = d[n[1]] if type(d) is dict and n[1] in d else _class_attr(type(v), n[1])
            if v is _MISSING:
                raise AttributeError(n[1])
        elif n[0] == "self":
            v = v.__self__
        else:
            v = v[n[1]]
    return v


def _class_attr(cls, name):
    """Attribute `name` as the first dict of class `cls`'s MRO holds it, or _MISSING."""
    for k in cls.__mro__:
        d = k.__dict__
        if name in d:
            return d[name]
    return _MISSING


def where_label(where):
    """How an attribute path (Note [attribute reads]) reads in guard descriptions."""
    (kind, root), names = where
    text = root if kind == "free" else f"arg {root[0]!r}"
    for n in names:
        text += (f".{n}" if type(n) is str else f".{n[1]}" if n[0] == "cls" else ".__self__" if n[0] == "self"
                 else f"[{n[1]!r}]")
    return text


def _attr_key(guards, free, args, kwargs, unguarded=()):
    """The part of the guard key of the attribute reads `guards` (Note [attribute reads]);
    those in `unguarded` (changed by the function) are left out."""
    key = []
    for where in guards:
        if where in unguarded:
            continue
        try:
            v = _attr_value(free, args, kwargs, where)
        except (LookupError, AttributeError, TypeError):
            key.append((where, "missing"))
            continue
        key.append((where,) + _value_part(v))
    return tuple(key)
