"""Traces kept across processes: Note [persisted traces].

`Recorder` watches a trace for the code it runs; `store` writes a finished entry's graph or
plan with what it was made from; `load` finds an entry for a call in a new process and checks
that everything it was made from is still the same.
"""
import functools
import hashlib
import io
import marshal
import os
import pickle
import stat
import struct
import sys
import sysconfig
import threading
import types

import numpy as _np

from .. import _core
from .._config import config
from . import _logs
from ._state import _NPC_DIR, _NUMPY_DIR

# Note [persisted traces]
# The first call of a compiled loop traces it (running its Python, recording every operation)
# and lowers what it recorded; the kernels come from the disk cache (Note [disk cache] in
# src/fusion/jit.cpp), but tracing a loop of a million operations takes seconds in every new
# process. With config.trace_cache on, the entry a first trace makes (its graph, or the plan of
# a cut loop: Note [plan serialization] in src/tracer/plan_io.cpp) is written to the disk
# cache as "<32 hex>.trace", and the first call of the same function in a later process loads it
# instead of tracing.
#
# A trace is the function's Python run on traced stand-ins, so an entry may be reused only
# where that run would record the same thing. The file's name hashes, and its contents repeat
# for comparison:
# - the guard key of the call (the arguments' dtypes, shapes and layouts, Python scalars by
#   value, the function's numeric and list globals and closure values: _guards.py), which the
#   in-process cache also uses; keys holding an object's identity (captured arrays, other
#   objects passed as arguments) are never stored (_guards.portable_key);
# - the function (module, qualified name, file, first line, a hash of its code, its default
#   and closure values), the npc build (the GNU build id
#   of _core), Python's and NumPy's versions, every npc.config setting, backend, fullgraph
#   and dynamic.
# The entry lists what the trace ran, checked before it is used:
# - the content hash of every source file whose code ran while tracing (sys.monitoring's
#   PY_START); code without a real file (`<stdin>`, exec'd strings) makes the trace unfit;
# - for the code outside the standard library and installed packages (the user's own), the
#   module globals each such function may read (its code's names): modules, functions (by
#   module, name, file and line; no closures; plain default values), classes, builtins and
#   ufuncs by name, numbers, strings and lists/tuples of them by value (compared as pickled
#   bytes: -0.0 is not 0.0, (1, 2) is not (1.0, 2.0)), read as the code starts and again
#   after the trace (a global the trace changes is not kept); classes with their inherited
#   attributes. A global of any other kind (a dict, an object, an array, a bound method, a
#   function with attributes) makes the trace unfit, since its contents are not known to be
#   the same in another process; so do reads the names cannot show (globals(), vars(),
#   getattr(), sys.modules, a module __getattr__, imports inside a function), globals that
#   are not the dict of the module named by their __name__ (a module replaced in
#   sys.modules, a script run by another tool as __main__), and modules or classes held in
#   the compiled function's closure.
# Only a function's first trace is stored (its guard state is then the initial one, which a
# new process also starts from), and only a plain one: no graph breaks, captured arrays,
# attribute guards, changed containers, results viewing the arguments, Python warnings, host
# calls (numpy.random) or runtime scalars made static by a retrace. Entries are files of
# the kernel cache, read and written by its own code (_core._cache_entry_read/_write: Note
# [cache trust], a sealed trailer, trimmed to cache_size_limit and emptied by clear_cache()
# with the kernels, Note [cache size]), and the payload is read by
# npc's own validating readers; the metadata is unpickled with a loader that accepts only
# plain values. What a user must know (docs/compile.md): values a function reads that are
# neither arguments nor module globals (attributes of objects, environment variables, files)
# are assumed the same in the new process, as module-level code's results are.

# Note [modes kept across processes]
# Note [slow graph breaks] in _api.py times the calls of a guard key, traced against eager,
# and may decide that the key runs eagerly ("eager": the function as it is, or "npc": on npc
# views of its NumPy arguments). A new process would trace again and measure anew: its first
# two or three calls are traced, a loss of seconds for a function whose breaks cost more than
# its operations (crc16: 1.3 s a traced call, 0.13 s NumPy's). With config.mode_cache on
# (the default; NPC_MODE_CACHE=0 turns it off) and config.eager_if_faster on, an eager
# decision is written to the disk cache as "<32 hex>.mode", and a later process's first call
# with that key runs in the recorded mode at once: no trace, counted in eager_runs, logged
# under `fallback`.
# - The name hashes what a kept trace's does (disk_name: the function's identity with its
#   code hash, defaults and closure values, the portable guard key, npc build, Python and
#   NumPy versions, npc.config settings, backend, fullgraph, dynamic), so a changed function
#   or other shapes, dtypes or scalars are decided anew; keys holding an object's identity
#   are never kept. The helpers the function calls are not checked (unlike a kept trace's
#   files and globals): a result never depends on the mode, since eager calls are NumPy's
#   semantics, which compiled code reproduces, so a stale decision costs speed only.
# - Only eager decisions are kept: "traced" is what a first call does anyway. A decision for
#   one of several entries of a key (dynamic shapes with constraints) is not kept.
# - A key is looked up (once per process: CompiledFunction._kept_modes) before its first
#   trace, and again as its timed calls start (_new_timing), for a key that the first trace
#   changed (a float made static: the key a later process computes before tracing is the
#   unchanged one); such a function then traces once in a later process instead of two or
#   three times. A kept "npc" mode runs as "eager" where npc views are not offered (a list
#   or dict argument, which the function might change: Note [eager npc calls]).
# - A kept decision is trusted, not measured again. Its measurement alternated traced and
#   eager calls, so load on the machine slowed both alike; measuring again would cost the
#   traced calls this entry exists to avoid. clear_cache() removes it with the kernels (a
#   way to decide anew, as is a change of the function's code; npc.compiler.reset() forgets
#   this process's measurements only); a damaged or foreign entry (wrong magic, format, key
#   or mode) is ignored and the call traces as before.
# - Entries go through _core._cache_entry_read/_write as kept traces do (Note [cache trust],
#   sealed trailer, trimmed to cache_size_limit, cleared by clear_cache()); the payload is
#   unpickled with _Loader (plain values only).

FORMAT = 1
_MAGIC = b"NPCTRACE"
_MODE_MAGIC = b"NPCMODE1"

config.register("trace_cache", os.environ.get("NPC_TRACE_CACHE", "0") not in ("", "0"),
                "keep first traces in cache_dir and load them in later processes instead of tracing "
                "($NPC_TRACE_CACHE; Note [persisted traces])")
config.register("mode_cache", os.environ.get("NPC_MODE_CACHE", "1") != "0",
                "keep eager_if_faster's eager decisions in cache_dir and follow them in later processes "
                "without tracing ($NPC_MODE_CACHE; Note [modes kept across processes])")

_STDLIB = tuple(os.path.abspath(p) + os.sep for p in {sysconfig.get_paths()["stdlib"],
                                                      sysconfig.get_paths()["platstdlib"]})
_PACKAGES = tuple(os.path.abspath(p) + os.sep for p in {sysconfig.get_paths()["purelib"],
                                                        sysconfig.get_paths()["platlib"]})
_NPC = _NPC_DIR + os.sep
_NUMPY = _NUMPY_DIR + os.sep


# ---------------------------------------------------------------- what a trace runs
class Recorder:
    """The code objects that start while a trace runs, and the globals of the user's."""

    _tool = None

    def __init__(self, fn):
        self.codes = {}  # code -> (module name of its globals, whether it is the user's code)
        self.fit = True
        self.before = {}  # the user's globals as their code started (compared after the trace)
        self.disable = True
        self._nested = set(_nested_codes(getattr(fn, "__code__", None)))

    @classmethod
    def start(cls, fn):
        """A recorder of the trace about to run, or None when none can record it (no
        sys.monitoring, no free tool id, or another thread's trace recording: events are
        process-wide, so one trace at a time is recorded; the other is not kept)."""
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
            rec = cls(fn)
            rec._tool = tool
            mon.register_callback(tool, mon.events.PY_START, rec._started)
            # Each code location reports once (DISABLE), and locations disabled by an earlier
            # trace must fire again; restart_events() re-enables every tool's, so with another
            # tool active (a debugger, coverage) every start is reported instead.
            rec.disable = not any(mon.get_tool(t) is not None for t in range(6) if t != tool)
            if rec.disable:
                mon.restart_events()
            mon.set_events(tool, mon.events.PY_START)
            return rec
        except ValueError:
            _recording.release()
            return None

    def stop(self):
        mon = sys.monitoring
        try:
            mon.set_events(self._tool, 0)
            mon.register_callback(self._tool, mon.events.PY_START, None)
            mon.free_tool_id(self._tool)
        finally:
            _recording.release()

    def _started(self, code, offset):
        if code not in self.codes:
            try:
                self._record(code, sys._getframe(1).f_globals)
            except Exception:  # noqa: BLE001 - whatever the user's objects raise: not kept
                self.fit = False
                self.codes[code] = (None, True)
        return sys.monitoring.DISABLE if self.disable else None

    def _record(self, code, g):
        mod = g.get("__name__")
        user = _user_file(code.co_filename) and not _namedtuple_new(code.co_filename, mod)
        self.codes[code] = (mod, user)
        if not user:
            return
        # Closures of the user's functions other than the compiled one (and code nested in
        # it) hold values nothing here can check; so do reads of globals by a computed name
        # and imports inside functions.
        if (code.co_freevars and code not in self._nested) or not _reads_plainly(code):
            self.fit = False
            return
        # The globals must be the dict of the module that `__name__` names (not a module
        # replaced in sys.modules, or a script run by another as __main__).
        module = sys.modules.get(mod) if type(mod) is str else None
        md = getattr(module, "__dict__", None) if isinstance(module, types.ModuleType) else None
        if md is None or (g is not md and getattr(g, "real", None) is not md):
            self.fit = False
            return
        if not _check_globals(mod, code.co_names, self.before):
            self.fit = False

    def evidence(self):
        """(files, globals) that a load checks, or None when the trace is unfit to keep."""
        if not self.fit:
            return None
        files = {}
        glob = {}
        for code, (mod, user) in self.codes.items():
            f = code.co_filename
            if f.startswith("<frozen ") or _namedtuple_new(f, mod):
                continue  # part of Python itself (its version is in the key)
            h = _file_hash(f)
            if h is None:
                return None
            files[f] = h
            if user and not _check_globals(mod, code.co_names, glob):
                return None
        # A global the trace changed (a helper's `global N; N += 1`) is not what a later
        # process must have before its first call.
        if any(self.before.get(k, v) != v for k, v in glob.items()):
            return None
        return sorted(files.items()), sorted(glob.items())


def _namedtuple_new(filename, mod):
    """Whether code is the __new__ that collections.namedtuple makes from a string."""
    return filename == "<string>" and type(mod) is str and mod.startswith("namedtuple_")


_IMPORT_NAME = __import__("dis").opmap["IMPORT_NAME"]
_DYNAMIC_READS = frozenset({"globals", "vars", "getattr", "locals", "__dict__", "modules", "__import__", "eval",
                            "exec", "import_module", "__getattribute__", "__builtins__"})


def _reads_plainly(code):
    """Whether `code` reads globals only by name: no globals()/vars()/getattr()/sys.modules
    reads, no imports inside it."""
    if _DYNAMIC_READS.intersection(code.co_names):
        return False
    return _IMPORT_NAME not in code.co_code[::2]


def _check_globals(mod, names, glob):
    """Adds to `glob` the value keys of `names` in module `mod`'s globals and, for the user's
    modules and classes among them (whose attributes `M.NAME` the code may read), of the same
    names among their attributes; False when one cannot be kept."""
    todo = [("m", mod)]
    seen = set(todo)
    while todo:
        where = todo.pop()
        d = _namespace(where)
        if d is None:
            return False
        for name in names:
            if (where, name) in glob:
                continue
            v = d.get(name, _ABSENT)
            k = _value_key(v)
            if k is None:
                return False
            try:
                glob[where, name] = pickle.dumps(k, protocol=4)  # compared byte for byte: -0.0 is not 0.0
            except Exception:  # noqa: BLE001
                return False
            if k[0] == "module" or k[0] == "type":
                m = v if k[0] == "module" else sys.modules.get(v.__module__)
                f = getattr(m, "__file__", None)
                sub = ("m", v.__name__) if k[0] == "module" else ("c", k[1], k[2])
                if f is not None and _user_file(os.path.abspath(f)) and sub not in seen:
                    seen.add(sub)
                    todo.append(sub)
    return True


def _namespace(where):
    """The dict of module ("m", name) or class ("c", module, qualname), or None."""
    m = sys.modules.get(where[1])
    if not isinstance(m, types.ModuleType):
        return None
    if where[0] == "m":
        d = m.__dict__
        return None if "__getattr__" in d else d  # a module __getattr__ serves names of its own
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
        return ("function", v.__module__, v.__qualname__, c.co_filename, c.co_firstlineno, _code_hash(c),
                v.__defaults__ or (), tuple(sorted((v.__kwdefaults__ or {}).items())))
    if isinstance(v, _np.ufunc):
        return ("ufunc", v.__name__)
    if isinstance(v, types.BuiltinFunctionType):
        owner = getattr(v, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            return None  # a bound method (dict.get of some dict): its object is not known
        return ("builtin", getattr(v, "__module__", None), v.__qualname__)
    if isinstance(v, type):
        return ("type", v.__module__, v.__qualname__)
    if type(v) in (list, tuple):
        return ("value", type(v), tuple(v)) if len(v) <= _MAX_ITEMS and plain(v) else None
    if plain(v):
        return ("value", type(v), v)
    return None


# ---------------------------------------------------------------- keys and files
@functools.lru_cache(maxsize=1)
def _environment():
    """What every key holds: the format, Python's and NumPy's versions, the npc build (the
    extension's build id and the content of npc's Python files, which may change apart)."""
    h = hashlib.blake2b(digest_size=16)
    for root, dirs, files in os.walk(_NPC_DIR):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".py"):
                p = os.path.join(root, f)
                h.update(p.encode() + b"\0" + (_file_hash(p) or "?").encode())
    return (FORMAT, sys.version, _np.__version__, _core._build_id(), h.hexdigest())


def disk_name(cf, key, suffix=".trace"):
    """The file name of `cf`'s entry for guard key `key` (a kept trace, or with suffix
    ".mode" a kept mode: Note [modes kept across processes]), and the key's bytes (None, None
    when the key cannot be kept)."""
    from ._guards import portable_key
    if not portable_key(key):
        return None, None
    fn = cf._fn
    code = getattr(fn, "__code__", None)
    if code is None or not isinstance(fn, types.FunctionType):
        return None, None
    # Default values are constants of the trace; closure values other than the guarded
    # numbers, lists and arrays (in the key) must be comparable too.
    defaults = (fn.__defaults__ or (), tuple(sorted((fn.__kwdefaults__ or {}).items())))
    if not plain(defaults):
        return None, None
    cells = []
    for cell in fn.__closure__ or ():
        try:
            v = cell.cell_contents
        except ValueError:
            cells.append(("empty",))  # an empty cell
            continue
        if isinstance(v, (_core.ndarray, _np.ndarray)):
            cells.append(("array",))  # guarded by identity in the key (never portable)
            continue
        k = _value_key(v)
        if k is None or k[0] in ("module", "type"):
            return None, None  # (the attributes of a module or class in a closure are not checked)
        cells.append(k)
    try:
        # The code itself: lambdas of one line share their name, file and line.
        code_hash = _code_hash(code)
        kbytes = pickle.dumps(key, protocol=4)
        ident = pickle.dumps((_environment(), repr(sorted(config.as_dict().items())),
                              fn.__module__, cf._name, code.co_filename, code.co_firstlineno, code_hash, defaults,
                              tuple(cells), cf._backend, bool(cf._fullgraph), cf._dynamic), protocol=4)
    except Exception:  # noqa: BLE001 - anything that does not pickle is not kept
        return None, None
    return hashlib.blake2b(ident + kbytes, digest_size=16).hexdigest() + suffix, kbytes


_MAX_CONSTANT_BYTES = 1 << 26


def constants(captured):
    """The arrays a trace captured that are not the user's (constants npc made while tracing,
    such as the mask of np.tril; the user's own are guarded by identity and never kept) as
    (input slot, dtype, shape, bytes), or None when they cannot be kept (not C-contiguous, or
    too large)."""
    out = []
    total = 0
    for slot, a in captured:
        if not isinstance(a, (_core.ndarray, _np.ndarray)) or not a.flags.c_contiguous:
            return None
        x = _np.asarray(a)
        if not x.dtype.isnative or x.dtype.hasobject:
            return None
        total += x.nbytes
        if total > _MAX_CONSTANT_BYTES:
            return None
        out.append((slot, x.dtype.str, tuple(x.shape), x.tobytes()))
    return out


def store(cf, kbytes, name, evidence, entry, payload, kind, consts, last_shapes, last_ints):
    """Writes `entry` (its graph or plan bytes `payload`, its captured constants `consts`) as
    disk cache entry `name`."""
    files, glob = evidence
    meta = {"kind": kind, "backend": entry.backend, "key": kbytes, "files": files, "globals": glob, "constants": consts,
            "arg_inputs": list(entry.arg_inputs), "transposed": list(entry.transposed),
            "covered": [tuple(c) for c in entry.covered], "ninputs": entry.ninputs, "nscalars": entry.nscalars,
            "out_tree": entry.out_tree, "numpy_out": bool(entry.numpy_out), "constraints": list(entry.constraints),
            "last_shapes": sorted(last_shapes.items(), key=repr), "last_ints": sorted(last_ints.items(), key=repr)}
    try:
        mbytes = pickle.dumps(meta, protocol=4)
        if not _valid(_Loader(io.BytesIO(mbytes)).load()):  # what a load would refuse is not written
            return False
    except Exception:  # noqa: BLE001 - a value that does not pickle plainly: not kept
        return False
    body = _MAGIC + struct.pack("<IQ", FORMAT, len(mbytes)) + mbytes + payload
    if not _core._cache_entry_write(name, body):
        return False
    _logs.log("guards", "%s: trace kept in %s as %s", cf._name, config.cache_dir, name)
    return True


class _Loader(pickle.Unpickler):
    """Unpickles plain values only (Note [persisted traces])."""

    _BUILTINS = {"tuple", "list", "dict", "int", "float", "complex", "bool", "str", "bytes", "type", "NoneType",
                 "set", "frozenset"}

    def find_class(self, module, name):
        if module == "builtins" and name in self._BUILTINS:
            return getattr(__import__("builtins"), name)
        if module in ("numpy", "numpy.dtypes", "numpy._core.multiarray", "numpy.core.multiarray"):
            obj = getattr(sys.modules.get(module) or __import__(module, fromlist=["_"]), name, None)
            if obj is not None and (name == "scalar" or (isinstance(obj, type) and issubclass(obj, (_np.generic,
                                                                                                  _np.dtype)))):
                return obj
        raise pickle.UnpicklingError(f"npc trace cache: {module}.{name} is not a plain value")


def _ints(v, lo, hi, n=None):
    return (type(v) in (list, tuple) and (n is None or len(v) == n)
            and all(type(x) is int and lo <= x < hi for x in v))


def _valid_tree(t, nout, depth=0):
    if type(t) is not tuple or not t or depth > 64:
        return False
    if t[0] == "A":
        return len(t) == 3 and type(t[1]) is int and 0 <= t[1] < nout and type(t[2]) is bool
    if t[0] == "S":
        return len(t) == 2 and plain(t[1])
    if t[0] is dict:
        return len(t) == 2 and type(t[1]) in (list, tuple) and all(
            type(kv) is tuple and len(kv) == 2 and plain(kv[0]) and _valid_tree(kv[1], nout, depth + 1) for kv in t[1])
    if t[0] is tuple or t[0] is list:
        return len(t) == 2 and type(t[1]) in (list, tuple) and all(_valid_tree(c, nout, depth + 1) for c in t[1])
    return False


def _valid(meta):
    """Whether the fields of an entry's metadata have the types and ranges npc.compile's
    replay relies on (the payload is checked by its own reader)."""
    try:
        n = meta["ninputs"]
        if type(n) is not int or not 0 <= n < 1 << 20 or type(meta["nscalars"]) is not int or meta["nscalars"] < 0:
            return False
        if meta["kind"] not in ("plan", "graph") or meta["backend"] not in ("fused", "eager"):
            return False
        if not _ints(meta["arg_inputs"], 0, n) or not _ints(meta["transposed"], 0, n):
            return False
        if not all(_ints(c, 0, 1 << 20, 2) for c in meta["covered"]):
            return False
        if not all(_ints(c[:2], -1 << 20, 1 << 20) and _ints(c[2:4], -1 << 20, 1 << 20) and type(c[4]) is int
                   for c in meta["constraints"]):
            return False
        slots = set(meta["arg_inputs"])
        for slot, dt, shape, data in meta["constants"]:
            d = _np.dtype(dt)
            if (type(slot) is not int or not 0 <= slot < n or slot in slots or not d.isnative or d.hasobject
                    or not _ints(shape, 0, 1 << 62) or type(data) is not bytes
                    or len(data) != d.itemsize * int(_np.prod(shape, dtype=_np.int64))):
                return False
            slots.add(slot)
        return (_valid_tree(meta["out_tree"], 1 << 20) and type(meta["numpy_out"]) is bool
                and all(type(f) is str and type(h) is str for f, h in meta["files"]))
    except (KeyError, TypeError, ValueError, IndexError):
        return False


def load(cf, key, name, kbytes):
    """The entry stored for `cf`'s guard key `key` as `name`, checked, or None. Returns
    (meta, graph-or-plan)."""
    body = _core._cache_entry_read(name)
    if body is None or not body.startswith(_MAGIC):
        return None
    try:
        version, mlen = struct.unpack_from("<IQ", body, len(_MAGIC))
        start = len(_MAGIC) + 12
        if version != FORMAT or start + mlen > len(body):
            return None
        meta = _Loader(io.BytesIO(body[start:start + mlen])).load()
        if type(meta) is not dict or meta.get("key") != kbytes or not _valid(meta):
            return None
        for f, h in meta["files"]:
            if _file_hash(f) != h:
                _logs.log("guards", "%s: kept trace not used: %s changed", cf._name, f)
                return None
        for (where, gname), v in meta["globals"]:
            d = _namespace(where)
            if d is None or type(v) is not bytes or pickle.dumps(_value_key(d.get(gname, _ABSENT)), protocol=4) != v:
                _logs.log("guards", "%s: kept trace not used: %s of %s differs", cf._name, gname, where[1:])
                return None
        payload = memoryview(body)[start + mlen:]  # the graphs' megabytes are not copied
        if meta["kind"] == "plan":
            graph = _core._plan_load(payload, meta["backend"])
        else:
            graph = _core._graph_deserialize(payload, meta["backend"])
    except (ValueError, KeyError, TypeError, IndexError, struct.error, pickle.UnpicklingError, EOFError) as e:
        _logs.log("guards", "%s: kept trace %s not used: %s", cf._name, name, e)
        return None
    return meta, graph


# ---------------------------------------------------------------- kept modes
MODES = ("eager", "npc")


def store_mode(cf, key, mode, traced, eager):
    """Writes eager mode `mode` decided for `cf`'s guard key `key` (its typical traced and
    eager call times) as a disk cache entry (Note [modes kept across processes]); False when
    it is not kept."""
    if mode not in MODES:
        return False
    try:
        name, kbytes = disk_name(cf, key, ".mode")
        if name is None:
            return False
        meta = {"key": kbytes, "mode": mode, "traced": float(traced), "eager": float(eager)}
        body = _MODE_MAGIC + struct.pack("<I", FORMAT) + pickle.dumps(meta, protocol=4)
        if not _core._cache_entry_write(name, body):
            return False
    except Exception as exc:  # noqa: BLE001 - a cache: the call's result stands whatever it meets
        _logs.log("fallback", "%s: mode not kept: %r", cf._name, exc)
        return False
    _logs.log("fallback", "%s: mode %r kept in %s as %s", cf._name, mode, config.cache_dir, name)
    return True


def load_mode(cf, key):
    """The eager mode an earlier process decided for `cf`'s guard key `key`, as (mode, traced
    seconds, eager seconds), or None (none kept, or an entry that is not valid)."""
    try:
        name, kbytes = disk_name(cf, key, ".mode")
        if name is None:
            return None
        body = _core._cache_entry_read(name)
        if body is None or not body.startswith(_MODE_MAGIC):
            return None
        start = len(_MODE_MAGIC) + 4
        if len(body) < start or struct.unpack_from("<I", body, len(_MODE_MAGIC))[0] != FORMAT:
            return None
        meta = _Loader(io.BytesIO(body[start:])).load()
        if (type(meta) is not dict or meta.get("key") != kbytes or meta.get("mode") not in MODES
                or type(meta.get("traced")) is not float or type(meta.get("eager")) is not float):
            return None
        return meta["mode"], meta["traced"], meta["eager"]
    except Exception as exc:  # noqa: BLE001 - a damaged entry is ignored, never raised into the call
        _logs.log("fallback", "%s: kept mode not used: %r", cf._name, exc)
        return None
