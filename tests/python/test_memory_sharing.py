"""Views share memory with their source; copies do not (fails if views stop sharing)."""
import numpy as np

import npc


def test_views_share_memory_and_writes_show():
    a = npc.zeros((4, 5))
    for v in (a.T, a.reshape(20), a.reshape(2, 10), a.transpose(1, 0), a.view(np.int64), a.real):
        assert np.shares_memory(np.asarray(v), np.asarray(a))
    a.reshape(20).fill(2.0)
    assert np.asarray(a).sum() == 40.0
    a.T.fill(1.0)
    assert np.asarray(a).sum() == 20.0


def test_copies_do_not_share():
    a = npc.arange(10.0)
    for c in (a.copy(), a.astype(np.float32), npc.array(a), a.copy("F")):
        assert not np.shares_memory(np.asarray(c), np.asarray(a))


def test_numpy_buffers_are_shared_both_ways():
    src = np.arange(12.0).reshape(3, 4)
    a = npc.asarray(src)
    src[1, 1] = -5
    assert np.asarray(a)[1, 1] == -5
    back = np.asarray(a)
    back[2, 3] = 99
    assert src[2, 3] == 99
    m = memoryview(a)
    assert m.shape == (3, 4) and m.format == "d"


def test_readonly_numpy_buffer_stays_readonly():
    src = np.arange(4.0)
    src.flags.writeable = False
    a = npc.asarray(src)
    assert not a.flags.writeable
    try:
        a.flags.writeable = True
    except ValueError:
        pass
    else:
        raise AssertionError("re-enabled writes on a read-only NumPy buffer")
