"""The one harness of every Python suite here (Tests/night, Tests/firestore-loop,
Tests/firestore-steps, Tests/simulator...): Python's unittest, one line a test (`ok   NAME` or
`FAIL NAME: why`), then `N passed, M failed`, and exit status 1 on any failure; and the one
assertion helper, Case, whose expectations say what was compared.

    import harness                      (each suite puts Tests/ on sys.path)
    class Something(harness.Case): ...
    if __name__ == "__main__": harness.main()
"""
import hashlib
import os
import subprocess
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NIGHT = os.path.join(ROOT, "jobs", "night")
if NIGHT not in sys.path:
    sys.path.insert(0, NIGHT)
sys.dont_write_bytecode = True


class Case(unittest.TestCase):
    maxDiff = None

    def expect(self, what, actual, expected):
        if actual != expected:
            self.fail(f"{what}: got {actual!r}, expected {expected!r}")

    def expect_in(self, what, needle, haystack):
        if needle not in haystack:
            self.fail(f"{what}: {needle!r} not in {haystack!r}")

    def expect_exit(self, done, status, said=None):
        """A finished process (CompletedProcess) with its status and, when given, a line of its
        standard error containing `said`."""
        err = done.stderr if isinstance(done.stderr, str) else (done.stderr or b"").decode("utf-8", "replace")
        if done.returncode != status:
            self.fail(f"exit status {done.returncode}, expected {status}; stderr:\n{err[-3000:]}")
        if said is not None and said not in err:
            self.fail(f"stderr does not say {said!r}:\n{err[-3000:]}")


def tree(directory):
    """Every entry under directory with its bytes' digest (a link: its target), for
    `nothing changed` checks: a failed run must leave the tree exactly as it was."""
    out = {}
    for parent, dirs, names in os.walk(directory):
        for name in dirs + names:
            path = os.path.join(parent, name)
            key = os.path.relpath(path, directory)
            if os.path.islink(path):
                out[key] = "-> " + os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as f:
                    out[key] = hashlib.sha256(f.read()).hexdigest()
            else:
                out[key] = "dir"
    return out


def run(argv, timeout=120, **kwargs):
    """A process run to its end within timeout seconds (a bound, not a timing assertion)."""
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, **kwargs)


class _Result(unittest.TextTestResult):
    def addSuccess(self, test):
        super().addSuccess(test)
        if not any(t is test for t, _ in self.failures + self.errors):
            print(f"ok   {test.id().split('.', 1)[-1]}", flush=True)

    def _failed(self, test, err):
        kind, error = err[0], err[1]
        said = str(error) if kind is AssertionError else f"{kind.__name__}: {error}"
        print(f"FAIL {test.id().split('.', 1)[-1]}: {said}", flush=True)
        if os.environ.get("HARNESS_VERBOSE") or kind is not AssertionError:
            print(self._exc_info_to_string(err, test).rstrip(), flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._failed(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._failed(test, err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print(f"skip {test.id().split('.', 1)[-1]}: {reason}", flush=True)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._failed(subtest, err)


def main(module="__main__"):
    started = time.monotonic()
    names = [a for a in sys.argv[1:] if not a.startswith("-")]
    loader = unittest.TestLoader()
    suite = loader.loadTestsFromNames(names, sys.modules[module]) if names else \
        loader.loadTestsFromModule(sys.modules[module])
    result = unittest.TextTestRunner(stream=open(os.devnull, "w"), resultclass=_Result, verbosity=0).run(suite)
    failed, skipped = len(result.failures) + len(result.errors), len(result.skipped)
    print(f"{result.testsRun - failed - skipped} passed, {failed} failed"
          + (f", {skipped} skipped" if skipped else "") + f" ({time.monotonic() - started:.1f}s)")
    sys.exit(1 if failed else 0)
