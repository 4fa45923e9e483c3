"""``npc.config``: run-time settings of npc, one small object that every layer extends.

A layer adds its settings with :func:`register` (name, default, docstring); users read and
set them as attributes (``npc.config.strict_fallback = True``) or for a block of code with
``with npc.config.patch(strict_fallback=True): ...``. Unknown names raise AttributeError, so
a typo never passes silently.
"""
import contextlib
import os

__all__ = ["config"]


class Config:
    """npc's settings (see ``npc.config.describe()``).

    Settings
    --------
    strict_fallback : bool, default False (True when NPC_STRICT_FALLBACK=1)
        Raise :class:`npc.FallbackError` instead of running an operation on NumPy (the
        conformance tests of the native ops run this way).
    """

    # Settings live in the instance __dict__, so reading one is a plain attribute lookup
    # (the fallback reads strict_fallback on every call).

    def __init__(self):
        object.__setattr__(self, "_docs", {})

    @property
    def _values(self):
        return {k: v for k, v in vars(self).items() if k in self._docs}

    def register(self, name, default, doc=""):
        """Adds a setting (used by npc's layers; registering twice keeps the first value)."""
        if name not in self._docs:
            object.__setattr__(self, name, default)
        self._docs[name] = doc

    def __getattr__(self, name):
        raise AttributeError(f"npc.config has no setting '{name}'")

    def __setattr__(self, name, value):
        if name not in self._docs:
            raise AttributeError(f"npc.config has no setting '{name}'")
        object.__setattr__(self, name, value)

    def __dir__(self):
        return sorted(set(self._values) | {"register", "patch", "describe", "as_dict"})

    def as_dict(self):
        """Current settings (dict: name -> value)."""
        return dict(self._values)

    def describe(self):
        """One line per setting: name, value and what it does."""
        return "\n".join(f"{k} = {v!r}: {self._docs.get(k, '')}" for k, v in sorted(self._values.items()))

    @contextlib.contextmanager
    def patch(self, **settings):
        """Context manager that sets `settings` for the duration of a ``with`` block."""
        old = {}
        try:
            for k, v in settings.items():
                old[k] = getattr(self, k)
                setattr(self, k, v)
            yield self
        finally:
            for k, v in old.items():
                object.__setattr__(self, k, v)

    def __repr__(self):
        return "npc.config(" + ", ".join(f"{k}={v!r}" for k, v in sorted(self._values.items())) + ")"


config = Config()
config.register("strict_fallback", os.environ.get("NPC_STRICT_FALLBACK", "") not in ("", "0"),
                "raise npc.FallbackError instead of running an operation on NumPy "
                "(default from the NPC_STRICT_FALLBACK environment variable)")
