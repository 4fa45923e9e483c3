"""What a trace reads: Note [persisted traces] in _persist.py.

`Recorder` watches a trace for the code it runs, the globals and library attributes the
user's code reads and the calls it makes (`_verdict`: what the user's code may call);
`evidence` gives what a later process checks before it uses the kept trace. The values are
compared across processes by `_value_key`/`_outside_key`.
"""
import functools
import hashlib
import marshal
import os
import pickle
import stat
import sys
import sysconfig
import threading
import types

import numpy as _np

from . import _logs
from ._state import _NPC_DIR, _NUMPY_DIR

_STDLIB = tuple(os.path.abspath(p) + os.sep for p in {sysconfig.get_paths()["stdlib"],
                                                      sysconfig.get_paths()["platstdlib"]})
_PACKAGES = tuple(os.path.abspath(p) + os.sep for p in {sysconfig.get_paths()["purelib"],
                                                        sysconfig.get_paths()["platlib"]})
_NPC = _NPC_DIR + os.sep
_NUMPY = _NUMPY_DIR + os.sep

# ---------------------------------------------------------------- what a trace runs
class Recorder:
    """The code objects that start while a trace runs, the globals of the user's, and the
    calls the user's code makes (Note [persisted traces])."""

    _tool = None

    def __init__(self, fn, keep=True, on_code=None):
        self.keep = keep  # False: the code that starts is listed (globals_of), nothing checked
        self.on_code = on_code  # called (code, its globals, its frame) as the user's code first starts
        self.codes = {}  # code -> (module name of its globals, whether it is the user's code)
        self.globals_of = {}  # the user's code that started on the tracing thread -> its module's dict
        self._thread = threading.get_ident()
        self.fit = True
        self.before = {}  # the globals as the user's code started (compared after the trace)
        self.disable = True
        self._off = None  # what a callback returns for a location it need not see again
        self._nested = set(_nested_codes(getattr(fn, "__code__", None)))
        self._name = getattr(fn, "__qualname__", None) or "?"
        self._watch = {}  # code -> whether its calls are checked (the user's code)
        self._ok = {}  # id -> a callable the user's code may call (kept alive while it is here)
        self._higher = {}  # id -> (callable, what its first argument must be): map, filter...
        self._names = set()  # the names of the user's code that ran
        self._spaces = {}  # library modules and classes reached from the user's globals -> dicts

    @classmethod
    def start(cls, fn, keep=True, on_code=None):
        """A recorder of the trace about to run, or None when none can record it (no
        sys.monitoring, no free tool id, or another thread's trace recording: events are
        process-wide, so one trace at a time is recorded; the other is not kept). With `keep`
        False it lists the user's code that runs (Note [globals read while tracing] in
        _reach.py) and checks nothing."""
        mon = getattr(sys, "monitoring", None)
        if mon is None or not _recording.acquire(blocking=False):
            return None
        try:
            for tool in (4, 3, 5):  # the tool id is held only while a trace is recorded
                if mon.get_tool(tool) is None:
                    mon.use_tool_id(tool, "npc trace cache")
                    break
            else:
                raise ValueError("no free sys.monitoring tool id")
            rec = cls(fn, keep, on_code)
            rec._tool = tool
            mon.register_callback(tool, mon.events.PY_START, rec._started)
            if keep:
                mon.register_callback(tool, mon.events.CALL, rec._called)
            # Each code location reports once (DISABLE), and locations disabled by an earlier
            # trace must fire again; restart_events() re-enables every tool's, so with another
            # tool active (a debugger, coverage) every start and call is reported instead.
            rec.disable = not any(mon.get_tool(t) is not None for t in range(6) if t != tool)
            if rec.disable:
                rec._off = mon.DISABLE
                mon.restart_events()
            mon.set_events(tool, mon.events.PY_START | mon.events.CALL if keep else mon.events.PY_START)
            return rec
        except ValueError:
            _recording.release()
            return None

    def stop(self):
        mon = sys.monitoring
        try:
            mon.set_events(self._tool, 0)
            mon.register_callback(self._tool, mon.events.PY_START, None)
            mon.register_callback(self._tool, mon.events.CALL, None)
            mon.free_tool_id(self._tool)
        finally:
            # No references kept past the trace (emptied, not dropped: another thread's
            # callback may still be running).
            self._ok.clear()
            self._higher.clear()
            self._spaces.clear()
            _recording.release()

    def reached(self):
        """(code, its module's dict) of the user's code that ran on the tracing thread."""
        return list(self.globals_of.items())

    def _unfit(self, why, *args):
        """The trace is not kept; only the code that starts is still listed."""
        if self.fit:
            self.fit = False
            _logs.log("guards", "%s: trace not kept: " + why, self._name, *args)
            try:
                sys.monitoring.set_events(self._tool, sys.monitoring.events.PY_START)
            except ValueError:
                pass

    def _started(self, code, offset):
        if threading.get_ident() != self._thread:
            return None  # (not disabled: the location must still report on the tracing thread)
        if code not in self.codes:
            try:
                frame = sys._getframe(1)
                self._record(code, frame.f_globals, frame)
            except Exception as e:  # noqa: BLE001 - whatever the user's objects raise: not kept
                self.codes[code] = (None, True)
                self._unfit("%s: %r", code.co_qualname, e)
        return self._off

    def _called(self, code, offset, c, arg0):
        # Note [persisted traces]: every call the user's code makes; the locations of npc's,
        # NumPy's, the standard library's and installed packages' code once each.
        w = self._watch.get(code)
        if w is None:
            w = self._caller(code, sys._getframe(1).f_globals)
        if not w:
            return self._off
        if self._ok.get(id(c)) is not c:
            self._check_call(c, arg0)
        return None

    def _caller(self, code, g):
        """Whether calls of `code`, which started before this trace (a generator resumed,
        another thread's function), are checked; the user's such code is recorded now."""
        try:
            self._record(code, g)
            return self._watch[code]
        except Exception as e:  # noqa: BLE001
            self._watch[code] = True
            self._unfit("%s: %r", code.co_qualname, e)
            return True

    def _check_call(self, c, arg0):
        try:
            h = self._higher.get(id(c))
            if h is not None and h[0] is c:
                kind = h[1]
            else:
                t = type(c)
                if t is types.MethodType and self._ok.get(id(c.__func__)) is c.__func__:
                    return  # a method of an allowed class, bound anew at each call
                kind = _verdict(c)
                if kind is False:
                    self._unfit("calls %s", _describe(c))
                    return
                f = _user_function(c)
                if f is not None and f.__code__ not in self.codes:
                    # Wrapped (functools.partial, lru_cache, a compiled function): its code
                    # may not run while tracing (a cached result) but the result is its.
                    self._record(f.__code__, f.__globals__)
                if kind is None:
                    if len(self._ok) > 4096:
                        self._ok.clear()
                    self._ok[id(c)] = c
                    if t is types.MethodType:
                        self._ok[id(c.__func__)] = c.__func__
                    return
                self._higher[id(c)] = (c, kind)
            if not _argument_ok(kind, arg0):
                self._unfit("calls %s with %s", _describe(c), _describe(arg0))
        except Exception as e:  # noqa: BLE001 - whatever the objects raise: not kept
            self._unfit("calls %s: %r", _describe(c), e)

    def _record(self, code, g, frame=None):
        mod = g.get("__name__")
        user = _user_file(code.co_filename) and not _namedtuple_new(code.co_filename, mod)
        self.codes[code] = (mod, user)
        self._watch[code] = user
        if user and threading.get_ident() == self._thread:
            real = g if type(g) is dict else getattr(g, "real", None)  # a traced copy's globals
            if type(real) is dict:
                self.globals_of[code] = real
                if self.on_code is not None:
                    self.on_code(code, real, frame)
        if not user or not self.fit or not self.keep:
            return
        # Closures of the user's functions other than the compiled one (and code nested in
        # it) hold values nothing here can check; so do reads of globals by a computed name
        # and imports inside functions.
        if code.co_freevars and code not in self._nested:
            self._unfit("%s has a closure", code.co_qualname)
            return
        if not _reads_plainly(code):
            self._unfit("%s reads globals by computed names or imports", code.co_qualname)
            return
        # The globals must be the dict of the module that `__name__` names (not a module
        # replaced in sys.modules, or a script run by another as __main__).
        module = sys.modules.get(mod) if type(mod) is str else None
        md = getattr(module, "__dict__", None) if isinstance(module, types.ModuleType) else None
        if md is None or (g is not md and getattr(g, "real", None) is not md):
            self._unfit("the globals of %s are not its module's", code.co_qualname)
            return
        # Builtins that read the outside world or the interpreter's state (open, input,
        # globals, id, hash...), even when only passed along (map(open, names)).
        for name in _DENIED_BUILTINS.intersection(code.co_names):
            if name not in md and name in _global_names(code):
                self._unfit("%s reads builtin %s", code.co_qualname, name)
                return
        found = []
        why = _check_globals(mod, code.co_names, self.before, found)
        if why is None:
            new = set(code.co_names).difference(self._names)
            self._names.update(new)
            why = _check_outside(self._spaces, new, self._names, found, self.before)
        if why is not None:
            self._unfit("%s reads %s", code.co_qualname, why)

    def evidence(self):
        """(files, globals) that a load checks, or None when the trace is unfit to keep."""
        if not self.fit:
            return None
        files = {}
        glob = {}
        found = [("K", "builtins")]  # a replaced builtin (builtins.round = ...) is seen
        # Every name of the user's code that ran is looked up in every user module and class
        # reached (a helper returning a class or module whose attributes its caller reads).
        names = set()
        for code, (mod, user) in self.codes.items():
            if user:
                names.update(code.co_names)
        mods = set()
        for code, (mod, user) in self.codes.items():
            f = code.co_filename
            if f.startswith("<frozen ") or _namedtuple_new(f, mod):
                continue  # part of Python itself (its version is in the key)
            h = _file_hash(f)
            if h is None:
                _logs.log("guards", "%s: trace not kept: %s is not a readable file", self._name, f)
                return None
            files[f] = h
            if user and mod not in mods:
                mods.add(mod)
                why = _check_globals(mod, names, glob, found)
                if why is not None:
                    _logs.log("guards", "%s: trace not kept: reads %s", self._name, why)
                    return None
        why = _check_outside({}, (), names, found, glob)
        if why is not None:
            _logs.log("guards", "%s: trace not kept: reads %s", self._name, why)
            return None
        # A global the trace changed (a helper's `global N; N += 1`) is not what a later
        # process must have before its first call.
        for k, v in glob.items():
            # (npc's and NumPy's attributes: the trace replaces some with its own while it
            # runs, _capture._Patches; compared as they are after it)
            if k[0][0] != "K" and self.before.get(k, v) != v:
                _logs.log("guards", "%s: trace not kept: it changed %s of %s", self._name, k[1], k[0][1:])
                return None
        return sorted(files.items()), sorted(glob.items())


def _namedtuple_new(filename, mod):
    """Whether code is the __new__ that collections.namedtuple makes from a string."""
    return filename == "<string>" and type(mod) is str and mod.startswith("namedtuple_")


_IMPORT_NAME = __import__("dis").opmap["IMPORT_NAME"]
_LOAD_GLOBAL = __import__("dis").opmap["LOAD_GLOBAL"]
_LOAD_NAME = __import__("dis").opmap["LOAD_NAME"]
_EXTENDED_ARG = __import__("dis").opmap["EXTENDED_ARG"]
_DYNAMIC_READS = frozenset({"globals", "vars", "getattr", "locals", "__dict__", "modules", "__import__", "eval",
                            "exec", "import_module", "__getattribute__", "__builtins__",
                            # a function's or frame's globals and values; hashes that differ
                            # between processes (str.__hash__ as a sort key)
                            "__globals__", "__code__", "__closure__", "__defaults__", "__kwdefaults__",
                            "f_globals", "f_locals", "f_back", "f_builtins", "gi_frame", "cr_frame", "ag_frame",
                            "tb_frame", "__subclasses__", "__hash__"})


def _reads_plainly(code):
    """Whether `code` reads globals only by name: no globals()/vars()/getattr()/sys.modules
    reads, no imports inside it."""
    if _DYNAMIC_READS.intersection(code.co_names):
        return False
    return _IMPORT_NAME not in code.co_code[::2]


def _global_names(code):
    """The names `code` reads as globals (or builtins): its LOAD_GLOBAL instructions' (and
    LOAD_NAME's, which class bodies and module code read globals with)."""
    names = set()
    co = code.co_code
    ext = 0
    for i in range(0, len(co), 2):
        op, arg = co[i], co[i + 1] | ext
        ext = arg << 8 if op == _EXTENDED_ARG else 0
        if op == _LOAD_GLOBAL:
            names.add(code.co_names[arg >> 1])  # (the low bit: whether NULL is pushed too)
        elif op == _LOAD_NAME:
            names.add(code.co_names[arg])
    return names


def _check_globals(mod, names, glob, found):
    """Adds to `glob` the value keys of `names` in module `mod`'s globals and, for the user's
    modules and classes among them (whose attributes `M.NAME` the code may read), of the same
    names among their attributes; the library modules and classes among them are added to
    `found` (_check_outside). Returns None, or what cannot be kept."""
    try:
        return _check_user_names(mod, names, glob, found)
    except _NotKept as e:
        return str(e)


def _check_user_names(mod, names, glob, found):
    todo = [("m", mod)]
    seen = set(todo)
    while todo:
        where = todo.pop()
        d = _namespace(where)
        if d is None:
            return "%s (a module or class read through __getattr__ or a metaclass)" % (where[1:],)
        for name in (names if where[0] == "m" else _with_dunders(names, where)):
            if (where, name) in glob:
                continue
            v = d.get(name, _ABSENT)
            k = _value_key(v)
            if k is None:
                return _why("%s of %s" % (name, where[1:]), v)
            try:
                glob[where, name] = pickle.dumps(k, protocol=4)  # compared byte for byte: -0.0 is not 0.0
            except Exception:  # noqa: BLE001
                return "%s of %s" % (name, where[1:])
            sub = None
            if k[0] == "module":
                if _user_module(v.__name__):
                    sub = ("m", v.__name__)
                elif _library_module(v):
                    found.append(("M", v.__name__))
                elif sys.modules.get(v.__name__) is v:
                    found.append(("K", v.__name__))  # npc's, NumPy's: replaced functions are seen
            elif k[0] == "type":
                if _user_module(v.__module__):
                    sub = ("c", k[1], k[2])
                elif _library_class(v):
                    found.append(("C", k[1], k[2]))
            if sub is not None and sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return None


def _check_outside(spaces, new_names, names, found, glob):
    """Adds to `glob` the keys of the attributes named by the user's code (`names`, of which
    `new_names` are not yet checked in `spaces`) of the library modules and classes in
    `spaces` (checked: their dicts) and `found`, and of those these reach. Which names are
    read from which library module is not followed (`m = sys; m.argv`, a helper returning a
    module): every name of the user's code is checked in each of them. Returns None, or
    what cannot be kept."""
    try:
        return _check_spaces(spaces, new_names, names, found, glob)
    except _NotKept as e:
        return str(e)


def _check_spaces(spaces, new_names, names, found, glob):
    todo = [w for w in found if w not in spaces]
    if new_names:
        for where, d in list(spaces.items()):
            why = _check_names(where, d, new_names, glob, todo)
            if why is not None:
                return why
    while todo:
        where = todo.pop()
        if where in spaces:
            continue
        d = _namespace(where)
        if d is None:
            return "%s" % (where[1:],)
        spaces[where] = d
        why = _check_names(where, d, names, glob, todo)
        if why is not None:
            return why
    return None


def _check_names(where, d, names, glob, todo):
    for name in names:
        v = d.get(name, _ABSENT)
        if v is _ABSENT or (where, name) in glob:
            continue  # (a name a library lacks is taken to be lacking in a later process too)
        k = space_key(where, v)
        if k is None:
            return _why("%s.%s" % (where[-1], name), v)
        try:
            glob[where, name] = pickle.dumps(k, protocol=4)
        except Exception:  # noqa: BLE001
            return "%s.%s" % (where[-1], name)
        if k[0] == "module" and where[0] == "K" and _root(v.__name__) in _CONSTANT_ROOTS:
            if sys.modules.get(v.__name__) is v:
                todo.append(("K", v.__name__))
        elif k[0] == "module" and _library_module(v):
            todo.append(("M", v.__name__))
        elif k[0] == "type" and _library_class(v):
            todo.append(("C", k[1], k[2]))
    return None


def space_key(where, v):
    """What attribute value `v` of module or class `where` (_namespace) is, comparable across
    processes, or None when it cannot be compared. npc's, NumPy's and the builtins' ("K")
    attributes are fixed by the versions in every key unless something replaced them (a
    patched numpy.sum, builtins.round), so values that cannot be compared are compared by type."""
    if where[0] in "MC":
        return _outside_key(v)
    if where[0] == "K":
        k = _outside_key(v)
        return k if k is not None else ("opaque", _string(type(v).__module__), type(v).__qualname__)
    return _value_key(v)


_CLASS_DUNDERS_SKIPPED = frozenset({"__dict__", "__weakref__", "__doc__", "__module__", "__qualname__",
                                    "__firstlineno__", "__static_attributes__", "__annotations__",
                                    "__annotate__", "__slots__", "__orig_bases__", "__parameters__"})


def _with_dunders(names, where):
    """`names` and the special methods (__init__, __call__, __add__...) that the user's classes
    in class `where`'s MRO define: Python calls them without the code naming them."""
    d = _namespace(where)
    cls = _class_of(where)
    if d is None or cls is None:
        return names
    extra = {n for c in cls.__mro__ if _user_module(c.__module__) for n in c.__dict__
             if n.startswith("__") and n.endswith("__") and n not in _CLASS_DUNDERS_SKIPPED}
    return names if extra <= set(names) else set(names) | extra


def _class_of(where):
    m = sys.modules.get(where[1])
    v = m
    for part in where[2].split("."):
        v = v.__dict__.get(part) if isinstance(v, (types.ModuleType, type)) else None
        if v is None:
            return None
    return v if isinstance(v, type) else None


def _namespace(where):
    """The dict of module ("m", "M" or "K", name) or class ("c" or "C", module, qualname), or
    None. (Capitals: a library's, whose attributes are compared by space_key.)"""
    m = sys.modules.get(where[1])
    if not isinstance(m, types.ModuleType):
        return None
    if where[0] in "mMK":
        d = m.__dict__
        # A module __getattr__ serves names of its own: not for the user's modules (a library
        # module's serves names its dict lacks, which are taken to be lacking everywhere).
        return None if where[0] == "m" and "__getattr__" in d else d
    v = m
    for part in where[2].split("."):
        if "<locals>" in part:
            return None
        v = v.__dict__.get(part) if isinstance(v, (types.ModuleType, type)) else None
        if v is None:
            return None
    if not isinstance(v, type) or type(v) is not type:
        return None  # metaclasses may serve attributes of their own
    d = {}
    for c in reversed(v.__mro__):  # inherited attributes
        d.update(c.__dict__)
    return d


def _nested_codes(code):
    if code is None:
        return
    yield code
    for k in code.co_consts:
        if isinstance(k, types.CodeType):
            yield from _nested_codes(k)


def _user_file(f):
    return not (f.startswith(_NPC) or f.startswith(_NUMPY) or f.startswith(_STDLIB) or f.startswith(_PACKAGES)
                or f.startswith("<frozen "))


def _user_module(name):
    """Whether module `name` is the user's own (its file is neither npc's, NumPy's, the
    standard library's nor an installed package's)."""
    m = sys.modules.get(name) if type(name) is str else None
    f = getattr(m, "__file__", None) if isinstance(m, types.ModuleType) else None
    return type(f) is str and _user_file(os.path.abspath(f))


def _root(module):
    return module.partition(".")[0] if type(module) is str else None


_CONSTANT_ROOTS = frozenset({"npc", "numpy", "builtins"})  # fixed by the versions in every key (but "K")


def _library_module(m):
    """Whether module `m` is a library's whose attributes are compared (all but npc's, NumPy's
    and builtins, fixed by the versions in the key); it must be the module sys.modules has
    under its name, which a load looks up."""
    name = m.__name__
    if _root(name) in _CONSTANT_ROOTS:
        return False
    if sys.modules.get(name) is not m:
        raise _NotKept(f"module {name} is not sys.modules[{name!r}]")
    return True


def _library_class(cls):
    """Whether a library's class `cls` has its attributes compared: a plain class (no
    metaclass, which may serve attributes of its own: those are taken to be the same) that
    its module holds under its name."""
    mod = cls.__module__
    if type(cls) is not type or type(mod) is not str or _root(mod) in _CONSTANT_ROOTS or mod == "pybind11_builtins":
        return False
    if "<locals>" in cls.__qualname__:
        raise _NotKept(f"class {cls.__qualname__} is local")
    return True


class _NotKept(Exception):
    """A value of the trace that cannot be compared in a later process."""


_ABSENT = object()
_recording = threading.Lock()
_file_hashes = {}


def _file_hash(path):
    """The content hash of source file `path` (None: not a readable file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    k = (path, st.st_mtime_ns, st.st_size, st.st_ino)
    h = _file_hashes.get(k)
    if h is None:
        try:
            with open(path, "rb") as f:
                h = hashlib.blake2b(f.read(), digest_size=16).hexdigest()
        except OSError:
            return None
        _file_hashes[k] = h
    return h


# ---------------------------------------------------------------- what the user's code may call
# Note [persisted traces]: a call from the user's code is allowed when its result depends on
# its arguments only and it changes nothing a later call would see. _verdict says so.

# Builtins: None allowed; "fn": allowed when its first argument, if callable, is (map(f, xs));
# "obj": allowed when its first argument is no module or class (hasattr(m, "x") reads `m`
# by a computed name). Not listed (so not allowed): open, input, print's relatives in `site`
# (help, exit...), eval, exec, compile, globals, locals, vars, dir, getattr, setattr, delattr,
# id, hash (strings' hashes differ between processes), breakpoint, __import__.
_BUILTIN_CALLS = {n: None for n in (
    "abs", "all", "any", "ascii", "bin", "callable", "chr", "divmod", "format", "hex", "isinstance", "issubclass",
    "len", "max", "min", "next", "oct", "ord", "pow", "print", "repr", "round", "sorted", "sum", "__build_class__",
    "aiter", "anext")}
_BUILTIN_CALLS.update(iter="fn", hasattr="obj")

# Standard library modules whose functions and classes are pure (of their arguments).
_PURE_MODULES = frozenset({"math", "cmath", "operator", "_operator", "functools", "_functools", "itertools",
                           "collections", "bisect", "_bisect", "heapq", "_heapq", "copy", "fractions", "numbers",
                           "abc", "typing"})
# ... of which these call their first argument.
_PURE_HIGHER = {("_functools", "reduce"): "fn", ("functools", "reduce"): "fn", ("_functools", "cmp_to_key"): "fn",
                ("functools", "cmp_to_key"): "fn", ("functools", "cache"): "fn", ("functools", "lru_cache"): "fn",
                ("_operator", "call"): "fn", ("operator", "call"): "fn"}
_HIGHER_TYPES = {map: "fn", filter: "fn", functools.partial: "fn", __import__("itertools").starmap: "fn",
                 __import__("itertools").filterfalse: "fn", __import__("itertools").takewhile: "fn",
                 __import__("itertools").dropwhile: "fn",
                 # read attributes by computed names, in C (a sort key): not allowed
                 __import__("operator").attrgetter: False, __import__("operator").methodcaller: False,
                 # the clock with "now" or "today"
                 _np.datetime64: "clock", _np.timedelta64: "clock"}

# npc's and NumPy's functions (and classes, and array methods) that read or write files,
# read or set the process's state, or print it; random numbers (by module) too.
_ARRAY_IO = frozenset({"load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromfile",
                       "fromregex", "memmap", "tofile", "dump", "recfromtxt", "recfromcsv", "open_memmap",
                       "DataSource", "NpzFile", "read_array", "write_array", "load_library", "show_config",
                       "show_runtime", "info", "lookfor", "source"})
_ARRAY_STATE = frozenset({"geterr", "seterr", "geterrcall", "seterrcall", "getbufsize", "setbufsize",
                          "get_printoptions", "set_printoptions", "set_string_function", "seed", "get_state",
                          "set_state", "get_num_threads", "set_num_threads", "datetime_as_string"})
_ARRAY_UNSAFE = ("npc.random", "numpy.random", "npc.compiler", "npc._config", "npc._logging", "npc._blas_env",
                 "npc._dask_hook", "npc.dask", "numpy.lib.npyio", "numpy.lib._npyio_impl", "numpy.lib.format",
                 "numpy.lib._format_impl", "numpy.lib._datasource", "numpy.ctypeslib", "numpy.f2py",
                 "numpy.distutils")
_ARRAY_HIGHER = frozenset({"vectorize", "frompyfunc", "apply_along_axis", "apply_over_axes", "fromfunction"})
# Methods of allowed classes that are not allowed: hashes of strings differ between
# processes; arrays' methods writing files.
_DENIED_METHODS = frozenset({"__hash__", "tofile", "dump"})

# npc's and NumPy's function objects, stateless (their module and name say what they are).
_FUNCTION_OBJECTS = frozenset({("numpy", "_ArrayFunctionDispatcher"), ("npc._core", "function"),
                               ("npc._ufunc", "ufunc"), ("npc._ufunc", "_RenamedUfunc"),
                               ("npc._fallback", "FallbackUfunc")})
_VECTORIZE = frozenset({("numpy", "vectorize"), ("npc", "vectorize")})
_COMPILED = ("npc.compiler._api", "CompiledFunction")
_DESCRIPTORS = (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType)
_LRU_WRAPPER = type(functools.lru_cache(None)(lambda: None))
_TUPLEGETTER = type(__import__("collections").namedtuple("_T", "a").a)
_types_allowed = {}  # id -> (class, whether it is allowed: _type_ok)


def _member(mod, name):
    """The verdict (_verdict) of a function or class `name` of module `mod`."""
    if type(mod) is not str or type(name) is not str:
        return False
    root = _root(mod)
    if root == "npc" or root == "numpy":
        if name in _ARRAY_IO or name in _ARRAY_STATE or mod.startswith(_ARRAY_UNSAFE):
            return False
        return "fn" if name in _ARRAY_HIGHER else None
    if mod == "builtins":
        return _BUILTIN_CALLS.get(name, False)
    if mod in _PURE_MODULES:
        return _PURE_HIGHER.get((mod, name))
    return False


def _type_ok(cls):
    """Whether class `cls` may be called and its methods may be: builtins, npc's and NumPy's
    (but their random and I/O classes), the pure modules', and the user's own classes whose
    bases all are."""
    e = _types_allowed.get(id(cls))
    if e is not None and e[0] is cls:
        return e[1]
    if len(_types_allowed) > 4096:
        _types_allowed.clear()
    mod = cls.__module__
    if type(mod) is not str:
        ok = False
    elif mod == "builtins" or mod == "pybind11_builtins":
        ok = True
    elif _root(mod) in ("npc", "numpy"):
        ok = (mod, cls.__qualname__) == _COMPILED or _member(mod, cls.__name__) is not False
    elif mod in _PURE_MODULES:
        ok = True
    elif _user_module(mod):
        _types_allowed[id(cls)] = (cls, True)  # (for the walk of its bases)
        ok = all(b is cls or _type_ok(b) for b in cls.__mro__)
    else:
        ok = False
    _types_allowed[id(cls)] = (cls, ok)
    return ok


def _verdict(c, depth=0):
    """Whether the user's code may call `c`: None (allowed), "fn" (allowed when its first
    argument, if callable, is: map(f, xs)), "obj" (allowed when its first argument is no
    module or class) or False (Note [persisted traces])."""
    t = type(c)
    if depth > 8:
        return False
    if t is types.FunctionType:
        if _user_file(c.__code__.co_filename):
            return None  # the user's: its code is checked as it runs
        return _member(c.__module__, c.__name__)
    if t is types.MethodType:
        k = _verdict(c.__func__, depth + 1)
        return k if k is None else False
    if t is types.BuiltinFunctionType:
        s = c.__self__
        if s is None or isinstance(s, types.ModuleType):
            return _member(c.__module__ or getattr(s, "__name__", None), c.__name__)
        if type(s) is str and c.__name__ in ("format", "format_map") and not _plain_format(s):
            return False  # "{0.environ[X]}".format(os) reads attributes and items by name
        # A method bound to its object (list.append of a list) or class (dict.fromkeys).
        return None if _type_ok(s if isinstance(s, type) else type(s)) and c.__name__ not in _DENIED_METHODS else False
    if t in _DESCRIPTORS:
        if c.__objclass__ is str and c.__name__ in ("format", "format_map"):
            return "format"  # str.format(s, ...), as a method call reports it: `s` is checked
        return None if _type_ok(c.__objclass__) and c.__name__ not in _DENIED_METHODS else False
    if t is types.MethodWrapperType:
        return None if _type_ok(type(c.__self__)) and c.__name__ not in _DENIED_METHODS else False
    if isinstance(c, type):
        if not _type_ok(c):
            return False
        if c in _HIGHER_TYPES:
            return _HIGHER_TYPES[c]
        return _member(c.__module__, c.__name__) if _root(c.__module__) in ("npc", "numpy") else None
    if isinstance(c, _np.ufunc):
        return False if _pyfunc_ufunc(c) else None
    if t is functools.partial or t is _LRU_WRAPPER:
        k = _verdict(c.func if t is functools.partial else c.__wrapped__, depth + 1)
        return k if k is None else False
    if not _type_ok(t):
        return False
    tk = (t.__module__, t.__qualname__)
    if tk == _COMPILED:
        k = _verdict(c._fn, depth + 1)  # a compiled function: its Python runs while tracing
        return k if k is None else False
    if tk in _FUNCTION_OBJECTS:
        # npc's and NumPy's function objects (NumPy's dispatchers, npc's functions and
        # ufuncs): by their own module and name.
        mod, name = getattr(c, "__module__", None), getattr(c, "__name__", None)
        return _member(mod if type(mod) is str else t.__module__, name if type(name) is str else "")
    if tk in _VECTORIZE:
        return None if _verdict(c.pyfunc, depth + 1) is None else False
    if _root(t.__module__) in ("npc", "numpy"):
        return None if tk == ("numpy", "poly1d") else False  # (other objects: not known)
    # Instances of the user's classes (their __call__ is the user's code), of builtins and of
    # the pure modules' classes (operator.itemgetter).
    return _HIGHER_TYPES.get(t)


def _plain_format(s):
    """Whether format string `s` names no attribute or item of its arguments."""
    try:
        for _, field, spec, _ in _FORMATTER.parse(s):
            if (field and ("." in field or "[" in field)) or (spec and "{" in spec and not _plain_format(spec)):
                return False
    except (ValueError, RecursionError):
        return False
    return True


_FORMATTER = __import__("string").Formatter()


def _pyfunc_ufunc(u):
    """Whether ufunc `u` is numpy.frompyfunc's, which calls a Python callable of its own."""
    name = getattr(u, "__name__", None)
    return type(name) is not str or name.endswith("(vectorized)")


def _argument_ok(kind, a):
    if kind == "obj":
        return not isinstance(a, (types.ModuleType, type))
    if kind == "format":
        return not isinstance(a, str) or _plain_format(a)
    if kind == "clock":
        return not (isinstance(a, (str, bytes)) and a.strip().lower() in ("now", "today", b"now", b"today"))
    return a is sys.monitoring.MISSING or not callable(a) or _verdict(a) is None


def _user_function(c):
    """The user's function that `c` wraps (functools.partial, lru_cache, a compiled
    function), or None."""
    for _ in range(8):
        t = type(c)
        if t is types.FunctionType:
            return c if _user_file(c.__code__.co_filename) else None
        if t is functools.partial:
            c = c.func
        elif t is _LRU_WRAPPER:
            c = c.__wrapped__
        elif (t.__module__, t.__qualname__) == _COMPILED:
            c = c._fn
        else:
            return None
    return None


def _why(what, v):
    """Why a read of `v` as `what` is not kept, for the log."""
    if callable(v) and not isinstance(v, type):
        return f"{what} ({_describe(v)}, not known to depend only on its arguments)"
    return f"{what} ({_describe(v)}, not a plain value)"


def _describe(v):
    """A short name of `v` for the log."""
    try:
        if isinstance(v, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
                      + _DESCRIPTORS):
            mod = getattr(v, "__module__", None) or getattr(getattr(v, "__objclass__", None), "__module__", None)
            name = getattr(v, "__qualname__", None) or getattr(v, "__name__", "?")
            return f"{mod}.{name}" if type(mod) is str and not isinstance(v, types.ModuleType) else str(name)
        return "a %s" % type(v).__qualname__
    except Exception:  # noqa: BLE001
        return "?"


_DENIED_BUILTINS = frozenset(n for n, v in vars(__import__("builtins")).items()
                             if callable(v) and not isinstance(v, type) and _verdict(v) is False)

_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_MAX_ITEMS = 256  # lists and tuples longer than this are not kept by value (as _guards._CONTENTS_MAX)


def plain(v, depth=0):
    """Whether `v` is made of plain values only: None, numbers, strings, bytes, NumPy scalars
    and dtypes, the builtin and NumPy scalar types, tuples and lists of them."""
    t = type(v)
    if t in _PLAIN or isinstance(v, (_np.generic, _np.dtype)):
        return True
    if t is tuple or t is list:
        return depth < 32 and all(plain(x, depth + 1) for x in v)
    if t is type:
        return v in _PLAIN or v in (tuple, list, dict) or (issubclass(v, _np.generic) and v.__module__ == "numpy")
    return False


_code_hashes = {}


def _code_hash(code):
    """A hash of a code object (its bytecode, constants, names and nested code): functions of
    one line (lambdas) share their name, file and line."""
    h = _code_hashes.get(code)
    if h is None:
        if len(_code_hashes) > 4096:
            _code_hashes.clear()
        h = _code_hashes[code] = hashlib.blake2b(marshal.dumps(code), digest_size=16).hexdigest()
    return h


def _value_key(v):
    """What a global's value is, comparable across processes, or None when it cannot be."""
    if v is _ABSENT:
        return ("absent",)
    if isinstance(v, types.ModuleType):
        return ("module", v.__name__)
    if isinstance(v, types.FunctionType):
        if (v.__closure__ or v.__dict__ or not plain(v.__defaults__ or ())
                or not plain(tuple((v.__kwdefaults__ or {}).items()))):
            return None
        c = v.__code__
        if _verdict(v) is False:
            return None  # a library's function that the user's code may not call (os.getenv)
        return ("function", v.__module__, v.__qualname__, c.co_filename, c.co_firstlineno, _code_hash(c),
                v.__defaults__ or (), tuple(sorted((v.__kwdefaults__ or {}).items())))
    if isinstance(v, _np.ufunc):
        return None if _pyfunc_ufunc(v) else ("ufunc", v.__name__)
    if isinstance(v, types.BuiltinFunctionType):
        owner = getattr(v, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            return None  # a bound method (dict.get of some dict): its object is not known
        if _verdict(v) is False:
            return None  # (time.perf_counter)
        return ("builtin", getattr(v, "__module__", None), v.__qualname__)
    if isinstance(v, type):
        return ("type", v.__module__, v.__qualname__)
    t = type(v)
    if t in (staticmethod, classmethod, property):
        return _wrapper_key(v, _value_key)
    if t is _TUPLEGETTER:
        return ("tuplegetter", v.__reduce__()[1][0])  # a namedtuple's field: its index
    if t in (list, tuple):
        return ("value", t, tuple(v)) if len(v) <= _MAX_ITEMS and plain(v) else None
    if plain(v):
        return ("value", t, v)
    tk = (t.__module__, t.__qualname__)
    if tk in _FUNCTION_OBJECTS and _verdict(v) is not False:
        # npc's and NumPy's function objects (from numpy import dot): fixed by the versions.
        return ("callable", tk, _string(getattr(v, "__module__", None)), _string(getattr(v, "__name__", None)))
    if tk == _COMPILED:
        k = _value_key(v._fn)  # a compiled function: the function it compiles
        return None if k is None else ("compiled", k)
    return None


def _wrapper_key(v, key):
    """The key of a staticmethod, classmethod or property `v` from `key` of the functions it
    wraps, or None when one has none."""
    t = type(v)
    if t is property:
        ks = tuple(("absent",) if f is None else key(f) for f in (v.fget, v.fset, v.fdel))
        return None if None in ks else ("property",) + ks
    k = key(v.__func__)
    return None if k is None else (t.__name__, k)


def _outside_key(v):
    """What an attribute of a library's module or class is, comparable across processes
    (_value_key, and the library's own kinds of values), or None when it cannot be or is
    something the user's code may not call (Note [persisted traces])."""
    t = type(v)
    if t is types.FunctionType:
        if _user_file(v.__code__.co_filename):
            return _value_key(v)
        return None if _verdict(v) is False else ("function", v.__module__, v.__qualname__)
    if t in _DESCRIPTORS:
        if _verdict(v) is False:
            return None
        return ("descriptor", t.__name__, _string(v.__objclass__.__module__), v.__objclass__.__qualname__, v.__name__)
    if t in (types.GetSetDescriptorType, types.MemberDescriptorType):
        return ("descriptor", t.__name__, _string(v.__objclass__.__module__), v.__objclass__.__qualname__, v.__name__)
    if t in (staticmethod, classmethod, property):
        return _wrapper_key(v, _outside_key)
    k = _value_key(v)
    if k is None and isinstance(v, tuple) and hasattr(t, "n_sequence_fields") and plain(tuple(v)):
        return ("struct", t.__module__, t.__qualname__, tuple(v))  # sys.float_info, sys.version_info
    return k


def _string(s):
    return s if type(s) is str else None
