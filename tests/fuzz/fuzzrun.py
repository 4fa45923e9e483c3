"""Worker processes of the fuzzer (crash isolation) and the loop that runs seeds on them.

A program that kills its worker (a signal, an abort) or runs past the time limit is run
again alone in a fresh worker: if that one dies too, the finding is a confirmed crash (or
hang) of the mode that was running."""
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JOB_TIMEOUT = 180.0  # seconds for one program in every mode


class Worker:
    """One `fuzzworker.py` process. `run(job)` returns its answer, or a crash/hang report."""

    def __init__(self, env=None):
        self.log = tempfile.NamedTemporaryFile("w+", prefix="npc-fuzz-worker-", suffix=".log", delete=False)
        # NPC_VERIFY: the IR is verified after every pass (a failure is an exception).
        self.env = {"NPC_VERIFY": "1", **os.environ, **(env or {})}
        self.proc = None
        self.next_id = 0

    def _start(self):
        self.proc = subprocess.Popen([sys.executable, "-u", os.path.join(HERE, "fuzzworker.py")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     text=True, bufsize=1, env=self.env)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = ""
        msg = self._read(120.0)
        if not msg or "ready" not in msg:
            raise RuntimeError(f"fuzz worker did not start: {self._tail()}")

    def _read(self, timeout):
        """The next JSON line, or None at EOF / timeout ("timeout" string)."""
        deadline = time.time() + timeout
        while "\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                return "timeout"
            if not self.sel.select(left):
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536).decode()
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split("\n", 1)
        return json.loads(line)

    def _tail(self):
        try:
            self.log.flush()
            with open(self.log.name) as f:
                return f.read()[-1500:]
        except OSError:
            return ""

    def _forget(self):
        """Closes the pipes and the selector of the (dead or killed) worker process: left to
        the garbage collector they warn (ResourceWarning) inside whatever test runs then."""
        self.sel.close()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        self.proc = None

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(10)
            except OSError:
                pass
            self._forget()

    def run(self, job, timeout=JOB_TIMEOUT):
        """Run one job; {"found": [...]} or {"crash": ..., "mode": ...} or {"hang": ...}."""
        if self.proc is not None and self.proc.poll() is not None:
            self._forget()
        if self.proc is None:
            self._start()
        self.next_id += 1
        job = dict(job, id=self.next_id)
        mode = None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        deadline = time.time() + timeout
        while True:
            msg = self._read(max(0.0, deadline - time.time()))
            if msg == "timeout":
                self.stop()
                return {"hang": True, "mode": mode, "text": f"no answer within {timeout:.0f} s"}
            if msg is None:
                rc = self.proc.wait(10)
                tail = self._tail()
                self._forget()
                return {"crash": rc, "mode": mode, "text": f"worker died (exit status {rc}); stderr: {tail[-600:]}"}
            if "mode" in msg and "found" not in msg:
                mode = msg["mode"]
                continue
            return msg

    def close(self):
        self.stop()
        self.log.close()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass


def death_finding(answer):
    kind = "crash" if "crash" in answer else "hang"
    return {"mode": answer.get("mode") or "?", "call": -1, "kind": kind, "text": answer["text"]}


def run_job(worker, job, confirm=True):
    """(findings, program or None, error text or None) of one job; a worker death is run
    again alone in a fresh worker to confirm it."""
    ans = worker.run(job)
    if "crash" in ans or "hang" in ans:
        if confirm:
            fresh = Worker(worker.env)
            try:
                again = fresh.run(job)
            finally:
                fresh.close()
            if "crash" not in again and "hang" not in again:
                return again.get("found", []), again.get("prog"), again.get("error")
            ans = again
        prog = job.get("prog")
        if prog is None and "seed" in job:
            sys.path.insert(0, HERE)
            import fuzzgen
            prog = fuzzgen.generate(job["seed"])
        return [death_finding(ans)], prog, None
    return ans.get("found", []), ans.get("prog"), ans.get("error")


def signature(f):
    """What a shrunk program must keep showing: the mode, the kind of difference, and for
    exceptions the two outcomes' types."""
    sig = [f["mode"], f["kind"]]
    if f["kind"] == "exception":
        import re
        sig += re.findall(r"raises (\w+)|(returns)", f["text"]).__repr__(),
    return tuple(sig)
