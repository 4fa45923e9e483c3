"""A fixed-seed budget of the differential fuzzer (docs/fuzzing.md), run by `make test`.

SEEDS programs, in CHUNKS tests (so that pytest-xdist spreads them over the cores), each
chunk in its own worker process (a crash fails the test instead of killing pytest). The
programs are the same on every machine (fuzzgen builds them from the seed alone). A
failing chunk shrinks its first failure and fails with the reproducer's text, followed
by every failing seed of the chunk (`python tests/fuzz/fuzz.py --seed S --seconds 0`
style reruns: see docs/fuzzing.md)."""
import os
import time

import pytest

import fuzzrun
import fuzzshrink

SEEDS = 48
CHUNKS = 8
SHRINK_SECONDS = float(os.environ.get("NPC_FUZZ_SHRINK_SECONDS", 60))


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_fuzz_fixed_seeds(chunk, tmp_path):
    seeds = range(chunk, SEEDS, CHUNKS)
    worker = fuzzrun.Worker(env={"NPC_CACHE_DIR": os.environ.get("NPC_CACHE_DIR", str(tmp_path))})
    failures = []
    try:
        for seed in seeds:
            found, prog, err = fuzzrun.run_job(worker, {"seed": seed})
            assert err is None, f"fuzzer error on seed {seed}:\n{err}"
            failures += [(seed, f, prog) for f in found]
        if not failures:
            return
        seed, f, prog = failures[0]
        t0 = time.time()
        small, last, tries = fuzzshrink.shrink(worker, prog, f, SHRINK_SECONDS)
        name, text = fuzzshrink.reproducer(small, last)
    finally:
        worker.close()
    listing = "\n".join(f"  seed {s}: {g['mode']}, call {g['call']}: {g['kind']}: {g['text'][:200]}"
                        for s, g, _ in failures)
    pytest.fail(f"npc differs from NumPy on {len({s for s, _, _ in failures})} of {len(seeds)} programs.\n"
                f"Seed {seed} shrunk in {tries} runs ({time.time() - t0:.0f} s), as tests/fuzz/found/{name}:\n\n"
                f"{text}\nEvery failure of this chunk:\n{listing}", pytrace=False)
