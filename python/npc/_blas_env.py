"""OpenBLAS kernel selection, set before npc._core (and its OpenBLAS) is loaded.

Note [OpenBLAS core type]
Debian's OpenBLAS (0.3.21, DYNAMIC_ARCH) does not recognise recent Xeon models and falls
back to its generic "Prescott" (SSE3) kernels, 2-5x slower than the AVX-512 ones on the
same machine. When the user has not chosen (OPENBLAS_CORETYPE unset), pick the kernels
from the CPU's flags: SkylakeX with AVX-512F, Haswell with AVX2 and FMA. A correctly
detected CPU of those families gets those same kernels.
"""
import os


def _choose_core():
    if "OPENBLAS_CORETYPE" in os.environ:
        return
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
            else:
                return
    except OSError:
        return
    if "avx512f" in flags and "avx512bw" in flags and "avx512vl" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif "avx2" in flags and "fma" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"


_choose_core()
