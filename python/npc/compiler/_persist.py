"""Traces kept across processes: Note [persisted traces].

`_reads.Recorder` watches a trace for what it reads; `store` writes a finished entry's graph or
plan with what it was made from; `load` finds an entry for a call in a new process and checks
that everything it was made from is still the same.
"""
import functools
import hashlib
import io
import os
import pickle
import struct
import sys
import types

import numpy as _np

from .. import _core
from .._config import config
from . import _logs
from ._reads import _ABSENT, _code_hash, _file_hash, _namespace, _value_key, plain, space_key
from ._state import _NPC_DIR

# Note [persisted traces]
# The first call of a compiled loop traces it (running its Python, recording every operation)
# and lowers what it recorded; the kernels come from the disk cache (Note [disk cache] in
# src/fusion/jit.cpp), but tracing a loop of a million operations takes seconds in every new
# process. With config.trace_cache on (the default; NPC_TRACE_CACHE=0 turns it off), the
# entry a first trace makes (its graph, or the plan of a cut loop: Note [plan serialization]
# in src/tracer/plan_io.cpp) is written to the disk cache as "<32 hex>.trace", and the first
# call of the same function in a later process loads it instead of tracing.
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
# - for the code outside npc, NumPy, the standard library and installed packages (the user's
#   own), the module globals each such function may read (its code's names): modules,
#   functions (by module, name, file and line; no closures; plain default values), classes
#   (with their static and class methods, properties and namedtuple fields), builtins, ufuncs
#   and npc's and NumPy's function objects by name, numbers, strings and lists/tuples of them
#   by value (compared as pickled bytes: -0.0 is not 0.0, (1, 2) is not (1.0, 2.0)), read as
#   the code starts and again after the trace (a global the trace changes is not kept);
#   classes with their inherited attributes. A global of any other kind (a dict, an object,
#   an array, a bound method, a function with attributes, an lru_cache or vectorized
#   function) makes the trace unfit, since its contents are not known to be the same in
#   another process; so do reads the names cannot show (globals(), vars(), getattr(),
#   sys.modules, a module __getattr__, imports inside a function), globals that are not the
#   dict of the module named by their __name__ (a module replaced in sys.modules, a script
#   run by another tool as __main__), classes with a metaclass, and modules or classes held
#   in the compiled function's closure. Every name of the user's code that ran is looked up in
#   every user module and class reached (a helper returning a class whose attribute the
#   caller reads), with the special methods the user's classes define (__init__, __call__,
#   operators: Python calls them without the code naming them); reads through __globals__,
#   frames, __closure__ or __hash__ make the trace unfit (_reads._DYNAMIC_READS);
# - npc's, NumPy's and the builtins' attributes named by the user's code, compared by identity
#   (_reads.space_key: a function replaced at import, np.sum = f or builtins.round = f, is
#   seen; values of other kinds by type); NumPy's error and print settings and Python's
#   int-digit limit are in the entry's name (_process_state);
# - the attributes of the library modules and classes those globals reach (sys, os, math, a
#   library's module or plain class, and those their attributes reach; npc's, NumPy's and
#   the builtins' as above): every name of the user's code that ran is
#   looked up in each of them, since which name is read from which module is not followed
#   (`m = sys; m.argv` and a helper returning a module are covered too), and what is there
#   is compared as globals are (sys.argv by value: a later process with other arguments
#   traces again; sys.float_info as a tuple) or, for functions and descriptors, by module
#   and name. An object (os.environ, sys.stdout) or a function the user's code may not call
#   (below) makes the trace unfit. A name a library module lacks is taken to be lacking in a
#   later process, and a library class with a metaclass is not looked into.
# Calls (sys.monitoring's CALL events, callback(code, offset, callable, arg0)). The call sites
# of npc, NumPy, the standard library and installed packages return DISABLE on their first
# event, so they cost once per trace; the user's code's are checked on every call, a lookup
# by identity once the callable was allowed (Recorder._ok). The trace is unfit when the
# user's code calls, or reads as a global, builtin or library attribute (map(os.getenv, xs)
# calls it from C, where no event is seen), anything not known to depend only on its
# arguments and to change nothing a later call would see (_verdict):
# - allowed: the user's own functions, lambdas, generators and classes whose bases are all
#   allowed (their code is checked as it runs; a function wrapped by functools.partial,
#   lru_cache or npc.compile is recorded as if it ran, a cached result not running it);
#   npc's and NumPy's functions, ufuncs, classes and array methods, except random numbers
#   (numpy.random, npc.random), files (load, loadtxt, genfromtxt, fromfile, fromregex,
#   memmap, save*, tofile, dump, numpy.lib.format, ctypeslib), the process's state (seterr,
#   geterr, set_printoptions, seed...) and npc.compiler/npc.config/logging; vectorize,
#   frompyfunc, apply_along_axis and fromfunction only with an allowed function (a
#   frompyfunc ufunc made before the trace: never); the builtins abs, all, any, ascii, bin,
#   callable, chr, divmod, format, hex, isinstance, issubclass, len, max, min, next, oct,
#   ord, pow, print, repr, round, sorted, sum, iter and map/filter with an allowed function,
#   hasattr of no module or class, and every builtin class (int, float, complex, bool, str,
#   bytes, tuple, list, dict, set, frozenset, range, enumerate, zip, reversed, slice, super,
#   exceptions...) with its methods (list.append, dict.get, str.format, int.bit_length)
#   except __hash__; the functions and classes of math, cmath, operator, functools,
#   itertools, collections, bisect, heapq, copy, fractions, numbers, abc and typing (reduce,
#   partial, starmap, attrgetter and methodcaller with allowed arguments). print's output,
#   like every effect of the traced Python, happens while tracing only, as for the replays
#   within one process.
# - not allowed (logged under "guards" with the callable's name): open, input, eval, exec,
#   compile, globals, locals, vars, dir, getattr, setattr, delattr, id, hash (strings'
#   hashes differ between processes), breakpoint, __import__; time, os, sys's functions,
#   random, datetime's now, uuid, socket and the rest of the standard library; other
#   libraries' functions, classes and C functions; methods of objects of other classes;
#   get_num_threads, datetime_as_string, datetime64/timedelta64 of "now" or "today",
#   operator.attrgetter and methodcaller, and str.format/format_map with a format string
#   that reads attributes or items of its arguments ("{0.environ[X]}").
# Events are process-wide: another thread's code, and the user's code that started before
# the trace (a generator resumed), are recorded when they first call something, as the
# user's code is. Once a trace is unfit its recorder turns its events off.
# Only a function's first trace is stored (its guard state is then the initial one, which a
# new process also starts from), and only a plain one: no graph breaks, captured arrays,
# attribute guards, changed containers, results viewing the arguments, Python warnings, host
# calls (numpy.random) or runtime scalars made static by a retrace. Entries are files of
# the kernel cache, read and written by its own code (_core._cache_entry_read/_write: Note
# [cache trust], a sealed trailer, trimmed to cache_size_limit and emptied by clear_cache()
# with the kernels, Note [cache size]), and the payload is read by
# npc's own validating readers; the metadata is unpickled with a loader that accepts only
# plain values. What is still assumed (docs/compile.md): what the checks above cannot see,
# that is values reached other than through the user's code's globals, library attributes
# and calls: what installed packages' code reads (its calls and globals are not watched:
# the user's code calling into it is already unfit unless it is npc's or NumPy's), C code
# called by an allowed function (sorted(xs, key=f) with an f no global holds), the iteration
# order of sets of strings (it follows the process's hash seed), and the results of
# module-level code (a global computed at import from the environment is compared by
# value, but a later process may compute the same value in another way).

# Note [modes kept across processes]
# Note [slow graph breaks] in _timing.py times the calls of a guard key, traced against eager,
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

FORMAT = 2
_MAGIC = b"NPCTRACE"
_MODE_MAGIC = b"NPCMODE1"

config.register("trace_cache", os.environ.get("NPC_TRACE_CACHE", "1") != "0",
                "keep first traces in cache_dir and load them in later processes instead of tracing "
                "($NPC_TRACE_CACHE; Note [persisted traces])")
config.register("mode_cache", os.environ.get("NPC_MODE_CACHE", "1") != "0",
                "keep eager_if_faster's eager decisions in cache_dir and follow them in later processes "
                "without tracing ($NPC_MODE_CACHE; Note [modes kept across processes])")

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


def _process_state():
    """The process state that npc's and NumPy's functions read while tracing (the error and
    print settings, which the traced code may not set but its module may have set at import;
    Python's limit on int digits in strings), or None when it is not plain."""
    state = (tuple(sorted(_np.geterr().items())), tuple(sorted(_np.get_printoptions().items())),
             getattr(sys, "get_int_max_str_digits", lambda: None)())
    return state if plain(state) else None


def disk_name(cf, key, suffix=".trace"):
    """The file name of `cf`'s entry for guard key `key` (a kept trace, or with suffix
    ".mode" a kept mode: Note [modes kept across processes]), and the key's bytes (None, None
    when the key cannot be kept)."""
    from ._guards import portable_key, portable_part
    key = cf._own_key(key)  # (Note [globals read while tracing]: a later process reaches them anew)
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
        kbytes = pickle.dumps(portable_part(key), protocol=4)
        state = _process_state()
        if state is None:
            return None, None
        ident = pickle.dumps((_environment(), state, repr(sorted(config.as_dict().items())),
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


def store(cf, kbytes, name, evidence, entry, payload, kind, consts, last_shapes, last_ints, reach=()):
    """Writes `entry` (its graph or plan bytes `payload`, its captured constants `consts`) as
    disk cache entry `name`; `reach`: the (module, path) names of the globals the trace's code
    reached, guarded after a load as after the trace (Note [globals read while tracing] in
    _reach.py)."""
    files, glob = evidence
    meta = {"kind": kind, "backend": entry.backend, "key": kbytes, "files": files, "globals": glob, "constants": consts,
            "reach": [(m, tuple(p)) for m, p in reach],
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
        for m, p in meta["reach"]:
            if type(m) is not str or type(p) is not tuple or not p or not all(type(x) is str for x in p):
                return False
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
            if d is None or type(v) is not bytes or pickle.dumps(space_key(where, d.get(gname, _ABSENT)),
                                                                 protocol=4) != v:
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
