"""Registers npc with Dask once ``dask.array`` is imported, without importing Dask itself.

``import npc`` calls :func:`install`: when ``dask.array`` is already loaded, npc registers
now (``npc.dask.register``); otherwise a finder placed first on ``sys.meta_path`` waits for the
import of ``dask.array`` and registers right after that package has run. Programs that never
use Dask pay one finder lookup per import and never load Dask (Note [Dask registration] in
python/npc/dask.py).
"""
import importlib.abc
import sys


def _register():
    mod = sys.modules.get("npc.dask")
    if mod is not None and getattr(mod, "register", None) is None:
        return  # npc.dask itself is importing dask.array; it registers when it has run
    from . import dask as npc_dask
    npc_dask.register()


class _RegisteringLoader(importlib.abc.Loader):
    """The loader of ``dask.array``, registering npc once the package has run."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _remove_finder()
        _register()

    def __getattr__(self, name):  # get_source, is_package, resource readers: the real loader's
        return getattr(self._loader, name)


class _DaskArrayFinder(importlib.abc.MetaPathFinder):
    """Finds ``dask.array`` through the other finders and wraps its loader."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "dask.array":
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


def _remove_finder():
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _DaskArrayFinder)]


def install():
    """Registers npc with Dask now when ``dask.array`` is loaded, else when it gets imported."""
    mod = sys.modules.get("dask.array")
    if mod is not None and getattr(mod, "Array", None) is not None:
        _register()
    elif not any(isinstance(f, _DaskArrayFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _DaskArrayFinder())
