"""A worker process of the fuzzer: reads jobs (JSON lines) on stdin, runs them, answers on
its original stdout. A job is {"id", "seed"} (generate and check that program) or {"id",
"prog", "modes"} (check a given program, while shrinking). Before each mode it reports
{"id", "mode"} so that the parent knows which mode was running if the process dies.

The program's own output (Python or C level) goes to stderr: file descriptor 1 is
redirected there and the answers use a duplicate of the original stdout."""
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import fuzzexec
    import fuzzgen

    def say(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    say({"ready": os.getpid()})
    for line in sys.stdin:
        job = json.loads(line)
        t0 = time.time()
        try:
            prog = job["prog"] if "prog" in job else fuzzgen.generate(job["seed"])
            modes = job.get("modes") or fuzzexec.CHECKED
            found = []
            for mode in modes:
                say({"id": job["id"], "mode": mode})
                found += fuzzexec.check_program(prog, [mode])
            say({"id": job["id"], "found": found, "prog": prog if "seed" in job else None,
                 "secs": round(time.time() - t0, 3)})
        except Exception:  # a defect of the fuzzer itself, reported as such
            say({"id": job["id"], "error": traceback.format_exc()[-2000:], "secs": round(time.time() - t0, 3)})


if __name__ == "__main__":
    main()
