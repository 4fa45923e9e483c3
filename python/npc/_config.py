"""``npc.config``: run-time settings of npc, one small object that every layer extends.

A layer adds its settings with :func:`register` (name, default, docstring); users read and
set them as attributes (``npc.config.strict_fallback = True``) or for a block of code with
``with npc.config.patch(strict_fallback=True): ...``. Unknown names raise AttributeError, so
a typo never passes silently.
"""
import contextlib

__all__ = ["config"]


class Config:
    """npc's settings (see ``npc.config.describe()``).

    Settings
    --------
    strict_fallback : bool, default False
        Raise :class:`npc.FallbackError` instead of running an operation on NumPy (the
        conformance tests of the native ops run this way).
    """

    __slots__ = ("_values", "_docs")

    def __init__(self):
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_docs", {})

    def register(self, name, default, doc=""):
        """Adds a setting (used by npc's layers; registering twice keeps the first value)."""
        self._values.setdefault(name, default)
        self._docs[name] = doc

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"npc.config has no setting '{name}'") from None

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError(f"npc.config has no setting '{name}'")
        self._values[name] = value

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
                self._values[k] = v

    def __repr__(self):
        return "npc.config(" + ", ".join(f"{k}={v!r}" for k, v in sorted(self._values.items())) + ")"


config = Config()
config.register("strict_fallback", False,
                "raise npc.FallbackError instead of running an operation on NumPy")
