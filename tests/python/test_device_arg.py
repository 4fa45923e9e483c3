"""``device=`` other than "cpu" raises NumPy's error everywhere npc takes it (npc has no
device backend yet, and a device is never ignored)."""
import numpy as np
import pytest

import npc

_CALLS = {
    "empty": lambda m, d: m.empty(3, device=d),
    "zeros": lambda m, d: m.zeros(3, device=d),
    "ones": lambda m, d: m.ones(3, device=d),
    "full": lambda m, d: m.full(3, 1.5, device=d),
    "empty_like": lambda m, d: m.empty_like(m.zeros(2), device=d),
    "zeros_like": lambda m, d: m.zeros_like(m.zeros(2), device=d),
    "ones_like": lambda m, d: m.ones_like(m.zeros(2), device=d),
    "full_like": lambda m, d: m.full_like(m.zeros(2), 1, device=d),
    "arange": lambda m, d: m.arange(3, device=d),
    "linspace": lambda m, d: m.linspace(0, 1, 3, device=d),
    "eye": lambda m, d: m.eye(2, device=d),
    "asarray": lambda m, d: m.asarray([1, 2], device=d),
    "asanyarray": lambda m, d: m.asanyarray([1, 2], device=d),
    "from_dlpack": lambda m, d: m.from_dlpack(np.zeros(2), device=d),
    "fft.fftfreq": lambda m, d: m.fft.fftfreq(4, device=d),
    "to_device": lambda m, d: m.zeros(2).to_device(d),
}


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 (NumPy's exception is the expectation)
        return type(e), str(e)
    r = np.asarray(r)
    return "ok", r.shape, r.dtype  # (empty arrays: no values to compare)


@pytest.mark.parametrize("device", ["cpu", None, "cuda", "gpu", "CPU", 0, 1.5, (1, 0)])
@pytest.mark.parametrize("name", sorted(_CALLS))
def test_device_argument_as_numpy(name, device):
    fn = _CALLS[name]
    assert _outcome(lambda: fn(npc, device)) == _outcome(lambda: fn(np, device))


def test_zeros_on_cuda_is_not_silently_cpu():
    with pytest.raises(ValueError, match='Only "cpu" is allowed, but received: cuda'):
        npc.zeros(3, device="cuda")
