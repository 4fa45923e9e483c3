"""Open-ended differential fuzzing of npc against NumPy (`make fuzz SECONDS=N`).

Runs random programs (fuzzgen) in worker processes (fuzzrun), one per core, for the given
time; then shrinks the failures, a few per signature (fuzzshrink), writes each shrunk
program as a regression test under tests/fuzz/found/ and prints a summary. See
docs/fuzzing.md.
"""
import argparse
import collections
import json
import os
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzzexec  # noqa: E402
import fuzzrun  # noqa: E402
import fuzzshrink  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=60.0, help="time spent running programs (shrinking comes after)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=None, help="first seed (default: from the clock)")
    p.add_argument("--seeds", default=None, help="comma-separated seeds to run (instead of --seconds of new ones)")
    p.add_argument("--modes", default=",".join(fuzzexec.CHECKED), help="comma-separated rows of fuzzexec.MODES")
    p.add_argument("--per-signature", type=int, default=2, help="failures shrunk per signature")
    p.add_argument("--shrink-seconds", type=float, default=90.0, help="time limit of one shrink")
    p.add_argument("--out", default=fuzzshrink.FOUND_DIR)
    p.add_argument("--log", default=None, help="append every failure (JSON lines) to this file")
    a = p.parse_args(argv)
    modes = [m for m in a.modes.split(",") if m]
    first = a.seed if a.seed is not None else int(time.time() * 1000) % (2 ** 31)
    print(f"fuzz: {a.workers} workers, {a.seconds:.0f} s, seeds {a.seeds or f'from {first}'}, modes {modes}",
          flush=True)

    given = [int(x) for x in a.seeds.split(",")] if a.seeds else None
    if given:
        a.seconds = float("inf")
    lock = threading.Lock()
    next_seed = [first]
    stats = collections.Counter()
    failures = []  # (seed, finding, program)
    stop_at = time.time() + a.seconds

    def loop():
        w = fuzzrun.Worker()
        try:
            while time.time() < stop_at:
                with lock:
                    if given is not None:
                        if not given:
                            return
                        seed = given.pop(0)
                    else:
                        seed = next_seed[0]
                        next_seed[0] += 1
                try:
                    found, prog, err = fuzzrun.run_job(w, {"seed": seed, "modes": modes})
                except Exception:  # a defect of the fuzzer: report it, keep fuzzing
                    found, prog, err = [], None, traceback.format_exc()
                with lock:
                    stats["programs"] += 1
                    if err:
                        stats["fuzzer errors"] += 1
                        print(f"seed {seed}: fuzzer error\n{err}", flush=True)
                    for f in found:
                        stats[f"{f['mode']}: {f['kind']}"] += 1
                        failures.append((seed, f, prog))
                        print(f"seed {seed}: {f['mode']}, call {f['call']}: {f['kind']}: {f['text'][:160]}",
                              flush=True)
                        if a.log:
                            with open(a.log, "a") as fh:
                                fh.write(json.dumps({"seed": seed, "finding": f}) + "\n")
        finally:
            w.close()

    threads = [threading.Thread(target=loop) for _ in range(a.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # Shrink a few failures per signature, both workers in parallel.
    by_sig = collections.defaultdict(list)
    for seed, f, prog in failures:
        by_sig[fuzzrun.signature(f)].append((seed, f, prog))
    queue = [item for items in by_sig.values() for item in items[:a.per_signature]]
    written = {}

    def shrinker():
        w = fuzzrun.Worker()
        try:
            while True:
                with lock:
                    if not queue:
                        return
                    seed, f, prog = queue.pop(0)
                small, last, tries = fuzzshrink.shrink(w, prog, f, a.shrink_seconds)
                path = fuzzshrink.write_reproducer(small, last, a.out)
                with lock:
                    written[path] = (seed, last)
                    print(f"seed {seed}: shrunk in {tries} runs: {path}", flush=True)
        finally:
            w.close()

    threads = [threading.Thread(target=shrinker) for _ in range(a.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    print("\n== summary ==")
    print(f"programs run: {stats['programs']} (seeds {a.seeds or f'{first}..{next_seed[0] - 1}'})")
    failing = len({s for s, _, _ in failures})
    print(f"failing programs: {failing}")
    for key, n in sorted(stats.items()):
        if key != "programs":
            print(f"  {key}: {n}")
    if written:
        print("shrunk reproducers:")
        for path, (seed, f) in sorted(written.items()):
            print(f"  {os.path.relpath(path)}  (seed {seed}, {f['mode']}: {f['kind']})")
    if stats["fuzzer errors"]:
        print(f"fuzzer errors: {stats['fuzzer errors']} (see above)")
    return 1 if failures or stats["fuzzer errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
