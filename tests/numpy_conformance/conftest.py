"""Conformance tests run npc natively: every function under test must have its own
implementation, so the NumPy fallback raises instead of passing a test with NumPy's answer.
A test (or module) marked ``allow_fallback`` may fall back: one that exercises the fallback
itself, object-dtype operands, or functions outside npc's native set."""
import pytest

import npc


@pytest.fixture(autouse=True)
def strict_fallback(request):
    if request.node.get_closest_marker("allow_fallback"):
        yield
        return
    with npc.config.patch(strict_fallback=True):
        yield
